package outbound

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"syscall"
	"time"
)

// Dialer is the one guarded dialer: every connection the server opens to an
// address a user named (HTTP requests, git over http(s) and ssh) is made by
// DialContext, which refuses the addresses Blocked refuses and can bound
// what a connection reads and how long it lives.
type Dialer struct {
	// ConnectTimeout bounds establishing a connection (default 10s).
	ConnectTimeout time.Duration
	// AllowLoopback says whether a connection dialed with ctx may reach
	// loopback and private addresses (nil: never).
	AllowLoopback func(ctx context.Context) bool
	// MaxRead is how many bytes a connection dialed with ctx may read,
	// 0 for no bound (nil: none).
	MaxRead func(ctx context.Context) int64
	// Lifetime bounds a connection's whole life, for protocols (ssh) whose
	// client sets no deadline of its own (0: none).
	Lifetime time.Duration
}

// DialContext connects to address. The address check runs in the dialer's
// Control hook, on the IP actually being connected to, after name
// resolution, so a name that resolves to an allowed address when a URL is
// checked and to a refused one when connecting is refused.
func (d *Dialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	timeout := d.ConnectTimeout
	if timeout <= 0 {
		timeout = DefaultConnectTimeout
	}
	allow := false
	if d.AllowLoopback != nil {
		allow = d.AllowLoopback(ctx)
	}
	nd := &net.Dialer{Timeout: timeout, ControlContext: func(_ context.Context, _, address string, _ syscall.RawConn) error {
		// SECURITY: every connection, whatever the name resolved to.
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return &BlockedAddressError{}
		}
		if ip := ap.Addr().Unmap().WithZone(""); Blocked(ip, allow) {
			return &BlockedAddressError{Addr: ip}
		}
		return nil
	}}
	conn, err := nd.DialContext(ctx, network, address)
	if err != nil {
		return nil, err
	}
	if d.Lifetime > 0 {
		// SECURITY: a server that accepts and then stalls cannot hold a
		// connection (and the request waiting on it) forever.
		_ = conn.SetDeadline(time.Now().Add(d.Lifetime))
	}
	var max int64
	if d.MaxRead != nil {
		max = d.MaxRead(ctx)
	}
	if max > 0 {
		conn = &limitedConn{Conn: conn, left: max, max: max}
	}
	return conn, nil
}

// Dial is DialContext without a context (golang.org/x/net/proxy's Dialer).
func (d *Dialer) Dial(network, address string) (net.Conn, error) {
	return d.DialContext(context.Background(), network, address)
}

type readLimitKey struct{}

// WithReadLimit returns ctx saying that each connection a request made with
// it opens through a NewPerRequest client may read at most max bytes: a
// bound for readers, such as go-git, that read whatever a server sends.
func WithReadLimit(ctx context.Context, max int64) context.Context {
	return context.WithValue(ctx, readLimitKey{}, max)
}

// readLimitOf is the read limit WithReadLimit put in ctx, 0 for none.
func readLimitOf(ctx context.Context) int64 {
	max, _ := ctx.Value(readLimitKey{}).(int64)
	return max
}

// limitedConn fails reads past max bytes with ErrTooLarge. Reads come from
// one goroutine at a time, as with every protocol client here.
type limitedConn struct {
	net.Conn
	left int64
	max  int64
}

func (c *limitedConn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return c.Conn.Read(p)
	}
	if c.left <= 0 {
		// At the limit: the stream may still end here (EOF), but any
		// further byte is one too many.
		var one [1]byte
		n, err := c.Conn.Read(one[:])
		if n > 0 {
			return 0, fmt.Errorf("%w: a connection read more than %d bytes", ErrTooLarge, c.max)
		}
		return 0, err
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.Conn.Read(p)
	c.left -= int64(n)
	return n, err
}

// IsTooLarge reports whether err is, or wraps, ErrTooLarge; for callers
// whose libraries flatten errors into text, the message is recognized too.
func IsTooLarge(err error) bool {
	return err != nil && (errors.Is(err, ErrTooLarge) || strings.Contains(err.Error(), ErrTooLarge.Error()))
}
