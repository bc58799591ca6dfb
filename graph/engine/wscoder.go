package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/coder/websocket"
)

// acceptCoder accepts a websocket with coder/websocket, as gqlgen's
// transport.CoderWebsocketImplementation does, but keeps the library's
// connection at hand (coderConn.ws): subscriptions' events, JSON already,
// are written with its Write as they are, where gqlgen's WriteJSON would
// encode each again (json.Marshal of a json.RawMessage checks and copies
// it), thousands of times per event. Origins are checked before the
// upgrade (socketTransport.Do), by the matcher CORS shares, rather than by
// coder/websocket's own.
func acceptCoder(w http.ResponseWriter, r *http.Request, o transport.WebsocketAcceptOptions) (*coderConn, error) {
	for key, values := range o.ResponseHeader {
		for _, value := range values {
			w.Header().Add(key, value)
		}
	}
	options := websocket.AcceptOptions{InsecureSkipVerify: true, Subprotocols: o.Subprotocols}
	ws, err := websocket.Accept(w, r, &options)
	if err != nil {
		return nil, err
	}
	return &coderConn{ws: ws}, nil
}

// coderConn is a coder/websocket connection as gqlgen's transport uses it;
// it behaves as gqlgen's own adapter: the close handshake runs in the
// background (it may wait seconds for the client), and a read deadline
// closes the connection when it passes (the library has none).
type coderConn struct {
	ws *websocket.Conn

	mu           sync.Mutex
	readDeadline *time.Timer
	closing      bool
}

var (
	_ transport.WebsocketReadLimiter   = (*coderConn)(nil)
	_ transport.WebsocketReadDeadliner = (*coderConn)(nil)
)

func (c *coderConn) NextReader() (int, io.Reader, error) {
	typ, data, err := c.ws.Read(context.Background())
	if err != nil {
		switch websocket.CloseStatus(err) {
		case websocket.StatusNormalClosure, websocket.StatusNoStatusRcvd:
			err = transport.ErrWebsocketClosed
		}
		return int(typ), nil, err
	}
	return int(typ), bytes.NewReader(data), nil
}

func (c *coderConn) WriteJSON(v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return c.ws.Write(context.Background(), websocket.MessageText, data)
}

// writeText writes msg, JSON already, as a text message.
func (c *coderConn) writeText(msg []byte) error {
	return c.ws.Write(context.Background(), websocket.MessageText, msg)
}

func (c *coderConn) WriteClose(code int, reason string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stopReadDeadlineLocked()
	if !c.closing {
		c.closing = true
		go func() { _ = c.ws.Close(websocket.StatusCode(code), reason) }()
	}
	return nil
}

func (c *coderConn) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stopReadDeadlineLocked()
	if c.closing { // the close handshake's goroutine closes it
		return nil
	}
	return c.ws.CloseNow()
}

func (c *coderConn) Subprotocol() string { return c.ws.Subprotocol() }

func (c *coderConn) SetReadLimit(limit int64) { c.ws.SetReadLimit(limit) }

func (c *coderConn) SetReadDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stopReadDeadlineLocked()
	switch {
	case t.IsZero():
	case time.Until(t) <= 0:
		return c.ws.CloseNow()
	default:
		c.readDeadline = time.AfterFunc(time.Until(t), func() { _ = c.ws.CloseNow() })
	}
	return nil
}

func (c *coderConn) stopReadDeadlineLocked() {
	if c.readDeadline != nil {
		c.readDeadline.Stop()
		c.readDeadline = nil
	}
}
