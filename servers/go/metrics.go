package main

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// The counters of docs/protocol.md ("GET /metrics"), under the Node server's names.
type metrics struct {
	registry          *prometheus.Registry
	messages          *prometheus.CounterVec
	codecSeconds      *prometheus.CounterVec
	decodeErrors      *prometheus.CounterVec
	fanoutDeliveries  *prometheus.CounterVec
	connections       prometheus.Counter
	openConnections   prometheus.Gauge
	fanoutSubscribers prometheus.Gauge
	refusedUpgrades   prometheus.Counter
	unauthorized      prometheus.Counter
	refusedSchemas    prometheus.Counter
	dropped           prometheus.Counter
	protocolErrors    prometheus.Counter
	slowDropped       prometheus.Counter
	replayed          prometheus.Counter
	handshakeTimeouts prometheus.Counter
}

func newMetrics() *metrics {
	r := prometheus.NewRegistry()
	byFormatTest := func(name, help string) *prometheus.CounterVec {
		v := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, []string{"format", "test"})
		r.MustRegister(v)
		return v
	}
	counter := func(name, help string) prometheus.Counter {
		c := prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help})
		r.MustRegister(c)
		return c
	}
	gauge := func(name, help string) prometheus.Gauge {
		g := prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: help})
		r.MustRegister(g)
		return g
	}
	m := &metrics{
		registry:          r,
		messages:          byFormatTest("wsbench_messages_total", "Messages answered with ACK or a payload"),
		codecSeconds:      byFormatTest("wsbench_codec_seconds_total", "Seconds in the codec alone"),
		decodeErrors:      byFormatTest("wsbench_decode_errors_total", "Messages answered with an error line"),
		fanoutDeliveries:  byFormatTest("wsbench_fanout_deliveries_total", "Publishes sent to a subscriber"),
		connections:       counter("wsbench_connections_total", "WebSocket connections accepted"),
		openConnections:   gauge("wsbench_open_connections", "WebSocket connections open now"),
		fanoutSubscribers: gauge("wsbench_fanout_subscribers", "Fan-out subscribers connected now"),
		refusedUpgrades:   counter("wsbench_refused_upgrades_total", "Upgrades refused with 400 or 503"),
		unauthorized:      counter("wsbench_unauthorized_upgrades_total", "Upgrades refused with 401"),
		refusedSchemas:    counter("wsbench_refused_schemas_total", "Schema registrations refused"),
		dropped:           counter("wsbench_dropped_connections_total", "Connections closed unaccepted"),
		protocolErrors:    counter("wsbench_protocol_errors_total", "Protocol violations (closes 1002, 1007, 1009)"),
		slowDropped:       counter("wsbench_slow_subscribers_dropped_total", "Fan-out subscribers dropped past --max-buffered"),
		replayed:          counter("wsbench_fanout_replayed_total", "Publishes replayed to subscribers that came back"),
		handshakeTimeouts: counter("wsbench_handshake_timeouts_total", "Connections closed with 408"),
	}
	r.MustRegister(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), collectors.NewGoCollector())
	// Every format and test from 0, so that a reader before the first message sees them.
	for _, c := range codecs {
		for _, t := range tests {
			m.messages.WithLabelValues(c.name, t.name)
			m.codecSeconds.WithLabelValues(c.name, t.name)
		}
	}
	return m
}
