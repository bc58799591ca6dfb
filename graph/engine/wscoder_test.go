package engine

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/coder/websocket"
)

// BenchmarkSendEvent is the server's cost of writing one subscription event
// (about 300 bytes) to a websocket whose client reads everything: written
// with coder/websocket's Write as it is, 1.5 µs on the 2-core machine of
// docs/performance.md, 3.2 µs through gqlgen's WriteJSON (which encodes
// the JSON again), 1.0 µs as a frame of our own written straight to the
// socket (not kept: see docs/decisions.md, fan-out).
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

// acceptedPair is a websocket accepted by acceptCoder and its client
// (coder/websocket's).
func acceptedPair(t *testing.T) (*coderConn, *websocket.Conn) {
	t.Helper()
	accepted := make(chan *coderConn, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := acceptCoder(w, r, transport.WebsocketAcceptOptions{Subprotocols: []string{"graphql-transport-ws"}})
		if err != nil {
			t.Error(err)
			return
		}
		accepted <- c
	}))
	t.Cleanup(srv.Close)
	client, _, err := websocket.Dial(t.Context(), srv.URL, &websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.CloseNow() })
	server := <-accepted
	t.Cleanup(func() { _ = server.Close() })
	return server, client
}

// The adapter behaves as gqlgen's: events and gqlgen's messages arrive as
// text messages, in order; a client's normal closure reads as
// ErrWebsocketClosed; WriteClose sends its code and reason, and a Close
// right after it does not cut the close handshake short; a read deadline
// that passes closes the connection.
func TestCoderConn(t *testing.T) {
	server, client := acceptedPair(t)
	if p := server.Subprotocol(); p != "graphql-transport-ws" {
		t.Fatalf("subprotocol %q", p)
	}
	if err := server.writeText([]byte(`{"event":1}`)); err != nil {
		t.Fatal(err)
	}
	if err := server.WriteJSON(map[string]int{"result": 2}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`{"event":1}`, `{"result":2}`} {
		typ, got, err := client.Read(t.Context())
		if err != nil || typ != websocket.MessageText || string(got) != want {
			t.Fatalf("read %v %s %v, want a text message %s", typ, got, err, want)
		}
	}
	if err := client.Write(t.Context(), websocket.MessageText, []byte(`{"type":"ping"}`)); err != nil {
		t.Fatal(err)
	}
	if _, r, err := server.NextReader(); err != nil {
		t.Fatal(err)
	} else if b, _ := io.ReadAll(r); string(b) != `{"type":"ping"}` {
		t.Fatalf("the server read %s", b)
	}

	// Closed by the server with a code of its own.
	go func(c *coderConn) { _, _, _ = c.NextReader() }(server) // the handshake needs a reader
	if err := server.WriteClose(4403, "unauthenticated"); err != nil {
		t.Fatal(err)
	}
	_ = server.Close()
	_, _, err := client.Read(t.Context())
	if websocket.CloseStatus(err) != 4403 {
		t.Fatalf("the client's read: %v, want the close code 4403", err)
	}

	// Closed by the client normally.
	server, client = acceptedPair(t)
	go func(c *websocket.Conn) { _ = c.Close(websocket.StatusNormalClosure, "") }(client) // its handshake waits for the server's read
	if _, _, err := server.NextReader(); !errors.Is(err, transport.ErrWebsocketClosed) {
		t.Fatalf("a normal closure read as %v", err)
	}

	// A read deadline that passes.
	server, _ = acceptedPair(t)
	if err := server.SetReadDeadline(time.Now().Add(50 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, _, err := server.NextReader(); err == nil {
		t.Fatal("a read went on past its deadline")
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("the read ended %v after its deadline", d)
	}
	// A deadline cleared in time does not close it.
	server, client = acceptedPair(t)
	_ = server.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	_ = server.SetReadDeadline(time.Time{})
	time.Sleep(100 * time.Millisecond)
	if err := client.Write(t.Context(), websocket.MessageText, []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := server.NextReader(); err != nil {
		t.Fatalf("a cleared deadline closed the connection: %v", err)
	}
}
