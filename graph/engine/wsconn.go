package engine

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/99designs/gqlgen/graphql/handler/transport"
)

// What a websocket may hold on the server when its client does not keep up
// (reads slowly, or not at all while its TCP stack still acknowledges
// pings): a bounded kernel send buffer, a deadline on every write, and,
// in the application, a bounded queue of events per subscription
// (graph/live.go), whose overflow closes the connection with
// CloseTooSlow.

const (
	// DefaultWriteTimeout bounds one websocket write: a client that has
	// not taken a message within it has its connection dropped (it cannot
	// read a close frame either, so it sees an abnormal closure, 1006).
	DefaultWriteTimeout = 10 * time.Second
	// DefaultSendBuffer is the kernel send buffer of a websocket, in bytes
	// (the kernel may double it): events are small, and without a bound a
	// client that does not read pins megabytes of kernel memory.
	DefaultSendBuffer = 64 << 10
	// CloseTooSlow is the close code of a connection whose client fell
	// too far behind the events of one of its subscriptions (its queue
	// full): it is closed rather than silently missing events, so the
	// client reconnects and refetches what it shows.
	CloseTooSlow = 4008
)

// socketKey carries a connection's socket in the contexts of its
// operations (CloseSocket).
type socketKey struct{}

// CloseSocket closes the websocket connection of ctx (an operation's or a
// subscription's) with code and reason; it does nothing outside one. The
// close frame is sent if it can be; a connection whose writes are stalled
// is dropped once the close handshake's own time limit passes.
func CloseSocket(ctx context.Context, code int, reason string) {
	s, ok := ctx.Value(socketKey{}).(*socket)
	if !ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.conn == nil {
		return
	}
	s.closed = true
	_ = s.conn.WriteClose(code, reason)
}

// deadlineConn is a websocket connection whose writes have a deadline:
// one that does not complete within it closes the connection, which ends
// the write (and the connection's reads, so the transport tears the
// connection down).
type deadlineConn struct {
	wrappedConn
	timeout time.Duration
	// timedOut is set once a write has overrun (tests and logs).
	timedOut atomic.Bool
}

func (c *deadlineConn) WriteJSON(v any) error {
	t := time.AfterFunc(c.timeout, func() {
		c.timedOut.Store(true)
		_ = c.WebsocketConn.Close()
	})
	defer t.Stop()
	return c.WebsocketConn.WriteJSON(v)
}

// wrappedConn is a websocket connection one of ours wraps. It passes on the
// connection's optional abilities, which gqlgen asks for by type: embedding
// the interface alone would hide them.
type wrappedConn struct{ transport.WebsocketConn }

func (c wrappedConn) SetReadLimit(limit int64) {
	if l, ok := c.WebsocketConn.(transport.WebsocketReadLimiter); ok {
		l.SetReadLimit(limit)
	}
}

func (c wrappedConn) SetReadDeadline(t time.Time) error {
	if d, ok := c.WebsocketConn.(transport.WebsocketReadDeadliner); ok {
		return d.SetReadDeadline(t)
	}
	return nil
}

// sendBufferWriter bounds the kernel send buffer of the connection it
// hijacks (the websocket's).
type sendBufferWriter struct {
	http.ResponseWriter
	size int
}

func (w sendBufferWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, rw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err == nil && w.size > 0 {
		if b, ok := conn.(interface{ SetWriteBuffer(int) error }); ok {
			_ = b.SetWriteBuffer(w.size)
		}
	}
	return conn, rw, err
}
