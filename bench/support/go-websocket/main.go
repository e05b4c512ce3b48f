// The Go server's websocket library, chosen by measurement (npm run bench:go-websocket): the same
// least server written on gorilla/websocket and on coder/websocket, each reading a message and
// answering ACK, nothing decoded, so the library is all that differs.
//
//	go run . -lib gorilla|coder    prints "listening on ws://127.0.0.1:PORT"
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"

	coder "github.com/coder/websocket"
	"github.com/gorilla/websocket"
)

var ack = []byte("ACK")

func gorillaHandler() http.Handler {
	upgrader := websocket.Upgrader{ReadBufferSize: 64 << 10, WriteBufferSize: 64 << 10}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, err := upgrader.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer conn.Close()
		conn.SetReadLimit(64 << 20)
		for {
			if _, _, err := conn.ReadMessage(); err != nil {
				return
			}
			if err := conn.WriteMessage(websocket.TextMessage, ack); err != nil {
				return
			}
		}
	})
}

func coderHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, err := coder.Accept(w, r, &coder.AcceptOptions{CompressionMode: coder.CompressionDisabled})
		if err != nil {
			return
		}
		defer conn.CloseNow()
		conn.SetReadLimit(64 << 20)
		ctx := context.Background()
		for {
			if _, _, err := conn.Read(ctx); err != nil {
				return
			}
			if err := conn.Write(ctx, coder.MessageText, ack); err != nil {
				return
			}
		}
	})
}

func main() {
	lib := flag.String("lib", "gorilla", "gorilla or coder")
	port := flag.Int("port", 0, "port; 0 takes a free one")
	flag.Parse()
	handler := map[string]func() http.Handler{"gorilla": gorillaHandler, "coder": coderHandler}[*lib]
	if handler == nil {
		fmt.Fprintf(os.Stderr, "-lib must be gorilla or coder, got '%s'\n", *lib)
		os.Exit(2)
	}
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", *port))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	fmt.Printf("listening on ws://%s (%s)\n", ln.Addr(), *lib)
	go func() { _ = http.Serve(ln, handler()) }()
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
	<-signals
}
