package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"unicode/utf8"

	"github.com/99designs/gqlgen/graphql"
	"github.com/coder/websocket"
)

// Every message a client sends is checked here, before gqlgen's transport
// reads it, and a message that breaks the protocol closes the connection
// with graphql-transport-ws's code for it (the legacy graphql-ws protocol
// defines none, and gets the same). gqlgen's transport cannot be made to
// do it without forking it: it decodes messages with a decoder that takes
// data after the value; closes with 1000 ("terminated") or 1002 on an
// invalid message, an operation before connection_init or a second
// connection_init; leaves the connection open, unread and unclosed, when
// connection_init's payload is not an object; and takes an id already in
// use, after which the first operation under it can no longer be completed.

// The close codes of graphql-transport-ws, and RFC 6455's for messages
// that are not text (the protocols are text).
const (
	wsInvalidMessage     = 4400
	wsUnauthorized       = 4401
	wsSubscriberExists   = 4409
	wsTooManyInitRequest = 4429
	wsUnsupportedData    = int(websocket.StatusUnsupportedData)
	// wsInvalidPayload is RFC 6455's close code for a message whose data
	// is not consistent with its type (a text message not in UTF-8).
	wsInvalidPayload = int(websocket.StatusInvalidFramePayloadData)
	// maxOperationID bounds an operation's id, which every message of the
	// operation repeats (clients use counters or UUIDs).
	maxOperationID = 128
)

// clientMessages are the types of message a client may send, by
// subprotocol ("": none negotiated, which gqlgen takes for graphql-ws).
var clientMessages = map[string]struct{ init, operation, stop, others []string }{
	"graphql-transport-ws": {[]string{"connection_init"}, []string{"subscribe"}, []string{"complete"}, []string{"ping", "pong"}},
	"graphql-ws":           {[]string{"connection_init"}, []string{"start"}, []string{"stop"}, []string{"connection_terminate"}},
	"":                     {[]string{"connection_init"}, []string{"start"}, []string{"stop"}, []string{"connection_terminate"}},
}

// clientMessage is a message as a client sends it.
type clientMessage struct {
	Type    string          `json:"type"`
	ID      *string         `json:"id"`
	Payload json.RawMessage `json:"payload"`
}

// messageConn is a connection whose messages are checked before gqlgen
// reads them (the top of this file); it is read by gqlgen's one reading
// goroutine.
type messageConn struct {
	wrappedConn
	s *socket
	// initialised is set once connection_init is read.
	initialised bool
}

// protocolError closes the connection with code and reason, and is the
// error NextReader returns then.
func (c *messageConn) protocolError(code int, reason string) error {
	_ = c.WebsocketConn.WriteClose(code, reason)
	return fmt.Errorf("websocket: %s", reason)
}

func (c *messageConn) NextReader() (int, io.Reader, error) {
	c.s.dropUnclaimedID()
	typ, r, err := c.WebsocketConn.NextReader()
	if err != nil {
		return typ, r, err
	}
	if typ != int(websocket.MessageText) {
		return typ, nil, c.protocolError(wsUnsupportedData, "messages are text (JSON)")
	}
	// A message is bounded by the connection's read limit.
	msg, err := io.ReadAll(r)
	if err != nil {
		return typ, nil, err
	}
	if !utf8.Valid(msg) {
		// gqlgen's decoding would replace the bytes with U+FFFD (textCheck).
		return typ, nil, c.protocolError(wsInvalidPayload, "the message is not valid UTF-8")
	}
	if code, reason := c.check(msg); code != 0 {
		return typ, nil, c.protocolError(code, reason)
	}
	return typ, bytes.NewReader(msg), nil
}

// check tells why msg breaks the protocol: a close code and its reason, or
// 0. An operation's id it takes is in use from then on.
func (c *messageConn) check(msg []byte) (code int, reason string) {
	var m clientMessage
	if err := DecodeJSON(msg, &m); err != nil {
		return wsInvalidMessage, "invalid message: not one JSON object of type, id and payload"
	}
	types := clientMessages[c.Subprotocol()]
	isObject := func(raw json.RawMessage) bool { return len(raw) > 0 && raw[0] == '{' }
	switch {
	case slices.Contains(types.init, m.Type):
		if c.initialised {
			return wsTooManyInitRequest, "too many initialisation requests"
		}
		c.initialised = true
		if len(m.Payload) > 0 && string(m.Payload) != "null" && !isObject(m.Payload) {
			return wsInvalidMessage, "invalid message: the connection_init payload is not an object"
		}
	case slices.Contains(types.operation, m.Type):
		switch {
		case m.ID == nil || *m.ID == "" || len(*m.ID) > maxOperationID:
			return wsInvalidMessage, fmt.Sprintf("invalid message: an operation's id must be a string of 1 to %d bytes", maxOperationID)
		case !isObject(m.Payload):
			return wsInvalidMessage, `invalid message: an operation's payload must be an object {"query": "..."}`
		case !c.initialised:
			return wsUnauthorized, "unauthorized: connection_init first"
		case !c.s.claimID(*m.ID):
			// The reason is bounded: so is the id.
			return wsSubscriberExists, fmt.Sprintf("subscriber for %s already exists", *m.ID)
		}
	case slices.Contains(types.stop, m.Type):
		if m.ID == nil {
			return wsInvalidMessage, "invalid message: complete names the operation's id"
		}
	case slices.Contains(types.others, m.Type):
	default:
		return wsInvalidMessage, fmt.Sprintf("invalid message: a client does not send messages of type %.40q", m.Type)
	}
	return 0, ""
}

// An operation's id is in use from the message that starts it until gqlgen
// has forgotten it (its context ends, after its last message): a second
// operation under it meanwhile would take its place in gqlgen's table of
// operations, and complete could end only one of the two. gqlgen readies
// an operation (CreateOperationContext) in the goroutine that reads the
// messages, right after the message, so the id read last is the one the
// next operation context is readied for.

// liveID is an id in use.
type liveID struct {
	// ending is set once the operation has made its last response: its
	// complete is on its way, and the id is free once gqlgen forgets it.
	ending bool
	free   chan struct{}
}

// claimID takes id for the operation of the message just read; false if
// a live operation has it. An id whose operation is ending is waited for:
// its client may use it again once it has read its complete.
func (s *socket) claimID(id string) bool {
	s.mu.Lock()
	if live := s.ids[id]; live != nil {
		if !live.ending {
			s.mu.Unlock()
			return false
		}
		s.mu.Unlock()
		<-live.free
		s.mu.Lock()
	}
	defer s.mu.Unlock()
	if s.ids == nil {
		s.ids = map[string]*liveID{}
	}
	s.ids[id] = &liveID{free: make(chan struct{})}
	s.claimed = id
	return true
}

// dropUnclaimedID frees the id of the message read last if no operation
// was readied for it (gqlgen refused its payload).
func (s *socket) dropUnclaimedID() {
	s.mu.Lock()
	id := s.claimed
	s.claimed = ""
	s.mu.Unlock()
	if id != "" {
		s.freeID(id)
	}
}

// readied gives rc the id of the message read last, or frees it when
// gqlgen refused the operation (it has answered before it reads on).
func (s *socket) readied(rc *graphql.OperationContext) {
	s.mu.Lock()
	id := s.claimed
	s.claimed = ""
	if rc != nil && id != "" {
		if s.operationIDs == nil {
			s.operationIDs = map[*graphql.OperationContext]string{}
		}
		s.operationIDs[rc] = id
		id = ""
	}
	s.mu.Unlock()
	if id != "" {
		s.freeID(id)
	}
}

// operationID is the id of the operation of rc, which it forgets.
func (s *socket) operationID(rc *graphql.OperationContext) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := s.operationIDs[rc]
	delete(s.operationIDs, rc)
	return id
}

// ending marks id's operation as having made its last response.
func (s *socket) ending(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if live := s.ids[id]; live != nil {
		live.ending = true
	}
}

func (s *socket) freeID(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if live := s.ids[id]; live != nil {
		delete(s.ids, id)
		close(live.free)
	}
}
