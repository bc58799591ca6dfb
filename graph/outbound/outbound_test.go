package outbound

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/proxy"
)

func TestLoopbackRefusedByDefault(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("secret")) }))
	defer ts.Close()
	_, err := New(Config{}).Fetch(context.Background(), ts.URL)
	if !errors.Is(err, ErrBlockedAddress) {
		t.Fatalf("err = %v, want ErrBlockedAddress", err)
	}
	// The name "localhost" resolves to loopback: refused as well.
	_, err = New(Config{}).Fetch(context.Background(), strings.Replace(ts.URL, "127.0.0.1", "localhost", 1))
	if !errors.Is(err, ErrBlockedAddress) {
		t.Fatalf("localhost: err = %v, want ErrBlockedAddress", err)
	}
}

func TestLoopbackAllowedWhenConfigured(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("hello")) }))
	defer ts.Close()
	body, err := New(Config{AllowLoopback: true}).Fetch(context.Background(), ts.URL)
	if err != nil || string(body) != "hello" {
		t.Fatalf("body %q, err %v", body, err)
	}
}

func TestRedirectToBlockedAddressRefused(t *testing.T) {
	// A public-looking first hop cannot be served in a test, but a redirect
	// to a refused address is checked by the same hook: the client allows
	// loopback, and the redirect goes to the link-local metadata address.
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusFound)
	}))
	defer ts.Close()
	_, err := New(Config{AllowLoopback: true, ConnectTimeout: time.Second}).Fetch(context.Background(), ts.URL)
	if !errors.Is(err, ErrBlockedAddress) {
		t.Fatalf("err = %v, want ErrBlockedAddress", err)
	}
}

func TestSizeLimit(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(strings.Repeat("x", 2048)))
	}))
	defer ts.Close()
	_, err := New(Config{AllowLoopback: true, MaxBytes: 1024}).Fetch(context.Background(), ts.URL)
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("err = %v, want ErrTooLarge", err)
	}
	body, err := New(Config{AllowLoopback: true, MaxBytes: 2048}).Fetch(context.Background(), ts.URL)
	if err != nil || len(body) != 2048 {
		t.Fatalf("at the limit: %d bytes, err %v", len(body), err)
	}
}

func TestTimeout(t *testing.T) {
	release := make(chan struct{})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer ts.Close()
	defer close(release)
	_, err := New(Config{AllowLoopback: true, Timeout: 100 * time.Millisecond}).Fetch(context.Background(), ts.URL)
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("err = %v, want ErrTimeout", err)
	}
}

func TestStatusAndUnreachable(t *testing.T) {
	ts := httptest.NewServer(http.NotFoundHandler())
	c := New(Config{AllowLoopback: true})
	if _, err := c.Fetch(context.Background(), ts.URL); !errors.Is(err, ErrStatus) {
		t.Fatalf("404: err = %v, want ErrStatus", err)
	}
	ts.Close()
	if _, err := c.Fetch(context.Background(), ts.URL); !errors.Is(err, ErrUnreachable) {
		t.Fatalf("closed: err = %v, want ErrUnreachable", err)
	}
	for _, bad := range []string{"", "ftp://example.com/x", "/relative", "http://"} {
		if _, err := c.Fetch(context.Background(), bad); !errors.Is(err, ErrBadURL) {
			t.Fatalf("%q: err = %v, want ErrBadURL", bad, err)
		}
	}
}

func TestBlocked(t *testing.T) {
	for _, tc := range []struct {
		ip             string
		blocked, allow bool // refused by default; refused with AllowLoopback
	}{
		// Loopback and private: refused unless allowed.
		{"127.0.0.1", true, false},
		{"127.255.255.254", true, false},
		{"::1", true, false},
		{"10.1.2.3", true, false},
		{"172.16.0.1", true, false},
		{"172.31.255.255", true, false},
		{"192.168.1.1", true, false},
		{"100.64.0.1", true, false},
		{"100.127.255.255", true, false},
		{"fd00::1", true, false},
		{"fc00::1", true, false},
		{"fec0::1", true, false},
		{"64:ff9b:1::a00:1", true, false}, // local-use NAT64
		// IPv4-mapped: judged as the IPv4 address.
		{"::ffff:127.0.0.1", true, false},
		{"::ffff:10.0.0.1", true, false},
		{"::ffff:169.254.169.254", true, true},
		{"::ffff:93.184.216.34", false, false},
		// NAT64 (64:ff9b::/96): judged by the embedded IPv4 address.
		{"64:ff9b::7f00:1", true, false},   // 127.0.0.1
		{"64:ff9b::a00:1", true, false},    // 10.0.0.1
		{"64:ff9b::a9fe:a9fe", true, true}, // 169.254.169.254
		{"64:ff9b::c000:201", true, true},  // 192.0.2.1
		{"64:ff9b::5db8:d822", false, false},
		// 6to4 (2002::/16): judged by the embedded IPv4 address.
		{"2002:7f00:1::1", true, false},     // 127.0.0.1
		{"2002:c0a8:101::1", true, false},   // 192.168.1.1
		{"2002:a9fe:a9fe::1", true, true},   // 169.254.169.254
		{"2002:0:0::1", true, true},         // 0.0.0.0
		{"2002:5db8:d822::1", false, false}, // 93.184.216.34
		// Teredo and the rest of 2001::/23, documentation.
		{"2001:0:4136:e378:8000:63bf:3fff:fdd2", true, true},
		{"2001:2::1", true, true},
		{"2001:10::1", true, true},
		{"2001:db8::1", true, true},
		{"3fff::1", true, true},
		// Special-purpose IPv4: refused whatever the configuration.
		{"169.254.169.254", true, true},
		{"0.0.0.0", true, true},
		{"0.1.2.3", true, true},
		{"192.0.0.8", true, true},
		{"192.0.2.1", true, true},
		{"192.88.99.1", true, true},
		{"198.18.0.1", true, true},
		{"198.19.255.255", true, true},
		{"198.51.100.7", true, true},
		{"203.0.113.9", true, true},
		{"224.0.0.1", true, true},
		{"239.255.255.250", true, true},
		{"240.0.0.1", true, true},
		{"255.255.255.255", true, true},
		// IPv6 outside global unicast.
		{"::", true, true},
		{"::127.0.0.1", true, true}, // IPv4-compatible (deprecated)
		{"100::1", true, true},      // discard
		{"fe80::1", true, true},
		{"fe80::1%eth0", true, true},
		{"ff02::1", true, true},
		{"ff0e::1", true, true},
		{"5f00::1", true, true}, // SRv6
		{"4000::1", true, true}, // unallocated
		// Public.
		{"93.184.216.34", false, false},
		{"8.8.8.8", false, false},
		{"100.63.255.255", false, false},
		{"100.128.0.0", false, false},
		{"172.32.0.1", false, false},
		{"198.20.0.1", false, false},
		{"2606:4700::1", false, false},
		{"2a00:1450:4007:80f::200e", false, false},
		{"2001:4860:4860::8888", false, false},
	} {
		ip := netip.MustParseAddr(tc.ip)
		if got := Blocked(ip, false); got != tc.blocked {
			t.Errorf("Blocked(%s) = %v, want %v", tc.ip, got, tc.blocked)
		}
		if got := Blocked(ip, true); got != tc.allow {
			t.Errorf("Blocked(%s, allowLoopback) = %v, want %v", tc.ip, got, tc.allow)
		}
	}
	if !Blocked(netip.Addr{}, true) {
		t.Error("the zero address is allowed")
	}
}

// The guarded dialer refuses a refused address before connecting, whatever
// the literal form of the address.
func TestDialerRefuses(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var accepted atomic.Int64
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	d := &Dialer{ConnectTimeout: time.Second}
	for _, host := range []string{"127.0.0.1", "localhost", "[::ffff:127.0.0.1]", "169.254.169.254", "[64:ff9b::a9fe:a9fe]", "[2002:7f00:1::1]"} {
		if _, err := d.DialContext(context.Background(), "tcp", host+":"+port); !errors.Is(err, ErrBlockedAddress) {
			t.Errorf("%s: err = %v, want ErrBlockedAddress", host, err)
		}
	}
	if n := accepted.Load(); n != 0 {
		t.Errorf("%d connections reached the listener", n)
	}
	allowed := &Dialer{AllowLoopback: func(context.Context) bool { return true }}
	c, err := allowed.DialContext(context.Background(), "tcp", "127.0.0.1:"+port)
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
}

// A connection's reads are bounded: up to the limit it reads, past it it
// fails with ErrTooLarge; a stream that ends exactly at the limit ends.
func TestDialerReadLimit(t *testing.T) {
	for _, tc := range []struct {
		size    int
		tooMany bool
	}{{1000, false}, {1024, false}, {1025, true}, {64 << 10, true}} {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_, _ = c.Write(make([]byte, tc.size))
			c.Close()
		}()
		d := &Dialer{AllowLoopback: func(context.Context) bool { return true }, MaxRead: readLimitOf}
		c, err := d.DialContext(WithReadLimit(context.Background(), 1024), "tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(c)
		c.Close()
		ln.Close()
		if got := errors.Is(err, ErrTooLarge); got != tc.tooMany || len(data) > 1024 || (!tc.tooMany && len(data) != tc.size) {
			t.Errorf("%d bytes: read %d, err %v", tc.size, len(data), err)
		}
	}
}

// ProxyURL gives clients that take a proxy URL (go-git's ssh transport) the
// guarded dialer, with its settings.
func TestProxyURL(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_, _ = c.Write(make([]byte, 100))
			c.Close()
		}
	}()
	for _, allow := range []bool{false, true} {
		u, _ := url.Parse(ProxyURL(ProxyConfig{AllowLoopback: allow, MaxRead: 10, ConnectTimeout: time.Second, Lifetime: time.Minute}))
		d, err := proxy.FromURL(u, proxy.Direct)
		if err != nil {
			t.Fatal(err)
		}
		c, err := d.(proxy.ContextDialer).DialContext(context.Background(), "tcp", ln.Addr().String())
		if !allow {
			if !errors.Is(err, ErrBlockedAddress) {
				t.Errorf("loopback refused: err = %v", err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		_, err = io.ReadAll(c)
		c.Close()
		if !errors.Is(err, ErrTooLarge) {
			t.Errorf("read limit: err = %v", err)
		}
	}
}

// A per-request client takes the loopback allowance from each request's
// context, refusing without it, and keeps no connection for the next one.
func TestPerRequestLoopback(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("ok")) }))
	defer srv.Close()
	c := NewPerRequest(Config{AllowLoopback: true}) // ignored: the context decides
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		ctx     context.Context
		blocked bool
	}{
		{"no allowance", ctx, true},
		{"allowed", WithLoopback(ctx, true), false},
		{"refused after an allowed one", WithLoopback(ctx, false), true},
	} {
		_, err := c.Fetch(tc.ctx, srv.URL)
		if got := errors.Is(err, ErrBlockedAddress); got != tc.blocked {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}
