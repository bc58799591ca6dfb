package outbound

import (
	"context"
	"net/url"
	"strconv"
	"sync"
	"time"

	"golang.org/x/net/proxy"
)

// proxyScheme names the guarded Dialer as a golang.org/x/net/proxy "proxy"
// URL. Some clients take no dialer but do take a proxy URL, which they open
// with proxy.FromURL: go-git's ssh transport is one. Given ProxyURL, such a
// client connects through the Dialer, and its target is checked like any
// other; no proxy server is involved.
const proxyScheme = "docsapi-guarded"

var registerProxy = sync.OnceFunc(func() {
	proxy.RegisterDialerType(proxyScheme, func(u *url.URL, _ proxy.Dialer) (proxy.Dialer, error) {
		q := u.Query()
		allow := q.Get("loopback") == "1"
		maxRead, _ := strconv.ParseInt(q.Get("max-read"), 10, 64)
		connect, _ := time.ParseDuration(q.Get("connect-timeout"))
		lifetime, _ := time.ParseDuration(q.Get("lifetime"))
		return &Dialer{
			ConnectTimeout: connect,
			AllowLoopback:  func(_ context.Context) bool { return allow },
			MaxRead:        func(_ context.Context) int64 { return maxRead },
			Lifetime:       lifetime,
		}, nil
	})
})

// ProxyConfig is what ProxyURL's dialer does: whether it may reach loopback
// and private addresses, how many bytes a connection may read (0: no bound),
// and how long it may take to connect and to live (0: the default, no bound).
type ProxyConfig struct {
	AllowLoopback  bool
	MaxRead        int64
	ConnectTimeout time.Duration
	Lifetime       time.Duration
}

// ProxyURL returns the URL under which proxy.FromURL returns the guarded
// Dialer configured by cfg. A client that takes it as its proxy dials
// through the guard; the settings travel in the URL since such clients
// dial without the request's context.
func ProxyURL(cfg ProxyConfig) string {
	registerProxy()
	q := url.Values{}
	if cfg.AllowLoopback {
		q.Set("loopback", "1")
	}
	if cfg.MaxRead > 0 {
		q.Set("max-read", strconv.FormatInt(cfg.MaxRead, 10))
	}
	if cfg.ConnectTimeout > 0 {
		q.Set("connect-timeout", cfg.ConnectTimeout.String())
	}
	if cfg.Lifetime > 0 {
		q.Set("lifetime", cfg.Lifetime.String())
	}
	return (&url.URL{Scheme: proxyScheme, Host: "guard", RawQuery: q.Encode()}).String()
}
