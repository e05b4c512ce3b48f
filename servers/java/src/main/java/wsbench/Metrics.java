package wsbench;

import io.prometheus.metrics.core.datapoints.CounterDataPoint;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.Gauge;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.instrumentation.jvm.JvmMetrics;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.IOException;
import java.io.OutputStream;

/** The counters of docs/protocol.md ("GET /metrics"), under the Node and Go servers' names, with the JVM's process metrics. */
final class Metrics {
  final PrometheusRegistry registry = new PrometheusRegistry();
  final Counter messages = byFormatTest("wsbench_messages_total", "Messages answered with ACK or a payload");
  final Counter codecSeconds = byFormatTest("wsbench_codec_seconds_total", "Seconds in the codec alone");
  final Counter decodeErrors = byFormatTest("wsbench_decode_errors_total", "Messages answered with an error line");
  final Counter fanoutDeliveries = byFormatTest("wsbench_fanout_deliveries_total", "Publishes sent to a subscriber");
  final Counter connections = counter("wsbench_connections_total", "WebSocket connections accepted");
  final Gauge openConnections = gauge("wsbench_open_connections", "WebSocket connections open now");
  final Gauge fanoutSubscribers = gauge("wsbench_fanout_subscribers", "Fan-out subscribers connected now");
  final Counter refusedUpgrades = counter("wsbench_refused_upgrades_total", "Upgrades refused with 400 or 503");
  final Counter unauthorized = counter("wsbench_unauthorized_upgrades_total", "Upgrades refused with 401");
  final Counter refusedSchemas = counter("wsbench_refused_schemas_total", "Schema registrations refused");
  final Counter dropped = counter("wsbench_dropped_connections_total", "Connections closed unaccepted");
  final Counter protocolErrors = counter("wsbench_protocol_errors_total", "Protocol violations (closes 1002, 1007, 1009)");
  final Counter slowDropped = counter("wsbench_slow_subscribers_dropped_total", "Fan-out subscribers dropped past --max-buffered");
  final Counter replayed = counter("wsbench_fanout_replayed_total", "Publishes replayed to subscribers that came back");
  final Counter handshakeTimeouts = counter("wsbench_handshake_timeouts_total", "Connections closed with 408");
  private final PrometheusTextFormatWriter writer = PrometheusTextFormatWriter.create();

  Metrics() {
    JvmMetrics.builder().register(registry);
    // Every format and test from 0, so that a reader before the first message sees them.
    for (String format : Catalog.FORMATS) {
      for (TestDef test : Catalog.TESTS) {
        messages.labelValues(format, test.name());
        codecSeconds.labelValues(format, test.name());
      }
    }
  }

  /** The counters of one format and test, looked up once per connection rather than per message. */
  record Labelled(CounterDataPoint messages, CounterDataPoint codecSeconds, CounterDataPoint decodeErrors, CounterDataPoint deliveries) {}

  Labelled of(Codec codec, TestDef test) {
    return new Labelled(messages.labelValues(codec.name(), test.name()), codecSeconds.labelValues(codec.name(), test.name()),
        decodeErrors.labelValues(codec.name(), test.name()), fanoutDeliveries.labelValues(codec.name(), test.name()));
  }

  void write(OutputStream out) throws IOException {
    writer.write(out, registry.scrape());
  }

  private Counter byFormatTest(String name, String help) {
    return Counter.builder().name(name).help(help).labelNames("format", "test").register(registry);
  }

  private Counter counter(String name, String help) {
    return Counter.builder().name(name).help(help).register(registry);
  }

  private Gauge gauge(String name, String help) {
    return Gauge.builder().name(name).help(help).register(registry);
  }
}
