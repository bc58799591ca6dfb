package rest

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/coder/websocket"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/docsapi/docsapi/graph"
	"github.com/docsapi/docsapi/store"
)

// GraphQL subscriptions over a websocket at /graphql (graph/subscription.go
// for the fields, graph/live.go for how events arrive). The connection
// speaks graphql-transport-ws (and the older graphql-ws). Its token is taken
// from the connection_init payload's Authorization member or the upgrade
// request's Authorization header; a connection with neither, or with a
// token that matches no one, is closed with 4403 after its connection_init,
// before any operation runs.
//
// The token is checked at connection_init, but the connection holds no
// caller: every operation resolves its caller again, as of now (the caller
// cache of store/callers.go), with loaders of its own, as an HTTP request
// does; subscriptions re-resolve theirs at each event and re-check between
// events (graph.LiveConnection.Watch). Once the token is found no longer
// valid (deleted, expired), the operation that found it, and every
// subscription of the connection, ends with an UNAUTHENTICATED error
// message, and the connection is then closed with 4403, the code
// connection_init refuses such a token with: graphql-ws clients report it
// to the application and reconnect (it is not among the codes they treat
// as fatal, 4401 is), calling connectionParams again, so a client that
// renews its token carries on and one that cannot is refused at
// connection_init.

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
	// wsUnauthenticated is the close code of a connection whose token is
	// not (or no longer) valid.
	wsUnauthenticated = 4403
)

// socketTransport is the websocket transport of /graphql: gqlgen's, given
// per connection the state that keeps its operations to their caller as
// they are now (socket).
type socketTransport struct {
	base    transport.Websocket
	auth    authenticator
	recheck time.Duration
}

// websocketTransport is the websocket transport of /graphql. Browsers may
// open it from the API's own origin (that of the public URL or the Host the
// request names) and from origins, host patterns as coder/websocket reads
// them ("docs.example.com", "*.example.com"); clients that send no Origin
// (not browsers) are not concerned. Subscriptions re-check their caller
// every recheck at the longest (0: graph.DefaultLiveRecheck).
func websocketTransport(a authenticator, publicURL string, origins []string, recheck time.Duration) socketTransport {
	patterns := append([]string(nil), origins...)
	if u, err := url.Parse(publicURL); err == nil && u.Host != "" {
		patterns = append(patterns, u.Host)
	}
	return socketTransport{
		base: transport.Websocket{
			Implementation:        transport.CoderWebsocketImplementation{AcceptOptions: websocket.AcceptOptions{OriginPatterns: patterns}},
			InitTimeout:           wsInitTimeout,
			KeepAlivePingInterval: wsPingInterval,
			PingPongInterval:      wsPingInterval,
		},
		auth:    a,
		recheck: recheck,
	}
}

var _ graphql.Transport = socketTransport{}

func (t socketTransport) Supports(r *http.Request) bool { return t.base.Supports(r) }

func (t socketTransport) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	s := &socket{auth: t.auth, recheck: t.recheck}
	s.headerToken, s.hasHeaderToken = bearer(r)
	ws := t.base
	ws.Implementation = acceptInto{WebsocketImplementation: t.base.Implementation, s: s}
	ws.InitFunc = s.init
	// SECURITY: the connection holds no caller (the upgrade request's,
	// when its header had a token, is masked): only an operation gets one,
	// resolved as it starts.
	r = r.WithContext(graph.WithCaller(r.Context(), nil))
	ws.Do(w, r, socketExecutor{GraphExecutor: exec, s: s})
}

// socket is one websocket connection: its token, and what ends it once the
// token is no longer valid.
type socket struct {
	auth           authenticator
	recheck        time.Duration
	headerToken    string
	hasHeaderToken bool

	// Set before any operation runs: conn when the upgrade is accepted,
	// token and live by connection_init.
	conn  transport.WebsocketConn
	token string
	live  *graph.LiveConnection

	mu     sync.Mutex
	ops    int // operations dispatched and not yet ended
	closed bool
}

// acceptInto accepts websockets as its implementation does, and keeps the
// connection in s so that it can be closed with a code of the server's.
type acceptInto struct {
	transport.WebsocketImplementation
	s *socket
}

func (a acceptInto) Accept(w http.ResponseWriter, r *http.Request, o transport.WebsocketAcceptOptions) (transport.WebsocketConn, error) {
	conn, err := a.WebsocketImplementation.Accept(w, r, o)
	a.s.conn = conn
	return conn, err
}

// init authenticates connection_init.
func (s *socket) init(ctx context.Context, payload transport.InitPayload) (context.Context, *transport.InitPayload, error) {
	token, ok := payloadToken(payload)
	if !ok {
		token, ok = s.headerToken, s.hasHeaderToken
	}
	refused := transport.WithWebsocketCloseCode(ctx, wsUnauthenticated)
	if !ok {
		return transport.AppendCloseReason(refused, "unauthenticated"), nil,
			errors.New(`authentication required: send {"Authorization": "Bearer <API token>"} as the connection_init payload`)
	}
	_, err := s.auth.callerOf(ctx, token)
	if errors.Is(err, graph.ErrUnauthenticated) {
		return transport.AppendCloseReason(refused, "unauthenticated"), nil, errors.New("the bearer token is not valid")
	} else if err != nil {
		s.auth.log.ErrorContext(ctx, "authenticate websocket", "err", err)
		return transport.AppendCloseReason(transport.WithWebsocketCloseCode(ctx, 1011), "internal error"), nil, errors.New("internal error")
	}
	s.token = token
	s.live = &graph.LiveConnection{Caller: s.caller, MaxSubscriptions: MaxSubscriptionsPerConnection,
		Changed: s.auth.db.Callers.Changed, RecheckEvery: s.recheck}
	// Both end with the connection: ctx is the upgrade request's, which
	// ends when the transport returns.
	go s.live.Watch(ctx, s.auth.log)
	go func() {
		select {
		case <-s.live.Revoked():
			s.closeIfRevoked()
		case <-ctx.Done():
		}
	}()
	return graph.WithLiveConnection(ctx, s.live), nil, nil
}

// caller resolves the connection's token as of now: ErrUnauthenticated once
// it is deleted or expired, or the connection revoked.
func (s *socket) caller(ctx context.Context) (*graph.Caller, error) {
	select {
	case <-s.live.Revoked():
		return nil, graph.ErrUnauthenticated
	default:
	}
	return s.auth.callerOf(ctx, s.token)
}

// started and ended count the operations in flight; the connection of a
// revoked token is closed once the last has sent its last message.
func (s *socket) started() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ops++
}

func (s *socket) ended() {
	s.mu.Lock()
	s.ops--
	s.mu.Unlock()
	s.closeIfRevoked()
}

// closeIfRevoked closes a revoked connection (4403) once no operation is in
// flight: each has told its client why it ended first.
func (s *socket) closeIfRevoked() {
	select {
	case <-s.live.Revoked():
	default:
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ops > 0 || s.closed || s.conn == nil {
		return
	}
	s.closed = true
	_ = s.conn.WriteClose(wsUnauthenticated, "unauthenticated")
}

// socketExecutor runs a connection's operations, each with its caller as of
// now and loaders of its own.
type socketExecutor struct {
	graphql.GraphExecutor
	s *socket
}

// unauthenticated is the error of an operation whose token is no longer
// valid, presented as the error presenter presents graph.ErrUnauthenticated.
func unauthenticated() *gqlerror.Error {
	return &gqlerror.Error{Message: "the bearer token is not valid",
		Extensions: map[string]any{"code": graph.ErrUnauthenticated.Code, "status": graph.ErrUnauthenticated.Status}}
}

// DispatchOperation runs in the transport's goroutine of the operation; ctx
// ends (the transport cancels it) once the operation's last message is
// sent, and carries the operation's error list (transport.AddSubscriptionError),
// which the transport sends as an "error" message instead of "complete".
func (e socketExecutor) DispatchOperation(ctx context.Context, rc *graphql.OperationContext) (graphql.ResponseHandler, context.Context) {
	s := e.s
	s.started()
	context.AfterFunc(ctx, s.ended)
	// SECURITY: the caller as of now, as an HTTP request resolves it: the
	// token still valid and unexpired, the memberships as they are (the
	// caller cache, emptied by every change to them). Nothing of the
	// caller at connection_init, or of an earlier operation, is used.
	caller, err := s.caller(ctx)
	if err != nil {
		gqlErr := unauthenticated()
		if errors.Is(err, graph.ErrUnauthenticated) {
			s.live.Revoke()
		} else {
			s.auth.log.ErrorContext(ctx, "authenticate websocket operation", "err", err)
			gqlErr = &gqlerror.Error{Message: "internal error", Extensions: map[string]any{"code": "INTERNAL", "status": http.StatusInternalServerError}}
		}
		transport.AddSubscriptionError(ctx, gqlErr)
		return func(context.Context) *graphql.Response { return nil }, ctx
	}
	// Fresh loaders and query counter, as perRequest gives an HTTP request:
	// nothing read for one operation is served to another.
	ctx, _ = store.WithQueryCounter(ctx)
	ctx = graph.WithLoaders(graph.WithCaller(ctx, caller), graph.NewLoaders(s.auth.db))
	next, ctx := e.GraphExecutor.DispatchOperation(ctx, rc)
	if rc.Operation.Operation != ast.Subscription {
		return next, ctx
	}
	return func(ctx context.Context) *graphql.Response {
		resp := next(ctx)
		if resp == nil {
			select {
			case <-s.live.Revoked():
				// SECURITY: the subscription ended because its token is no
				// longer valid; the client is told so, not that it completed.
				transport.AddSubscriptionError(ctx, unauthenticated())
			default:
			}
		}
		return resp
	}, ctx
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
// deadlines (net/http leaves them on a hijacked connection).
func prepareWebsocket(w http.ResponseWriter) {
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Time{})
	_ = rc.SetWriteDeadline(time.Time{})
}
