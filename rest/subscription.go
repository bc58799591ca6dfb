package rest

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/coder/websocket"

	"github.com/docsapi/docsapi/graph"
)

// GraphQL subscriptions over a websocket at /graphql (graph/subscription.go
// for the fields, graph/live.go for how events arrive). The connection
// speaks graphql-transport-ws (and the older graphql-ws); its caller is
// resolved from the bearer token exactly as for HTTP (the caller cache of
// store/callers.go), taken from the connection_init payload's
// Authorization member or the upgrade request's Authorization header. A
// connection with neither, or with a token that matches no one, is closed
// with 4403 after its connection_init, before any operation runs.

const (
	// MaxSubscriptionsPerConnection bounds the subscriptions one websocket
	// holds at once.
	MaxSubscriptionsPerConnection = 20
	// wsInitTimeout is how long a connection may wait before connection_init.
	wsInitTimeout = 10 * time.Second
	// wsPingInterval spaces the server's pings (graphql-transport-ws) and
	// keep-alive messages (graphql-ws); a client that does not answer a
	// ping within two intervals is disconnected.
	wsPingInterval = 25 * time.Second
)

// upgradeTokenKey carries the token of the upgrade request's Authorization
// header to the connection's init.
type upgradeTokenKey struct{}

// websocketTransport is the websocket transport of /graphql. Browsers may
// open it from the API's own origin (that of the public URL or the Host the
// request names) and from origins, host patterns as coder/websocket reads
// them ("docs.example.com", "*.example.com"); clients that send no Origin
// (not browsers) are not concerned.
func websocketTransport(a authenticator, publicURL string, origins []string) transport.Websocket {
	patterns := append([]string(nil), origins...)
	if u, err := url.Parse(publicURL); err == nil && u.Host != "" {
		patterns = append(patterns, u.Host)
	}
	return transport.Websocket{
		Implementation:        transport.CoderWebsocketImplementation{AcceptOptions: websocket.AcceptOptions{OriginPatterns: patterns}},
		InitTimeout:           wsInitTimeout,
		KeepAlivePingInterval: wsPingInterval,
		PingPongInterval:      wsPingInterval,
		InitFunc: func(ctx context.Context, payload transport.InitPayload) (context.Context, *transport.InitPayload, error) {
			token, ok := payloadToken(payload)
			if !ok {
				token, ok = ctx.Value(upgradeTokenKey{}).(string)
			}
			refused := transport.WithWebsocketCloseCode(ctx, 4403)
			if !ok {
				return transport.AppendCloseReason(refused, "unauthenticated"), nil,
					errors.New(`authentication required: send {"Authorization": "Bearer <API token>"} as the connection_init payload`)
			}
			resolve := func(ctx context.Context) (*graph.Caller, error) { return a.callerOf(ctx, token) }
			caller, err := resolve(ctx)
			if errors.Is(err, graph.ErrUnauthenticated) {
				return transport.AppendCloseReason(refused, "unauthenticated"), nil, errors.New("the bearer token is not valid")
			} else if err != nil {
				a.log.ErrorContext(ctx, "authenticate websocket", "err", err)
				return transport.AppendCloseReason(transport.WithWebsocketCloseCode(ctx, 1011), "internal error"), nil, errors.New("internal error")
			}
			ctx = graph.WithCaller(ctx, caller)
			ctx = graph.WithLiveConnection(ctx, &graph.LiveConnection{Caller: resolve, MaxSubscriptions: MaxSubscriptionsPerConnection})
			return ctx, nil, nil
		},
	}
}

// payloadToken is the token of a connection_init payload's
// Authorization member ("Bearer <token>").
func payloadToken(p transport.InitPayload) (string, bool) {
	scheme, token, ok := strings.Cut(p.Authorization(), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(token) == "" {
		return "", false
	}
	return strings.TrimSpace(token), true
}

// isWebsocket tells a websocket upgrade request.
func isWebsocket(r *http.Request) bool {
	return strings.EqualFold(r.Header.Get("Upgrade"), "websocket")
}

// prepareWebsocket readies an upgrade request for a connection that
// outlives the server's request time limits: it clears the read and write
// deadlines (net/http leaves them on a hijacked connection) and hands the
// header's token to the connection's init.
func prepareWebsocket(w http.ResponseWriter, r *http.Request) *http.Request {
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Time{})
	_ = rc.SetWriteDeadline(time.Time{})
	if token, ok := bearer(r); ok {
		r = r.WithContext(context.WithValue(r.Context(), upgradeTokenKey{}, token))
	}
	return r
}
