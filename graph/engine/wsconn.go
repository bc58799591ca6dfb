package engine

import (
	"bufio"
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/99designs/gqlgen/graphql/handler/transport"
)

// What a websocket may hold on the server when its client does not keep up
// (reads slowly, or not at all while its TCP stack still acknowledges
// pings): a bounded kernel send buffer; behind it, a backlog that at most
// MaxEventsBehind events join before the connection is closed with
// CloseTooSlow; and a deadline on writing the backlog out.
//
// No write waits for its client (backlogConn): the goroutines that deliver
// one event to thousands of sockets (graph/live/delivery.go) write to each in
// turn, and one socket whose client does not read must not hold up the
// others. gqlgen's own messages (results, complete, pings) do wait, for the
// backlog to empty, as its writes waited for the kernel before: what a
// connection holds stays bounded.

const (
	// DefaultWriteTimeout bounds the writing of what a websocket's client
	// has not taken yet: a client that has not taken it within that time
	// has its connection dropped (it cannot read a close frame either, so
	// it sees an abnormal closure, 1006).
	DefaultWriteTimeout = 10 * time.Second
	// DefaultSendBuffer is the kernel send buffer of a websocket, in bytes
	// (the kernel may double it): events are small, and without a bound a
	// client that does not read pins megabytes of kernel memory.
	DefaultSendBuffer = 64 << 10
	// CloseTooSlow is the close code of a connection whose client fell
	// too far behind its subscriptions' events (MaxEventsBehind): it is
	// closed rather than silently missing events, so the client
	// reconnects and refetches what it shows.
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
	if s, ok := ctx.Value(socketKey{}).(*socket); ok {
		s.close(code, reason)
	}
}

// close closes the connection with code and reason (once).
func (s *socket) close(code int, reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.conn == nil {
		return
	}
	s.closed = true
	_ = s.conn.WriteClose(code, reason)
}

// sendEvent writes msg, a subscription's event, without waiting for the
// client, unless the client already leaves MaxEventsBehind events unread:
// then it closes the connection with CloseTooSlow (ErrTooSlow).
func (s *socket) sendEvent(msg []byte) error {
	if s.out != nil && !s.out.admitEvent() {
		s.close(CloseTooSlow, ErrTooSlow.Error())
		return ErrTooSlow
	}
	return s.direct.writeText(msg)
}

// drainedConn is the websocket connection gqlgen writes to: each of its
// messages waits until the connection's backlog is written out (or the
// connection has failed), so a client that does not read stalls gqlgen's
// writes, as the kernel's full buffer stalled them before.
type drainedConn struct {
	wrappedConn
	out *backlogConn
}

func (c drainedConn) WriteJSON(v any) error {
	if c.out != nil {
		c.out.waitDrained()
	}
	return c.WebsocketConn.WriteJSON(v)
}

// backlogConn is a websocket's TCP connection as coder/websocket writes
// to it, and no write to it waits for the client. What the kernel's send
// buffer does not take at once is kept, in order, in a backlog, which a
// goroutine of the connection's own writes out, each part within the write
// deadline (a part that overruns it closes the connection: the client,
// which was not reading, sees no close frame, 1006); writes made meanwhile
// join the backlog. coder/websocket writes one frame at a time (its own
// lock), so writes never overlap.
type backlogConn struct {
	net.Conn
	// raw writes to the socket without waiting; nil when the connection
	// is not a socket, whose writes then wait (within the deadline).
	raw     syscall.RawConn
	timeout time.Duration

	mu sync.Mutex
	// backlog is what the kernel has not taken yet; flushing is set while
	// the connection's goroutine writes it out.
	backlog  []byte
	flushing bool
	// events counts the events admitted since the backlog last emptied.
	events int
	// drained is closed when the backlog empties or the connection fails
	// (nil while nobody waits for that).
	drained chan struct{}
	err     error
	// timedOut is set once a write of the backlog has overrun the
	// deadline (tests and logs).
	timedOut atomic.Bool
}

// MaxEventsBehind is how many events a subscriber's connection may have
// waiting behind a full kernel send buffer: one more closes it with
// CloseTooSlow.
const MaxEventsBehind = 64

func newBacklogConn(conn net.Conn, timeout time.Duration) *backlogConn {
	c := &backlogConn{Conn: conn, timeout: timeout}
	if sc, ok := conn.(syscall.Conn); ok {
		c.raw, _ = sc.SyscallConn()
	}
	return c
}

func (c *backlogConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return 0, c.err
	}
	if c.flushing {
		c.backlog = append(c.backlog, p...)
		return len(p), nil
	}
	n, err := c.writeNow(p)
	if err != nil {
		c.failLocked(err)
		return n, err
	}
	if n < len(p) {
		c.backlog = append(c.backlog[:0], p[n:]...)
		c.flushing = true
		go c.flush()
	}
	return len(p), nil
}

// writeNow writes what the kernel takes of p at once.
func (c *backlogConn) writeNow(p []byte) (int, error) {
	if c.raw == nil {
		return c.writeWithin(p)
	}
	var n int
	var werr error
	err := c.raw.Write(func(fd uintptr) bool {
		for {
			n, werr = syscall.Write(int(fd), p)
			if werr != syscall.EINTR {
				return true // done either way: never wait for room
			}
		}
	})
	switch {
	case err != nil:
		return 0, err
	case werr == syscall.EAGAIN:
		return 0, nil
	case werr != nil:
		return 0, werr
	}
	return n, nil
}

// writeWithin writes p, waiting for the client at most the write deadline.
func (c *backlogConn) writeWithin(p []byte) (int, error) {
	_ = c.Conn.SetWriteDeadline(time.Now().Add(c.timeout))
	n, err := c.Conn.Write(p)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		c.timedOut.Store(true)
	}
	return n, err
}

// flush writes the backlog out, until it is empty or a write fails.
func (c *backlogConn) flush() {
	var spare []byte
	for {
		c.mu.Lock()
		if len(c.backlog) == 0 || c.err != nil {
			c.flushing = false
			c.events = 0
			// Writes from now on go straight to the socket, which a past
			// deadline would refuse.
			_ = c.Conn.SetWriteDeadline(time.Time{})
			c.wakeLocked()
			c.mu.Unlock()
			return
		}
		out := c.backlog
		c.backlog = spare[:0]
		c.mu.Unlock()
		_, err := c.writeWithin(out)
		if err != nil {
			c.mu.Lock()
			c.failLocked(err)
			c.mu.Unlock()
			_ = c.Conn.Close()
			return
		}
		if cap(out) <= 64<<10 { // a large one is not kept
			spare = out
		}
	}
}

func (c *backlogConn) failLocked(err error) {
	if c.err == nil {
		c.err = err
	}
	c.wakeLocked()
}

func (c *backlogConn) wakeLocked() {
	if c.drained != nil {
		close(c.drained)
		c.drained = nil
	}
}

// waitDrained waits until nothing is left in the backlog, or the
// connection has failed.
func (c *backlogConn) waitDrained() {
	c.mu.Lock()
	if !c.flushing || c.err != nil {
		c.mu.Unlock()
		return
	}
	if c.drained == nil {
		c.drained = make(chan struct{})
	}
	drained := c.drained
	c.mu.Unlock()
	<-drained
}

// admitEvent tells whether one more event may be written: always while
// the client keeps up (nothing waits in the backlog), MaxEventsBehind
// times while it does not.
func (c *backlogConn) admitEvent() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.flushing || c.err != nil {
		return true // written at once, or failing as the connection has
	}
	if c.events >= MaxEventsBehind {
		return false
	}
	c.events++
	return true
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
// hijacks (the websocket's), and hands coder/websocket that connection as
// a backlogConn, which it keeps in out.
type sendBufferWriter struct {
	http.ResponseWriter
	size    int
	timeout time.Duration
	out     **backlogConn
}

func (w sendBufferWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, rw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err != nil {
		return conn, rw, err
	}
	if w.size > 0 {
		if b, ok := conn.(interface{ SetWriteBuffer(int) error }); ok {
			_ = b.SetWriteBuffer(w.size)
		}
	}
	// coder/websocket writes through rw's writer: one of the same size,
	// writing to the backlogConn (net/http's holds nothing yet).
	if err := rw.Writer.Flush(); err != nil {
		_ = conn.Close()
		return nil, nil, err
	}
	out := newBacklogConn(conn, w.timeout)
	*w.out = out
	return out, bufio.NewReadWriter(rw.Reader, bufio.NewWriterSize(out, rw.Writer.Size())), nil
}
