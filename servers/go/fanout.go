package main

import (
	"bytes"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
)

// Fan-out (docs/protocol.md, "Fan-out"): a topic per format and test; a publisher's frames go,
// unchanged, to every subscriber of its topic.

const fanoutHeaderBytes = 24

type frame struct {
	kind int
	data []byte
}

// subscriber sends its frames from a writer goroutine, so that a slow reader holds up nobody:
// its unsent bytes are counted, and past --max-buffered it is dropped.
type subscriber struct {
	conn   *wsConn
	queue  chan frame
	queued atomic.Int64
	done   chan struct{}
	once   sync.Once
}

func (sub *subscriber) send(kind int, data []byte) bool {
	select {
	case <-sub.done:
		return false
	default:
	}
	sub.queued.Add(int64(len(data)))
	select {
	case sub.queue <- frame{kind, data}:
		return true
	default: // the queue itself is full: as slow as it gets
		sub.queued.Add(-int64(len(data)))
		return false
	}
}

func (sub *subscriber) writeLoop() {
	for {
		select {
		case <-sub.done:
			return
		case f := <-sub.queue:
			err := sub.conn.ws.WriteMessage(f.kind, f.data)
			sub.queued.Add(-int64(len(f.data)))
			if err != nil {
				sub.stop()
				return
			}
		}
	}
}

func (sub *subscriber) stop() { sub.once.Do(func() { close(sub.done) }) }

type kept struct {
	seq   int64
	frame frame
}

type topic struct {
	mu          sync.Mutex
	subscribers map[*subscriber]struct{}
	end         *frame
	kept        []kept // the last --replay measured publishes
}

type fanoutHub struct {
	s      *server
	mu     sync.Mutex
	topics map[string]*topic
}

func newFanoutHub(s *server) *fanoutHub {
	return &fanoutHub{s: s, topics: map[string]*topic{}}
}

func (h *fanoutHub) topic(t target) *topic {
	key := t.codec.name + " " + t.test.name
	h.mu.Lock()
	defer h.mu.Unlock()
	tp := h.topics[key]
	if tp == nil {
		tp = &topic{subscribers: map[*subscriber]struct{}{}}
		h.topics[key] = tp
	}
	return tp
}

// subscribe adds a subscriber, first sending it what it asked to have replayed and a kept END.
func (h *fanoutHub) subscribe(c *wsConn) {
	sub := &subscriber{conn: c, queue: make(chan frame, 65536), done: make(chan struct{})}
	c.sub = sub
	go sub.writeLoop()
	h.s.metrics.fanoutSubscribers.Inc()
	tp := h.topic(c.target)
	deliveries := h.s.metrics.fanoutDeliveries.WithLabelValues(c.target.codec.name, c.target.test.name)
	tp.mu.Lock()
	defer tp.mu.Unlock()
	if c.target.from >= 0 {
		budget := h.s.opts.maxBuffered
		for _, k := range tp.kept {
			if k.seq < c.target.from {
				continue
			}
			if int64(len(k.frame.data)) > budget {
				break
			}
			budget -= int64(len(k.frame.data))
			data := bytes.Clone(k.frame.data)
			data[0] = 'r'
			if sub.send(k.frame.kind, data) {
				deliveries.Inc()
				h.s.metrics.replayed.Inc()
			}
		}
	}
	if tp.end != nil {
		sub.send(tp.end.kind, tp.end.data)
	}
	tp.subscribers[sub] = struct{}{}
}

func (h *fanoutHub) unsubscribe(c *wsConn) {
	tp := h.topic(c.target)
	tp.mu.Lock()
	if _, ok := tp.subscribers[c.sub]; ok {
		delete(tp.subscribers, c.sub)
	}
	tp.mu.Unlock()
	c.sub.stop()
	h.s.metrics.fanoutSubscribers.Dec()
}

// readHeader reads a publish's 24-byte header: its kind (m or w) and sequence number.
func readHeader(data []byte) (kind byte, seq int64, ok bool) {
	if len(data) < fanoutHeaderBytes || (data[0] != 'm' && data[0] != 'w') {
		return 0, 0, false
	}
	for _, b := range data[1:fanoutHeaderBytes] {
		if !(b >= '0' && b <= '9' || b >= 'a' && b <= 'f') {
			return 0, 0, false
		}
	}
	n, err := strconv.ParseInt(string(data[1:9]), 16, 64)
	if err != nil {
		return 0, 0, false
	}
	return data[0], n, true
}

// publish handles a publisher's frame: an END is delivered and kept, unanswered; a publish is
// decoded once, delivered unchanged and answered ACK, or refused with an error line.
func (h *fanoutHub) publish(c *wsConn, kind int, data []byte) {
	t := c.target
	tp := h.topic(t)
	labels := []string{t.codec.name, t.test.name}
	if kind == websocket.TextMessage && bytes.HasPrefix(data, []byte("END ")) {
		f := frame{kind, data}
		tp.mu.Lock()
		tp.end = &f
		h.deliver(tp, f, labels, false)
		tp.mu.Unlock()
		return
	}
	pkind, seq, ok := readHeader(data)
	if !ok {
		h.s.metrics.decodeErrors.WithLabelValues(labels...).Inc()
		c.reply(websocket.TextMessage, []byte(errLine("%s decode failed for test %s: a publish starts with the 24-byte fan-out header", t.codec.name, t.test.name)))
		return
	}
	m := t.test.newMsg()
	start := time.Now()
	if err := t.codec.decode(data[fanoutHeaderBytes:], m); err != nil {
		h.s.metrics.decodeErrors.WithLabelValues(labels...).Inc()
		c.reply(websocket.TextMessage, []byte(errLine("%s decode failed for test %s: %v", t.codec.name, t.test.name, err)))
		return
	}
	h.s.metrics.codecSeconds.WithLabelValues(labels...).Add(time.Since(start).Seconds())
	h.s.metrics.messages.WithLabelValues(labels...).Inc()
	f := frame{kind, data}
	tp.mu.Lock()
	tp.end = nil
	if pkind == 'w' || (len(tp.kept) > 0 && seq <= tp.kept[len(tp.kept)-1].seq) {
		tp.kept = tp.kept[:0]
	}
	if pkind == 'm' && h.s.opts.replay > 0 {
		tp.kept = append(tp.kept, kept{seq, f})
		if len(tp.kept) > h.s.opts.replay {
			tp.kept = append(tp.kept[:0:0], tp.kept[len(tp.kept)-h.s.opts.replay:]...)
		}
	}
	h.deliver(tp, f, labels, true)
	tp.mu.Unlock()
	c.reply(websocket.TextMessage, ackFrame)
}

// deliver sends a frame to every subscriber of the topic (tp.mu held), dropping those with more
// than --max-buffered bytes unsent: their TCP connection is cut, without a close frame.
func (h *fanoutHub) deliver(tp *topic, f frame, labels []string, count bool) {
	deliveries := h.s.metrics.fanoutDeliveries.WithLabelValues(labels...)
	for sub := range tp.subscribers {
		if sub.queued.Load() > h.s.opts.maxBuffered || !sub.send(f.kind, f.data) {
			delete(tp.subscribers, sub)
			h.s.metrics.slowDropped.Inc()
			sub.stop()
			_ = sub.conn.ws.NetConn().Close()
			continue
		}
		if count {
			deliveries.Inc()
		}
	}
}
