// wsbench-server: a Go server keeping the wire protocol of docs/protocol.md, so that the
// project's clients and compare run against a Go backend as they do against `node server.js`.
package main

import (
	"context"
	"crypto/subtle"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gorilla/websocket"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

type options struct {
	host             string
	port             int
	token            string
	maxPayload       int64
	maxConnections   int64
	handshakeTimeout time.Duration
	maxSchemaBytes   int64
	compress         bool
	maxBuffered      int64
	replay           int
	root             string
	tlsCert          string
	tlsKey           string
	tlsThrowaway     bool
}

// usageError is a bad option: one line on stderr and exit code 2 (docs/protocol.md).
func usageError(format string, a ...any) {
	fmt.Fprintf(os.Stderr, format+"\n", a...)
	os.Exit(2)
}

func parseOptions(args []string) options {
	fs := flag.NewFlagSet("wsbench-server", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	o := options{}
	defaultPort := 7070
	if p := os.Getenv("PORT"); p != "" {
		if n, err := strconv.Atoi(p); err == nil {
			defaultPort = n
		}
	}
	fs.StringVar(&o.host, "host", "127.0.0.1", "interface to listen on")
	fs.IntVar(&o.port, "port", defaultPort, "port to listen on; 0 takes any free one")
	fs.IntVar(&o.port, "p", defaultPort, "same as --port")
	fs.StringVar(&o.token, "token", os.Getenv("BENCH_TOKEN"), "require this token on upgrades and /metrics")
	fs.Int64Var(&o.maxPayload, "max-payload", 64<<20, "largest message in bytes (larger: close 1009)")
	fs.Int64Var(&o.maxConnections, "max-connections", 10000, "open connections beyond which upgrades get 503")
	timeout := fs.String("handshake-timeout", "10s", "408 and close a connection without a whole request by then")
	fs.Int64Var(&o.maxSchemaBytes, "max-schema-bytes", 1<<20, "accepted for compatibility: this server refuses every schema registration")
	fs.BoolVar(&o.compress, "compress", false, "accept permessage-deflate")
	fs.Int64Var(&o.maxBuffered, "max-buffered", 1<<20, "fan-out: drop a subscriber with more bytes than this unsent")
	fs.IntVar(&o.replay, "replay", 0, "fan-out: measured publishes each topic keeps for subscribers that come back")
	fs.StringVar(&o.root, "root", "", "the project's root, where fixtures/ and data/ are (default: found upwards)")
	fs.StringVar(&o.tlsCert, "tls-cert", "", "serve wss:// and https:// with this certificate (PEM); needs --tls-key")
	fs.StringVar(&o.tlsKey, "tls-key", "", "the private key (PEM) of --tls-cert")
	fs.BoolVar(&o.tlsThrowaway, "tls", false, "serve wss:// with a throwaway self-signed certificate")
	help := fs.Bool("help", false, "this help")
	if err := fs.Parse(args); err != nil {
		usageError("wsbench-server: %v (--help lists the options)", err)
	}
	if *help {
		fs.SetOutput(os.Stdout)
		fmt.Println("usage: wsbench-server [--host H] [--port P] [--token T] [--max-payload B] [--max-connections N] [--handshake-timeout 10s] [--compress] [--root DIR] [--tls-cert F --tls-key F | --tls]")
		fs.PrintDefaults()
		os.Exit(0)
	}
	if fs.NArg() > 0 {
		usageError("wsbench-server: unexpected argument '%s' (--help lists the options)", fs.Arg(0))
	}
	if o.port < 0 || o.port > 65535 {
		usageError("wsbench-server: --port must be 0 to 65535, got %d", o.port)
	}
	if o.maxPayload <= 0 || o.maxConnections <= 0 || o.maxBuffered <= 0 || o.replay < 0 {
		usageError("wsbench-server: --max-payload, --max-connections and --max-buffered must be positive, --replay not negative")
	}
	d, err := parseDuration(*timeout)
	if err != nil || d <= 0 {
		usageError("wsbench-server: --handshake-timeout must be a duration such as 10s or 500ms, got '%s'", *timeout)
	}
	o.handshakeTimeout = d
	if o.tlsThrowaway && (o.tlsCert != "" || o.tlsKey != "") {
		usageError("--tls makes a throwaway certificate: give it, or --tls-cert and --tls-key, not both")
	}
	if (o.tlsCert == "") != (o.tlsKey == "") {
		usageError("--tls-cert and --tls-key go together: the certificate and its private key")
	}
	return o
}

// parseDuration takes Go's durations (10s, 500ms) and a bare number as milliseconds.
func parseDuration(text string) (time.Duration, error) {
	if n, err := strconv.ParseFloat(text, 64); err == nil {
		return time.Duration(n * float64(time.Millisecond)), nil
	}
	return time.ParseDuration(text)
}

type server struct {
	opts     options
	root     string
	metrics  *metrics
	upgrader websocket.Upgrader
	// open connections and upgrades under way, against --max-connections
	active atomic.Int64
	// mu orders upgrades against shutdown: an upgrade either begins before shutdown does or is
	// refused, and one that opens after shutdown has closed the others closes itself (track).
	mu       sync.Mutex
	stopping bool
	conns    map[*wsConn]struct{}
	handlers sync.WaitGroup // upgrades under way and open connections: shutdown waits for them
	fanout   *fanoutHub
}

func main() {
	opts := parseOptions(os.Args[1:])
	root, err := findRoot(opts.root)
	if err != nil {
		usageError("wsbench-server: %v", err)
	}
	s := &server{opts: opts, root: root, metrics: newMetrics(), conns: map[*wsConn]struct{}{}}
	s.fanout = newFanoutHub(s)
	s.upgrader = websocket.Upgrader{
		ReadBufferSize:    64 << 10,
		WriteBufferSize:   64 << 10,
		EnableCompression: opts.compress,
		CheckOrigin:       func(*http.Request) bool { return true },
	}

	// Read and checked before anything listens: a bad file or a key of another certificate is one line.
	certificate, err := serverCertificate(opts)
	if err != nil {
		usageError("%v", err)
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(opts.host, strconv.Itoa(opts.port)))
	if err != nil {
		usageError("wsbench-server: cannot listen on %s port %d: %v", opts.host, opts.port, err)
	}
	httpServer := &http.Server{
		Handler: s,
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			// Under TLS the handshake timer sits on the TCP connection beneath.
			if tc, ok := c.(*tls.Conn); ok {
				c = tc.NetConn()
			}
			return context.WithValue(ctx, connKey{}, c)
		},
		// Plain HTTP on the TLS port is answered 400 by net/http; its log line would say so per request.
		ErrorLog: log.New(io.Discard, "", 0),
	}
	var listener net.Listener = &timeoutListener{Listener: ln, s: s}
	scheme := "ws"
	if certificate != nil {
		listener = tls.NewListener(listener, &tls.Config{Certificates: []tls.Certificate{certificate.pair}, MinVersion: tls.VersionTLS12})
		scheme = "wss"
	}
	addr := ln.Addr().(*net.TCPAddr)
	host := opts.host
	if addr.IP != nil && !addr.IP.IsUnspecified() {
		host = addr.IP.String()
	}
	if certificate != nil && certificate.file != "" {
		fmt.Printf("throwaway certificate %s (SHA-256 %s): clients trust it with --ca %s, or skip the check with --insecure\n",
			certificate.file, certificate.fingerprint, certificate.file)
	}
	// Before the ready line: a starter may send SIGTERM as soon as it reads it.
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
	fmt.Printf("listening on %s://%s (go server, root %s)\n", scheme, net.JoinHostPort(host, strconv.Itoa(addr.Port)), root)

	served := make(chan error, 1)
	go func() { served <- httpServer.Serve(listener) }()
	started := time.Now()
	select {
	case sig := <-signals:
		s.shutdown(httpServer)
		certificate.remove()
		fmt.Printf("stopped on %s after %.0f s\n", signalName(sig), time.Since(started).Seconds())
		os.Exit(0)
	case err := <-served:
		certificate.remove()
		fmt.Fprintf(os.Stderr, "wsbench-server: %v\n", err)
		os.Exit(1)
	}
}

func signalName(sig os.Signal) string {
	if sig == syscall.SIGTERM {
		return "SIGTERM"
	}
	return "SIGINT"
}

// shutdown stops listening, closes every connection with 1001 and waits up to 1 s for the peers
// to answer before cutting what is left. Upgrades from now on are refused; one under way is
// waited for, and closes itself once open.
func (s *server) shutdown(httpServer *http.Server) {
	s.mu.Lock()
	s.stopping = true
	open := make([]*wsConn, 0, len(s.conns))
	for c := range s.conns {
		open = append(open, c)
	}
	s.mu.Unlock()
	_ = httpServer.Close() // the listener and plain HTTP connections; upgraded ones are ours
	for _, c := range open {
		goingAway(c.ws)
	}
	done := make(chan struct{})
	go func() { s.handlers.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Second):
		s.mu.Lock()
		for c := range s.conns {
			_ = c.ws.NetConn().Close()
		}
		s.mu.Unlock()
	}
}

// beginUpgrade counts an upgrade among the handlers shutdown waits for; false once it has begun.
func (s *server) beginUpgrade() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopping {
		return false
	}
	s.handlers.Add(1)
	return true
}

// track adds an open connection to those shutdown closes; true when shutdown has closed them
// already, without this one.
func (s *server) track(c *wsConn) (missed bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.conns[c] = struct{}{}
	return s.stopping
}

func (s *server) untrack(c *wsConn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.conns, c)
}

// goingAway sends the close frame of a server that stops (docs/protocol.md, "Close codes").
func goingAway(ws *websocket.Conn) {
	closeFrame := websocket.FormatCloseMessage(websocket.CloseGoingAway, "server shutting down")
	_ = ws.WriteControl(websocket.CloseMessage, closeFrame, time.Now().Add(time.Second))
}

type connKey struct{}

// timeoutListener answers 408 and closes a connection that has not sent a whole request within
// --handshake-timeout of opening (docs/protocol.md, "408").
type timeoutListener struct {
	net.Listener
	s *server
}

type timedConn struct {
	net.Conn
	state atomic.Int32 // 0 waiting for a request, 1 has one, 2 timed out
	timer *time.Timer
}

func (l *timeoutListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	tc := &timedConn{Conn: c}
	tc.timer = time.AfterFunc(l.s.opts.handshakeTimeout, func() {
		if tc.state.CompareAndSwap(0, 2) {
			l.s.metrics.handshakeTimeouts.Inc()
			_ = c.SetWriteDeadline(time.Now().Add(time.Second))
			_, _ = io.WriteString(c, "HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Length: 0\r\n\r\n")
			_ = c.Close()
		}
	})
	return tc, nil
}

func (c *timedConn) Close() error {
	c.timer.Stop()
	return c.Conn.Close()
}

// requestArrived marks the request's connection as having sent a whole request; false when it
// was already answered 408.
func requestArrived(r *http.Request) bool {
	tc, ok := r.Context().Value(connKey{}).(*timedConn)
	if !ok {
		return true
	}
	if tc.state.CompareAndSwap(0, 1) {
		tc.timer.Stop()
		return true
	}
	return tc.state.Load() == 1
}

// refuse answers a whole HTTP response, the reason and a newline as its body, and closes.
func refuse(w http.ResponseWriter, status int, reason string, headers ...string) {
	h := w.Header()
	for i := 0; i+1 < len(headers); i += 2 {
		h.Set(headers[i], headers[i+1])
	}
	h.Set("Connection", "close")
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(len(reason)+1))
	w.WriteHeader(status)
	_, _ = io.WriteString(w, reason+"\n")
}

const tokenReason = "missing or wrong token: send Authorization: Bearer <token> or ?token=<token>"

// authorized: no token on the server, or the request carries it as a bearer token or ?token=.
func (s *server) authorized(r *http.Request) bool {
	if s.opts.token == "" {
		return true
	}
	want := []byte(s.opts.token)
	auth := r.Header.Get("Authorization")
	if scheme, value, ok := strings.Cut(strings.TrimSpace(auth), " "); ok && strings.EqualFold(scheme, "bearer") {
		if subtle.ConstantTimeCompare([]byte(strings.TrimSpace(value)), want) == 1 {
			return true
		}
	}
	if q := r.URL.Query(); q.Has("token") && subtle.ConstantTimeCompare([]byte(q.Get("token")), want) == 1 {
		return true
	}
	return false
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !requestArrived(r) {
		return
	}
	if strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
		s.serveUpgrade(w, r)
		return
	}
	if r.URL.Path == "/metrics" {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			refuse(w, http.StatusMethodNotAllowed, "/metrics answers GET and HEAD", "Allow", "GET, HEAD")
			return
		}
		if !s.authorized(r) {
			refuse(w, http.StatusUnauthorized, tokenReason, "WWW-Authenticate", "Bearer")
			return
		}
		promhttp.HandlerFor(s.metrics.registry, promhttp.HandlerOpts{}).ServeHTTP(w, r)
		return
	}
	refuse(w, http.StatusNotFound, "this is the Go wsbench server: connect with a WebSocket to ws://HOST:PORT/?test=<test>&format=<format> (docs/protocol.md); counters at /metrics")
}

func (s *server) serveUpgrade(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(r) {
		s.metrics.unauthorized.Inc()
		refuse(w, http.StatusUnauthorized, tokenReason, "WWW-Authenticate", "Bearer")
		return
	}
	if !s.beginUpgrade() {
		s.metrics.refusedUpgrades.Inc()
		refuse(w, http.StatusServiceUnavailable, "server shutting down")
		return
	}
	defer s.handlers.Done()
	if n := s.active.Add(1); n > s.opts.maxConnections {
		s.active.Add(-1)
		s.metrics.refusedUpgrades.Inc()
		refuse(w, http.StatusServiceUnavailable, fmt.Sprintf("connection limit reached (%d open)", n-1))
		return
	}
	defer s.active.Add(-1)
	target, err := parseTarget(r.URL.Query())
	if err != nil {
		s.metrics.refusedUpgrades.Inc()
		refuse(w, http.StatusBadRequest, err.Error())
		return
	}
	ws, err := s.upgrader.Upgrade(w, r, nil)
	if err != nil {
		return // gorilla answered the malformed handshake
	}
	s.serveConnection(ws, target)
}

// target is what an upgrade URL asks for (docs/protocol.md, "The upgrade URL").
type target struct {
	test      *testDef
	codec     *codec
	direction string
	role      string // fanout only: subscriber or publisher
	repeated  bool
	from      int64 // -1: none
}

var directions = []string{"up", "down", "echo", "fanout"}

func parseTarget(q map[string][]string) (target, error) {
	get := func(k string) (string, bool) {
		v, ok := q[k]
		if !ok || len(v) == 0 {
			return "", false
		}
		return v[0], true
	}
	t := target{from: -1}
	testParam, _ := get("test")
	format, _ := get("format")
	if testParam == "" {
		names := make([]string, len(tests))
		for i, t := range tests {
			names[i] = t.name
		}
		return t, fmt.Errorf("missing ?test= (one of %s)", strings.Join(names, ", "))
	}
	if format == "" {
		return t, errors.New("missing &format= (one of json, protobuf)")
	}
	c, err := findCodec(format)
	if err != nil {
		return t, err
	}
	t.codec = c
	direction, ok := get("direction")
	if !ok {
		direction = "up"
	}
	if !contains(directions, direction) {
		return t, fmt.Errorf("unknown direction '%s': expected one of %s", direction, strings.Join(directions, ", "))
	}
	t.direction = direction
	payload, ok := get("payload")
	if !ok {
		payload = "stream"
	}
	if payload != "stream" && payload != "repeated" {
		return t, fmt.Errorf("unknown payload '%s': expected one of stream, repeated", payload)
	}
	t.repeated = payload == "repeated"
	role, hasRole := get("role")
	if direction != "fanout" {
		if hasRole {
			return t, fmt.Errorf("&role= goes with direction fanout, not %s", direction)
		}
	} else {
		if !hasRole {
			role = "subscriber"
		}
		if role != "subscriber" && role != "publisher" {
			return t, fmt.Errorf("unknown role '%s': expected one of subscriber, publisher", role)
		}
		t.role = role
	}
	if from, ok := get("from"); ok {
		if t.role != "subscriber" {
			return t, errors.New("&from= goes with a fan-out subscriber")
		}
		n, err := strconv.ParseInt(from, 10, 64)
		if err != nil || len(from) > 10 || strings.TrimLeft(from, "0123456789") != "" {
			return t, fmt.Errorf("&from= must be a publish's sequence number, got '%s'", from)
		}
		t.from = n
	}
	if testParam == "custom" {
		if direction == "down" {
			return t, errors.New("direction down needs a built-in test: the server has no custom payload to send")
		}
		return t, fmt.Errorf("format '%s' does not carry a payload of your own on the Go server: it decodes into a built-in test's generated types", format)
	}
	test, err := resolveTest(testParam)
	if err != nil {
		return t, err
	}
	t.test = test
	return t, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
