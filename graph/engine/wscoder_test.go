package engine

import (
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql/handler/transport"
)

// BenchmarkSendEvent is the server's cost of writing one subscription event
// (about 300 bytes) to a websocket whose client reads everything: written
// with coder/websocket's Write as it is, 1.5 µs on the 2-core machine of
// docs/performance.md, 3.2 µs through gqlgen's WriteJSON (which encodes
// the JSON again), 1.0 µs as a frame of our own written straight to the
// socket (not kept: see docs/performance.md).
func BenchmarkSendEvent(b *testing.B) {
	s := &socket{sockets: Sockets{Log: slog.Default(), SendBuffer: -1}}
	accepted := make(chan struct{})
	done := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := (acceptInto{s: s}).Accept(w, r, transport.WebsocketAcceptOptions{}); err != nil {
			b.Error(err)
		}
		close(accepted)
		<-done
	}))
	defer srv.Close()
	defer close(done)
	// The client: an upgrade request by hand, then everything read and
	// discarded (a websocket client's own work is not measured).
	c, err := net.Dial("tcp", strings.TrimPrefix(srv.URL, "http://"))
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	fmt.Fprint(c, "GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
	go func() { _, _ = io.Copy(io.Discard, c) }()
	<-accepted
	msg := []byte(`{"payload":{"data":{"spaceChanged":{"kind":"UPDATED","space":{"id":"` + strings.Repeat("a", 200) +
		`","title":"x"}}}},"id":"1","type":"next"}`)
	b.ReportAllocs()
	for b.Loop() {
		s.out.waitDrained() // the client keeps up, in the end
		if err := s.sendEvent(msg); err != nil {
			b.Fatal(err)
		}
	}
}
