package engine

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// GraphQL subscriptions over a websocket at /graphql. The connection speaks
// graphql-transport-ws (and the older graphql-ws). Its token is taken from
// the connection_init payload's Authorization member or the upgrade
// request's Authorization header; a connection with neither, or with a
// token that matches no one, is closed with 4403 after its connection_init,
// before any operation runs.
//
// The token is checked at connection_init, but the connection holds no
// caller: every operation is readied by the application's Session as of
// now (its caller resolved again, loaders of its own), as an HTTP request
// is. Once the token is found no longer valid (deleted, expired), the
// operation that found it, and every subscription of the connection, ends
// with an UNAUTHENTICATED error message, and the connection is then closed
// with 4403, the code connection_init refuses such a token with:
// graphql-ws clients report it to the application and reconnect (it is not
// among the codes they treat as fatal, 4401 is), calling connectionParams
// again, so a client that renews its token carries on and one that cannot
// is refused at connection_init.

// Sockets is what the websocket transport needs of the application.
type Sockets struct {
	// Origins may open sockets from a browser; clients that send no
	// Origin (not browsers) are not concerned.
	Origins Origins
	// Open checks connection_init's token and returns the connection's
	// session: ErrTokenInvalid for a token that matches no one.
	Open func(ctx context.Context, token string) (Session, error)
	// Log receives what goes wrong on the server's side.
	Log *slog.Logger
	// WriteTimeout bounds each write (default DefaultWriteTimeout);
	// SendBuffer is the kernel send buffer of each connection, in bytes
	// (default DefaultSendBuffer; negative: the system's).
	WriteTimeout time.Duration
	SendBuffer   int
}

// Session is a connection's state in the application.
type Session interface {
	// Begin readies the connection's context once connection_init is
	// accepted; what it starts ends with ctx, which ends with the
	// connection.
	Begin(ctx context.Context) context.Context
	// Operation readies ctx for one operation as of now (its caller, its
	// own loaders); ErrTokenInvalid once the token is no longer valid.
	Operation(ctx context.Context) (context.Context, error)
	// Revoked is closed once the token is found no longer valid; Revoke
	// closes it.
	Revoked() <-chan struct{}
	Revoke()
}

// ErrTokenInvalid is a session's answer for a token that matches no one, or
// no longer does.
var ErrTokenInvalid = errors.New("the bearer token is not valid")

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

// IsWebsocket tells a websocket upgrade request.
func IsWebsocket(r *http.Request) bool {
	return strings.EqualFold(r.Header.Get("Upgrade"), "websocket")
}

// socketTransport is the websocket transport of /graphql: gqlgen's, given
// per connection the state that keeps its operations to their caller as
// they are now (socket).
type socketTransport struct {
	base    transport.Websocket
	sockets Sockets
}

// Websocket is the websocket transport of /graphql, for Handler.
func Websocket(sockets Sockets) graphql.Transport {
	return socketTransport{
		// Implementation: Do gives each connection its own (acceptInto).
		base: transport.Websocket{
			InitTimeout:           wsInitTimeout,
			KeepAlivePingInterval: wsPingInterval,
			PingPongInterval:      wsPingInterval,
		},
		sockets: sockets,
	}
}

var _ graphql.Transport = socketTransport{}

func (t socketTransport) Supports(r *http.Request) bool { return t.base.Supports(r) }

func (t socketTransport) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	// SECURITY: a page of another site must not open a socket with the
	// browser's credentials, nor read what a token of its own would get
	// from an origin the operator did not allow (cross-site websocket
	// hijacking).
	if origin := r.Header.Get("Origin"); origin != "" && !t.sockets.Origins.Allowed(r, origin) {
		http.Error(w, "websocket: this Origin is not allowed", http.StatusForbidden)
		return
	}
	prepareWebsocket(w)
	s := &socket{sockets: t.sockets}
	s.headerToken, s.hasHeaderToken = bearer(r)
	ws := t.base
	ws.Implementation = acceptInto{s: s}
	ws.InitFunc = s.init
	ws.Do(w, r, socketExecutor{GraphExecutor: exec, s: s})
}

// socket is one websocket connection: its token, and what ends it once the
// token is no longer valid.
type socket struct {
	sockets        Sockets
	headerToken    string
	hasHeaderToken bool

	// Set before any operation runs: when the upgrade is accepted, conn
	// (what gqlgen writes to: its writes wait for out's backlog), direct
	// (subscriptions' events, written without waiting) and out (the TCP
	// connection under both); session by connection_init.
	conn    transport.WebsocketConn
	direct  *coderConn
	out     *backlogConn
	session Session

	mu     sync.Mutex
	ops    int // operations dispatched and not yet ended
	closed bool
	// The ids in use (wsmessages.go): by id; the id of the message read
	// last, until an operation is readied for it; by operation.
	ids          map[string]*liveID
	claimed      string
	operationIDs map[*graphql.OperationContext]string
}

// acceptInto accepts websockets (acceptCoder), and keeps the connection
// in s so that it can be closed with a code of the server's and written to
// directly (subscriptions' events).
type acceptInto struct{ s *socket }

func (a acceptInto) Accept(w http.ResponseWriter, r *http.Request, o transport.WebsocketAcceptOptions) (transport.WebsocketConn, error) {
	buffer := a.s.sockets.SendBuffer
	if buffer == 0 {
		buffer = DefaultSendBuffer
	}
	hijack := sendBufferWriter{ResponseWriter: w, size: buffer, timeout: cmp.Or(a.s.sockets.WriteTimeout, DefaultWriteTimeout), out: &a.s.out}
	conn, err := acceptCoder(hijack, r, o)
	if err != nil {
		return nil, err
	}
	a.s.direct = conn
	a.s.conn = drainedConn{wrappedConn: wrappedConn{conn}, out: a.s.out}
	return &messageConn{wrappedConn: wrappedConn{a.s.conn}, s: a.s}, nil
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
	session, err := s.sockets.Open(ctx, token)
	if errors.Is(err, ErrTokenInvalid) {
		return transport.AppendCloseReason(refused, "unauthenticated"), nil, ErrTokenInvalid
	} else if err != nil {
		s.sockets.Log.ErrorContext(ctx, "authenticate websocket", "err", err)
		return transport.AppendCloseReason(transport.WithWebsocketCloseCode(ctx, 1011), "internal error"), nil, errors.New("internal error")
	}
	s.session = session
	// ctx is the upgrade request's, which ends when the transport returns.
	go func() {
		select {
		case <-session.Revoked():
			s.closeIfRevoked()
		case <-ctx.Done():
		}
	}()
	// Operations may close the connection with a code of their own
	// (CloseSocket: a subscriber too slow).
	return session.Begin(context.WithValue(ctx, socketKey{}, s)), nil, nil
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
	case <-s.session.Revoked():
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
// valid, presented as the error presenter presents an unauthenticated
// caller.
func unauthenticated() *gqlerror.Error {
	return &gqlerror.Error{Message: ErrTokenInvalid.Error(),
		Extensions: map[string]any{"code": "UNAUTHENTICATED", "status": http.StatusUnauthorized}}
}

// CreateOperationContext readies an operation in the goroutine that reads
// the messages, right after the message that starts it: it is given the
// message's id.
func (e socketExecutor) CreateOperationContext(ctx context.Context, params *graphql.RawParams) (*graphql.OperationContext, gqlerror.List) {
	rc, errs := e.GraphExecutor.CreateOperationContext(ctx, params)
	if errs != nil {
		e.s.readied(nil)
	} else {
		e.s.readied(rc)
	}
	return rc, errs
}

// DispatchOperation runs in the transport's goroutine of the operation; ctx
// ends (the transport cancels it) once the operation's last message is
// sent, and carries the operation's error list (transport.AddSubscriptionError),
// which the transport sends as an "error" message instead of "complete".
// The operation's id is free again once ctx ends.
func (e socketExecutor) DispatchOperation(ctx context.Context, rc *graphql.OperationContext) (graphql.ResponseHandler, context.Context) {
	id := e.s.operationID(rc)
	if id == "" {
		return e.dispatch(ctx, rc, id)
	}
	context.AfterFunc(ctx, func() { e.s.freeID(id) })
	next, ctx := e.dispatch(ctx, rc, id)
	return func(ctx context.Context) *graphql.Response {
		resp := next(ctx)
		if ctx.Err() != nil {
			// Completed by the client (or the connection gone): nothing
			// more is sent for it, the errors of its cancellation included.
			resp = nil
		}
		if resp == nil {
			e.s.ending(id)
		}
		return resp
	}, ctx
}

func (e socketExecutor) dispatch(ctx context.Context, rc *graphql.OperationContext, id string) (graphql.ResponseHandler, context.Context) {
	s := e.s
	s.started()
	context.AfterFunc(ctx, s.ended)
	// SECURITY: the operation as of now, as an HTTP request is: nothing of
	// the caller at connection_init, or of an earlier operation, is used.
	ctx, err := s.session.Operation(ctx)
	if err != nil {
		gqlErr := unauthenticated()
		if errors.Is(err, ErrTokenInvalid) {
			s.session.Revoke()
		} else {
			s.sockets.Log.ErrorContext(ctx, "authenticate websocket operation", "err", err)
			gqlErr = &gqlerror.Error{Message: "internal error", Extensions: map[string]any{"code": "INTERNAL", "status": http.StatusInternalServerError}}
		}
		transport.AddSubscriptionError(ctx, gqlErr)
		return func(context.Context) *graphql.Response { return nil }, ctx
	}
	if rc.Operation.Operation != ast.Subscription || id == "" {
		return e.GraphExecutor.DispatchOperation(ctx, rc)
	}
	// The subscription's resolver, run by DispatchOperation, finds its
	// stream in ctx (StreamOf), and Starts it once subscribed.
	st := newStream(s, id, rc)
	st.responding.Lock()
	next, ctx := e.GraphExecutor.DispatchOperation(context.WithValue(ctx, streamKey{}, st), rc)
	st.next, st.ctx = next, ctx
	st.responding.Unlock()
	if !st.isStarted() {
		// A subscription refused (not found, over a limit): the protocol's
		// error message, rather than a result and complete.
		return func(ctx context.Context) *graphql.Response {
			resp := next(ctx)
			if ctx.Err() != nil {
				return nil
			}
			if resp != nil && len(resp.Errors) > 0 && (len(resp.Data) == 0 || string(resp.Data) == "null") {
				for _, err := range resp.Errors {
					transport.AddSubscriptionError(ctx, err)
				}
				return nil
			}
			return resp
		}, ctx
	}
	return func(ctx context.Context) *graphql.Response {
		// The events are the application's to send (Stream); this
		// goroutine waits for the subscription's end, then ends it here.
		select {
		case <-st.done:
		case <-ctx.Done():
		}
		st.End()
		if ctx.Err() != nil {
			// The client completed the subscription (or went): it is told
			// nothing more.
			return nil
		}
		select {
		case <-s.session.Revoked():
			// SECURITY: the subscription ended because its token is no
			// longer valid; the client is told so, not that it completed.
			transport.AddSubscriptionError(ctx, unauthenticated())
		default:
		}
		return nil
	}, ctx
}

// payloadToken is the token of a connection_init payload's
// Authorization member ("Bearer <token>").
func payloadToken(p transport.InitPayload) (string, bool) {
	return bearerToken(p.Authorization())
}

// bearer returns the token of a request's "Authorization: Bearer <token>"
// header.
func bearer(r *http.Request) (string, bool) { return bearerToken(r.Header.Get("Authorization")) }

// bearerToken reads "Bearer <token>".
func bearerToken(h string) (string, bool) {
	scheme, token, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(token) == "" {
		return "", false
	}
	return strings.TrimSpace(token), true
}

// prepareWebsocket readies an upgrade request for a connection that
// outlives the server's request time limits: it clears the read and write
// deadlines (net/http leaves them on a hijacked connection).
func prepareWebsocket(w http.ResponseWriter) {
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Time{})
	_ = rc.SetWriteDeadline(time.Time{})
}
