module wsbench/go-websocket

go 1.26.0

require (
	github.com/coder/websocket v1.8.15
	github.com/gorilla/websocket v1.5.3
)
