package outbound

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"
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
		{"127.0.0.1", true, false},
		{"::1", true, false},
		{"10.1.2.3", true, false},
		{"172.16.0.1", true, false},
		{"192.168.1.1", true, false},
		{"100.64.0.1", true, false},
		{"fd00::1", true, false},
		{"::ffff:127.0.0.1", true, false},
		{"169.254.169.254", true, true},
		{"fe80::1", true, true},
		{"0.0.0.0", true, true},
		{"::", true, true},
		{"224.0.0.1", true, true},
		{"ff02::1", true, true},
		{"255.255.255.255", true, true},
		{"93.184.216.34", false, false},
		{"2606:4700::1", false, false},
	} {
		ip := netip.MustParseAddr(tc.ip)
		if got := Blocked(ip, false); got != tc.blocked {
			t.Errorf("Blocked(%s) = %v, want %v", tc.ip, got, tc.blocked)
		}
		if got := Blocked(ip, true); got != tc.allow {
			t.Errorf("Blocked(%s, allowLoopback) = %v, want %v", tc.ip, got, tc.allow)
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
