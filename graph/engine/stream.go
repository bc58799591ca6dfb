package engine

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

// A subscription's events reach its websocket without gqlgen's transport
// in between. The application offers each event to all its subscriptions
// at once (graph/live/delivery.go), makes each distinct response once, with
// the executor of one of the subscriptions that share it (Respond), and
// writes those bytes to every one of them, each message framed with its
// own operation id (Send). gqlgen's goroutine of the subscription only
// starts it, and ends it (complete, or the error of a token no longer
// valid) once the application says it is over (End) or the client
// completes it.
//
// Two subscriptions make the same bytes from one event when they have the
// same shape (document, operation name and variables) and run as the same
// caller, or when their selection is plain (the response then depends on
// the event alone). Who may receive an event at all is the application's
// decision, made for each subscription before any response is shared.

// Stream is one subscription of a websocket, as the application delivers
// its events.
type Stream struct {
	socket *socket
	// tail ends each message: the operation's id and the protocol's type
	// of a result (`,"id":"1","type":"next"}`).
	tail  []byte
	shape [32]byte
	plain bool

	// responding serialises the responses made with the subscription's
	// executor (next reuses one buffer, and reads the resolver's
	// channel); held while the operation is dispatched, so that no
	// response is asked for before next is known.
	responding sync.Mutex
	next       graphql.ResponseHandler
	ctx        context.Context

	mu      sync.Mutex
	started bool
	ended   bool
	done    chan struct{}
}

// ErrStreamEnded is Send's answer once the subscription is over: nothing
// more may be written under its id, which the client may use again.
var ErrStreamEnded = errors.New("the subscription has ended")

// ErrTooSlow is Send's answer when the subscriber's connection already
// holds MaxEventsBehind events its client has not taken: the connection is
// being closed with CloseTooSlow.
var ErrTooSlow = errors.New("too slow: events were left unread")

type streamKey struct{}

func newStream(s *socket, id string, rc *graphql.OperationContext) *Stream {
	typ := "next"
	if s.direct.Subprotocol() != "graphql-transport-ws" {
		typ = "data" // graphql-ws
	}
	quoted, _ := json.Marshal(id)
	st := &Stream{socket: s, done: make(chan struct{}),
		tail: fmt.Appendf(nil, `,"id":%s,"type":%q}`, quoted, typ)}
	st.shape = shapeOf(rc)
	return st
}

// shapeOf identifies what rc's responses are made of: its document, the
// operation chosen in it and its variables. A shape that cannot be told
// (variables that do not encode) is unique.
func shapeOf(rc *graphql.OperationContext) [32]byte {
	vars, err := json.Marshal(rc.Variables)
	if err != nil {
		var unique [32]byte
		_, _ = rand.Read(unique[:])
		return unique
	}
	h := sha256.New()
	for _, part := range [][]byte{[]byte(rc.RawQuery), []byte(rc.OperationName), vars} {
		h.Write(part)
		h.Write([]byte{0})
	}
	return [32]byte(h.Sum(nil))
}

// StreamOf returns the stream of the subscription whose resolver runs
// with ctx (nil outside a websocket's subscription), having read from ctx,
// the subscription field's, whether its selection is plain. Its resolver
// calls it once, before the stream is shared with the goroutines that
// deliver events.
func StreamOf(ctx context.Context) *Stream {
	st, _ := ctx.Value(streamKey{}).(*Stream)
	if st != nil {
		st.plain = plainSelection(ctx)
	}
	return st
}

// Start tells that the subscription's resolver has subscribed: its events
// are delivered through Respond and Send from now on, until End.
func (st *Stream) Start() {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.started = true
}

// Shape identifies what the subscription's responses are made of (its
// document, operation name and variables).
func (st *Stream) Shape() [32]byte { return st.shape }

// Plain tells whether every field the subscription selects below its root
// field is plain data of the event (plainSelection): its response to an
// event is then the same whoever receives it.
func (st *Stream) Plain() bool { return st.plain }

// Respond makes the subscription's response to the value feed puts on its
// resolver's channel, with the subscription's executor and the context of
// its operation as with returns it (the caller, loaders), and returns the
// message's payload. The operation's end does not interrupt it: the
// response may be for other subscriptions that share it.
func (st *Stream) Respond(feed func(), with func(context.Context) context.Context) (payload []byte, err error) {
	st.responding.Lock()
	defer st.responding.Unlock()
	defer func() {
		if p := recover(); p != nil {
			st.socket.sockets.Log.Error("panic making a subscription's response", "panic", p, "stack", string(debug.Stack()))
			payload, err = nil, errors.New("internal error")
		}
	}()
	feed()
	resp := st.next(with(context.WithoutCancel(st.ctx)))
	if resp == nil {
		return nil, errors.New("the subscription made no response")
	}
	return json.Marshal(resp)
}

// Send writes a message carrying payload (made by Respond, maybe for
// another subscription of the same shape) to the subscription's client,
// without waiting for it (backlogConn). It fails once the subscription is
// over (ErrStreamEnded), or when the client has left too many events
// unread (ErrTooSlow: the connection is being closed with CloseTooSlow).
func (st *Stream) Send(payload []byte) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.ended {
		return ErrStreamEnded
	}
	buf := messages.Get().(*[]byte)
	defer messages.Put(buf)
	*buf = append(append(append((*buf)[:0], `{"payload":`...), payload...), st.tail...)
	return st.socket.sendEvent(*buf)
}

// messages are the buffers messages are framed in: the socket copies a
// message as it writes it, and thousands are written per event.
var messages = sync.Pool{New: func() any { return new([]byte) }}

// CloseTooSlow closes the subscription's connection with CloseTooSlow: its
// client left more events unread than the application keeps for it.
func (st *Stream) CloseTooSlow() { st.socket.close(CloseTooSlow, ErrTooSlow.Error()) }

// End ends the subscription: nothing more is sent under its id, and the
// client is told it completed (or, when the connection's token is no
// longer valid, why). A Send under way is written before.
func (st *Stream) End() {
	st.mu.Lock()
	defer st.mu.Unlock()
	if !st.ended {
		st.ended = true
		close(st.done)
	}
}

// isStarted tells whether the resolver subscribed (Start).
func (st *Stream) isStarted() bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.started
}

// plainSelection tells whether every field selected below the
// subscription field of ctx is plain data of the event: __typename, or a
// field of a scalar or enum type, without arguments, read from the event's
// Go value itself, not by a resolver or a method (which may look at the
// caller). Fragments count whatever their type condition and directives,
// so the fields executed are among those looked at. The field interceptors
// pass leaf values on unchanged (the authorizer checks objects), so a plain
// selection's response depends on the event alone.
func plainSelection(ctx context.Context) bool {
	if !graphql.HasOperationContext(ctx) {
		return false
	}
	fc := graphql.GetFieldContext(ctx)
	if fc == nil || fc.Child == nil {
		return false
	}
	return plainFields(ctx, graphql.GetOperationContext(ctx), fc, fc.Field.Selections)
}

func plainFields(ctx context.Context, oc *graphql.OperationContext, fc *graphql.FieldContext, set ast.SelectionSet) bool {
	for _, sel := range set {
		switch s := sel.(type) {
		case *ast.Field:
			if s.Name == "__typename" {
				continue
			}
			if len(s.SelectionSet) > 0 || len(s.Arguments) > 0 {
				return false
			}
			child, err := fc.Child(ctx, graphql.CollectedField{Field: s})
			if err != nil || child.IsMethod || child.IsResolver {
				return false
			}
		case *ast.InlineFragment:
			if !plainFields(ctx, oc, fc, s.SelectionSet) {
				return false
			}
		case *ast.FragmentSpread:
			def := s.Definition
			if def == nil && oc.Doc != nil {
				def = oc.Doc.Fragments.ForName(s.Name)
			}
			if def == nil || !plainFields(ctx, oc, fc, def.SelectionSet) {
				return false
			}
		default:
			return false
		}
	}
	return true
}
