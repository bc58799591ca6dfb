// Package outbound is how the server reaches addresses its users name
// (OpenAPI spec URLs, webhook tunnels, git remotes over http(s) and ssh):
// one guarded dialer (Dialer) opens every such connection, and the HTTP
// client built on it gives every request connect and overall time limits,
// every body a size limit. No connection may reach a loopback or private
// address unless the configuration allows them
// (DOCSAPI_OUTBOUND_ALLOW_LOOPBACK=1, which tests need), nor ever a
// link-local, multicast, unspecified, documentation, reserved or other
// special-purpose address, including through the IPv4 address embedded in
// an IPv4-mapped, NAT64 or 6to4 one (Blocked).
//
// The address check runs in the dialer's Control hook, on the IP actually
// being connected to, after name resolution: a host name that resolves to a
// public address when checked and a private one when used (DNS rebinding)
// cannot slip through, and every redirect's connection is checked the same
// way. Clients that take no dialer but a proxy URL (go-git's ssh transport)
// get the same dialer through ProxyURL.
package outbound

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"time"
)

// Defaults of Config.
const (
	DefaultConnectTimeout = 10 * time.Second
	DefaultTimeout        = 30 * time.Second
	DefaultMaxBytes       = 10 << 20
	maxRedirects          = 5
)

// Config configures a Client.
type Config struct {
	// AllowLoopback lets connections reach loopback and private addresses
	// (link-local, multicast and the other special-purpose ranges stay
	// refused: see Blocked).
	AllowLoopback bool
	// ConnectTimeout bounds establishing a connection (default 10s).
	ConnectTimeout time.Duration
	// Timeout bounds a whole request, redirects and body included (default 30s).
	Timeout time.Duration
	// MaxBytes bounds a response body read with Fetch or ReadBody (default 10 MiB).
	MaxBytes int64
}

func (c Config) withDefaults() Config {
	if c.ConnectTimeout <= 0 {
		c.ConnectTimeout = DefaultConnectTimeout
	}
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.MaxBytes <= 0 {
		c.MaxBytes = DefaultMaxBytes
	}
	return c
}

// Errors callers map to their own error codes; test with errors.Is.
var (
	// ErrBlockedAddress: the host is (or resolves to) a refused address.
	ErrBlockedAddress = errors.New("outbound: address not allowed")
	// ErrTimeout: the connection or the whole request took too long.
	ErrTimeout = errors.New("outbound: time limit exceeded")
	// ErrTooLarge: the response body is larger than the limit.
	ErrTooLarge = errors.New("outbound: response too large")
	// ErrUnreachable: the host does not resolve or does not answer.
	ErrUnreachable = errors.New("outbound: host unreachable")
	// ErrBadURL: not an absolute http(s) URL.
	ErrBadURL = errors.New("outbound: not an http(s) URL")
	// ErrStatus: the server answered with a status other than 2xx.
	ErrStatus = errors.New("outbound: unexpected status")
)

// BlockedAddressError names the refused address; it is ErrBlockedAddress.
type BlockedAddressError struct{ Addr netip.Addr }

func (e *BlockedAddressError) Error() string {
	return fmt.Sprintf("outbound: connecting to %s is not allowed", e.Addr)
}

// Is makes errors.Is(err, ErrBlockedAddress) true.
func (e *BlockedAddressError) Is(target error) bool { return target == ErrBlockedAddress }

// StatusError is a non-2xx answer; it is ErrStatus.
type StatusError struct{ Code int }

func (e *StatusError) Error() string { return fmt.Sprintf("outbound: the server answered %d", e.Code) }

// Is makes errors.Is(err, ErrStatus) true.
func (e *StatusError) Is(target error) bool { return target == ErrStatus }

// Client is the guarded client. HTTP is the *http.Client for callers that
// need it directly (its connections are guarded the same way); bodies read
// through it should go through ReadBody.
type Client struct {
	HTTP *http.Client
	cfg  Config
}

// New returns a guarded client.
func New(cfg Config) *Client {
	return newClient(cfg, func(context.Context) bool { return cfg.AllowLoopback }, false)
}

type loopbackKey struct{}

// WithLoopback returns ctx saying whether the connections a request made
// with it opens through a NewPerRequest client may reach loopback and
// private addresses.
func WithLoopback(ctx context.Context, allow bool) context.Context {
	return context.WithValue(ctx, loopbackKey{}, allow)
}

// NewPerRequest returns a guarded client for a process-wide user, such as
// go-git, whose transports are installed once per process however many
// servers it runs: whether a connection may reach loopback and private
// addresses comes with each request's context (WithLoopback; refused
// without it), and cfg.AllowLoopback is ignored. Connections are not kept
// for reuse, since one opened for a request allowed a private address
// must not serve a later one that is not.
func NewPerRequest(cfg Config) *Client {
	return newClient(cfg, func(ctx context.Context) bool {
		allow, _ := ctx.Value(loopbackKey{}).(bool)
		return allow
	}, true)
}

func newClient(cfg Config, allowLoopback func(context.Context) bool, noReuse bool) *Client {
	cfg = cfg.withDefaults()
	dialer := &Dialer{ConnectTimeout: cfg.ConnectTimeout, AllowLoopback: allowLoopback}
	if noReuse {
		// A connection lives for one request only: the request's read
		// limit (WithReadLimit) can be its own.
		dialer.MaxRead = readLimitOf
	}
	transport := &http.Transport{
		// No proxy from the environment: the guard must see the real target.
		Proxy:                 nil,
		DialContext:           dialer.DialContext,
		TLSHandshakeTimeout:   cfg.ConnectTimeout,
		ResponseHeaderTimeout: cfg.Timeout,
		MaxIdleConns:          20,
		IdleConnTimeout:       90 * time.Second,
		ForceAttemptHTTP2:     !noReuse,
		DisableKeepAlives:     noReuse,
	}
	return &Client{cfg: cfg, HTTP: &http.Client{
		Transport: transport,
		Timeout:   cfg.Timeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= maxRedirects {
				return fmt.Errorf("outbound: more than %d redirects", maxRedirects)
			}
			if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
				return ErrBadURL
			}
			return nil
		},
	}}
}

// MaxBytes is the client's body size limit.
func (c *Client) MaxBytes() int64 { return c.cfg.MaxBytes }

// Timeout is the client's time limit for one request.
func (c *Client) Timeout() time.Duration { return c.cfg.Timeout }

// CheckURL checks that raw is an absolute http(s) URL with a host.
func CheckURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, ErrBadURL
	}
	return u, nil
}

// Fetch GETs rawURL and returns its body, at most MaxBytes long. Errors are
// the package's: ErrBadURL, ErrBlockedAddress, ErrTimeout, ErrUnreachable,
// ErrStatus, ErrTooLarge (wrapped with detail).
func (c *Client) Fetch(ctx context.Context, rawURL string) ([]byte, error) {
	u, err := CheckURL(rawURL)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, ErrBadURL
	}
	req.Header.Set("User-Agent", "docsapi")
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return nil, Classify(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, &StatusError{Code: resp.StatusCode}
	}
	body, err := ReadBody(resp.Body, c.cfg.MaxBytes)
	if err != nil {
		return nil, Classify(err)
	}
	return body, nil
}

// ReadBody reads r whole, failing with ErrTooLarge past max bytes.
func ReadBody(r io.Reader, max int64) ([]byte, error) {
	body, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(body)) > max {
		return nil, fmt.Errorf("%w: more than %d bytes", ErrTooLarge, max)
	}
	return body, nil
}

// Classify turns an error of a request made with the client into one of the
// package's errors (wrapping the original), or returns it unchanged.
func Classify(err error) error {
	if err == nil {
		return nil
	}
	for _, known := range []error{ErrBlockedAddress, ErrTooLarge, ErrBadURL, ErrTimeout, ErrUnreachable, ErrStatus} {
		if errors.Is(err, known) {
			return err
		}
	}
	var netErr net.Error
	if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &netErr) && netErr.Timeout()) {
		return fmt.Errorf("%w: %v", ErrTimeout, err)
	}
	// Anything else (no such host, refused, reset, TLS failure) means the
	// source could not be reached.
	return fmt.Errorf("%w: %v", ErrUnreachable, err)
}
