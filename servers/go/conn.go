package main

import (
	"errors"
	"fmt"
	"net"
	"os"
	"runtime/debug"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gorilla/websocket"
	"google.golang.org/protobuf/proto"
)

var ackFrame = []byte("ACK")

// wsConn is one upgraded connection. Its reader goroutine writes its replies; a fan-out
// subscriber's frames go through its writer goroutine instead (see fanout.go).
type wsConn struct {
	ws     *websocket.Conn
	target target
	sub    *subscriber // fan-out subscribers only
}

// serveConnection runs a connection until it closes. A panic ends this connection only.
func (s *server) serveConnection(ws *websocket.Conn, t target) {
	c := &wsConn{ws: ws, target: t}
	if s.track(c) {
		goingAway(ws)
	}
	s.metrics.connections.Inc()
	s.metrics.openConnections.Inc()
	defer func() {
		if p := recover(); p != nil {
			fmt.Fprintf(os.Stderr, "wsbench-server: connection %s %s %s panicked: %v\n%s", t.codec.name, t.test.name, t.direction, p, debug.Stack())
			_ = ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseInternalServerErr, "internal error"), time.Now().Add(time.Second))
		}
		if c.sub != nil {
			s.fanout.unsubscribe(c)
		}
		_ = ws.Close()
		s.untrack(c)
		s.metrics.openConnections.Dec()
	}()
	ws.SetReadLimit(s.opts.maxPayload)
	if t.direction == "fanout" && t.role == "subscriber" {
		s.fanout.subscribe(c)
	}
	if t.direction == "down" {
		if err := t.test.load(s.root); err != nil {
			c.reply(websocket.TextMessage, []byte(errLine("%s prepare failed for test %s: %v", t.codec.name, t.test.name, err)))
			_ = ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseInternalServerErr, "cannot prepare the test"), time.Now().Add(time.Second))
			return
		}
	}
	labels := []string{t.codec.name, t.test.name}
	messages := s.metrics.messages.WithLabelValues(labels...)
	codecSeconds := s.metrics.codecSeconds.WithLabelValues(labels...)
	decodeErrors := s.metrics.decodeErrors.WithLabelValues(labels...)
	replyType := websocket.TextMessage
	if t.codec.binary {
		replyType = websocket.BinaryMessage
	}
	next := 0 // down: the n-th request gets the stream's line n mod count
	// answer sends a message's reply, or the error line when its codec failed (what: decode or encode).
	answer := func(frameType int, out []byte, err error, what string, start time.Time) {
		if err != nil {
			decodeErrors.Inc()
			c.reply(websocket.TextMessage, []byte(errLine("%s %s failed for test %s: %v", t.codec.name, what, t.test.name, err)))
			return
		}
		codecSeconds.Add(time.Since(start).Seconds())
		messages.Inc()
		c.reply(frameType, out)
	}
	for {
		kind, data, err := ws.ReadMessage()
		if err != nil {
			s.readFailed(ws, err)
			return
		}
		if kind == websocket.TextMessage && !utf8.Valid(data) {
			s.metrics.protocolErrors.Inc()
			_ = ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseInvalidFramePayloadData, "invalid UTF-8 sequence"), time.Now().Add(time.Second))
			return
		}
		switch t.direction {
		case "up":
			m := t.test.newMsg()
			start := time.Now()
			answer(websocket.TextMessage, ackFrame, t.codec.decode(data, m), "decode", start)
		case "echo":
			m := t.test.newMsg()
			start := time.Now()
			err := t.codec.decode(data, m)
			var out []byte
			if err == nil {
				out, err = t.codec.encode(m)
			}
			answer(replyType, out, err, "decode", start)
		case "down":
			var m proto.Message
			if t.repeated {
				m = t.test.one
			} else {
				m = t.test.messages[next%len(t.test.messages)]
				next++
			}
			start := time.Now()
			out, err := t.codec.encode(m)
			answer(replyType, out, err, "encode", start)
		case "fanout":
			if t.role == "subscriber" {
				c.sub.send(websocket.TextMessage, []byte("ERR a fan-out subscriber sends nothing; publish with &role=publisher"))
				continue
			}
			s.fanout.publish(c, kind, data)
		}
	}
}

// reply writes a frame from the reader goroutine; a failed write shows as the next read's error.
func (c *wsConn) reply(kind int, data []byte) {
	_ = c.ws.WriteMessage(kind, data)
}

// readFailed counts protocol violations (gorilla has closed them with 1002 or 1009 already).
func (s *server) readFailed(ws *websocket.Conn, err error) {
	if errors.Is(err, websocket.ErrReadLimit) {
		s.metrics.protocolErrors.Inc()
		return
	}
	var closeErr *websocket.CloseError
	var netErr net.Error
	if errors.As(err, &closeErr) || errors.As(err, &netErr) || isConnectionGone(err) {
		return
	}
	s.metrics.protocolErrors.Inc()
}

func isConnectionGone(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "EOF") || strings.Contains(msg, "use of closed network connection") || strings.Contains(msg, "connection reset")
}

// errLine is an error line: `ERR `, then one line of at most 200 characters of reason.
func errLine(format string, a ...any) string {
	line := strings.Join(strings.Fields(fmt.Sprintf(format, a...)), " ")
	if i := strings.Index(line, ": "); i >= 0 && len(line)-i-2 > 200 {
		line = strings.ToValidUTF8(line[:i+2+200], "")
	}
	return "ERR " + line
}
