package wholeserver_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/docsapi/docsapi/cmd/docsapi/server/servertest"
	"github.com/docsapi/docsapi/graph"
)

// wsProtocol names the client's messages of a websocket subprotocol.
type wsProtocol struct {
	name, subscribe, complete, result string
}

var wsProtocols = []wsProtocol{
	{name: "graphql-transport-ws", subscribe: "subscribe", complete: "complete", result: "next"},
	{name: "graphql-ws", subscribe: "start", complete: "stop", result: "data"},
}

// wsFrame is a message as the client writes it.
type wsFrame struct {
	binary bool
	data   string
}

func text(format string, args ...any) wsFrame { return wsFrame{data: fmt.Sprintf(format, args...)} }

// write writes f, ignoring errors: the server may have closed the
// connection already, which the test then reads.
func (c *wsClient) write(f wsFrame) {
	typ := websocket.MessageText
	if f.binary {
		typ = websocket.MessageBinary
	}
	ctx, cancel := context.WithTimeout(context.Background(), wsWait)
	defer cancel()
	_ = c.conn.Write(ctx, typ, []byte(f.data))
}

// closeWithin waits, at most wsWait, for the server to close the
// connection, and returns its close code (0: still open).
func (c *wsClient) closeWithin() websocket.StatusCode {
	c.t.Helper()
	deadline := time.After(wsWait)
	for {
		select {
		case _, ok := <-c.msgs:
			if !ok {
				return websocket.CloseStatus(<-c.closed)
			}
		case <-deadline:
			return 0
		}
	}
}

// run sends operation id and returns the messages that answer it, up to
// its complete or error.
func (c *wsClient) run(p wsProtocol, id, query string) []wsMessage {
	c.t.Helper()
	c.write(text(`{"type":%q,"id":%q,"payload":{"query":%q}}`, p.subscribe, id, query))
	var got []wsMessage
	for {
		m := c.next()
		if m.Type == "" {
			c.t.Fatalf("operation %s: the connection closed after %+v", id, got)
		}
		if m.ID != id {
			c.t.Fatalf("operation %s: got %s for %q: %s", id, m.Type, m.ID, m.Payload)
		}
		if got = append(got, m); m.Type == "complete" || m.Type == "error" {
			return got
		}
	}
}

// expectViewer runs { viewer { id } } and fails unless it answers u.
func (c *wsClient) expectViewer(p wsProtocol, id string, u *servertest.User) {
	c.t.Helper()
	got := c.run(p, id, `{ viewer { id } }`)
	if len(got) != 2 || got[0].Type != p.result || !strings.Contains(string(got[0].Payload), `"id":"`+u.ID+`"`) {
		c.t.Fatalf("viewer over the socket: %+v", got)
	}
}

// Messages that break the protocol, over both subprotocols: each closes
// the connection with the code graphql-transport-ws gives it (4400 an
// invalid message, 4401 an operation before connection_init, 4403 a token
// refused, 4409 an id in use, 4429 a second connection_init; RFC 6455's
// 1003 a binary message, 1009 one past the read limit), or is answered
// and leaves the connection usable. The server stays healthy, and nothing
// of the connections outlives them: no subscription, no goroutine.
//
// Not parallel: it counts the process's goroutines.
func TestWebsocketRefusesHostileMessages(t *testing.T) {
	env := servertest.New(t)
	alice, bob := env.NewUser("Alice"), env.NewUser("Bob")
	org := alice.NewOrg("Acme")
	space := alice.Do("POST", "/v1/orgs/"+org+"/spaces", `{"title":"Docs"}`).Expect(http.StatusCreated).String("id")
	init := text(`{"type":"connection_init","payload":{"Authorization":"Bearer %s"}}`, alice.Token)
	subscription := fmt.Sprintf(`subscription { spaceEvents(spaceId: %q) { id } }`, space)
	// A connection first, so that what the first one starts once is counted.
	warm := connectWS(t, env, alice)
	warm.expectViewer(wsProtocols[0], "1", alice)
	_ = warm.conn.Close(websocket.StatusNormalClosure, "")
	warm.closeStatus()
	time.Sleep(100 * time.Millisecond)
	before := goroutines()

	for _, p := range wsProtocols {
		op := func(id, query string) wsFrame {
			return text(`{"type":%q,"id":%q,"payload":{"query":%q}}`, p.subscribe, id, query)
		}
		for _, tc := range []struct {
			what   string
			init   bool // connection_init as Alice first, acknowledged
			frames []wsFrame
			// close is the code the connection is closed with; 0: it stays
			// open, and then (when set) checks what it answered.
			close websocket.StatusCode
			then  func(c *wsClient)
		}{
			{what: "text that is not JSON", init: true, frames: []wsFrame{text("hello")}, close: 4400},
			{what: "text that is not JSON, before connection_init", frames: []wsFrame{text("hello")}, close: 4400},
			{what: "a message with trailing data", init: true, frames: []wsFrame{text(`{"type":%q,"id":"1"}x`, p.complete)}, close: 4400},
			{what: "a message followed by a '}'", init: true, frames: []wsFrame{text(`{"type":%q,"id":"1"}}`, p.complete)}, close: 4400},
			{what: "an operation followed by another", init: true, frames: []wsFrame{{data: op("1", "{ __typename }").data + op("2", "{ __typename }").data}}, close: 4400},
			{what: "connection_init with trailing data", frames: []wsFrame{{data: init.data + "}"}}, close: 4400},
			{what: "a JSON list", init: true, frames: []wsFrame{text(`[{"type":%q,"id":"1"}]`, p.complete)}, close: 4400},
			{what: "null", init: true, frames: []wsFrame{text("null")}, close: 4400},
			{what: "a string", init: true, frames: []wsFrame{text(`"ping"`)}, close: 4400},
			{what: "an unknown type", init: true, frames: []wsFrame{text(`{"type":"nope"}`)}, close: 4400},
			{what: "no type", init: true, frames: []wsFrame{text(`{"id":"1"}`)}, close: 4400},
			{what: "the type as a number", init: true, frames: []wsFrame{text(`{"type":5}`)}, close: 4400},
			{what: "a type the server sends", init: true, frames: []wsFrame{text(`{"type":%q,"id":"1","payload":{}}`, p.result)}, close: 4400},
			{what: "an operation without an id", init: true, frames: []wsFrame{text(`{"type":%q,"payload":{"query":"{ __typename }"}}`, p.subscribe)}, close: 4400},
			{what: "an id as a number", init: true, frames: []wsFrame{text(`{"type":%q,"id":1,"payload":{"query":"{ __typename }"}}`, p.subscribe)}, close: 4400},
			{what: "an id of 100,000 bytes", init: true, frames: []wsFrame{op(strings.Repeat("i", 100_000), "{ __typename }")}, close: 4400},
			{what: "an operation whose payload is a string", init: true, frames: []wsFrame{text(`{"type":%q,"id":"1","payload":"{ __typename }"}`, p.subscribe)}, close: 4400},
			{what: "an operation without a payload", init: true, frames: []wsFrame{text(`{"type":%q,"id":"1"}`, p.subscribe)}, close: 4400},
			{what: "complete without an id", init: true, frames: []wsFrame{text(`{"type":%q}`, p.complete)}, close: 4400},
			{what: "an operation before connection_init", frames: []wsFrame{op("1", "{ __typename }")}, close: 4401},
			{what: "a second connection_init", init: true, frames: []wsFrame{init}, close: 4429},
			{what: "a second connection_init as another user", init: true, frames: []wsFrame{text(`{"type":"connection_init","payload":{"Authorization":"Bearer %s"}}`, bob.Token)}, close: 4429},
			{what: "connection_init whose payload is a string", frames: []wsFrame{text(`{"type":"connection_init","payload":"Bearer %s"}`, alice.Token)}, close: 4400},
			{what: "connection_init whose payload is a list", frames: []wsFrame{text(`{"type":"connection_init","payload":[1]}`)}, close: 4400},
			{what: "connection_init whose payload is a number", frames: []wsFrame{text(`{"type":"connection_init","payload":5}`)}, close: 4400},
			{what: "connection_init with a token that matches no one", frames: []wsFrame{text(`{"type":"connection_init","payload":{"Authorization":"Bearer nobody"}}`)}, close: 4403},
			{what: "connection_init with an Authorization that is not a string", frames: []wsFrame{text(`{"type":"connection_init","payload":{"Authorization":5}}`)}, close: 4403},
			{what: "an id in use by a live subscription", init: true, frames: []wsFrame{op("1", subscription), op("1", subscription)}, close: 4409},
			{what: "a message past the read limit", init: true, frames: []wsFrame{text(`{"type":%q,"id":"1","payload":{"query":"{ __typename }","variables":{"x":%q}}}`, p.subscribe, strings.Repeat("x", 2<<20))}, close: websocket.StatusMessageTooBig},
			{what: "a binary message", init: true, frames: []wsFrame{{binary: true, data: op("1", "{ __typename }").data}}, close: websocket.StatusUnsupportedData},
			{what: "complete for an unknown id", init: true, frames: []wsFrame{text(`{"type":%q,"id":"nope"}`, p.complete)}, then: func(c *wsClient) {
				c.expectViewer(p, "1", alice)
			}},
			{what: "an id used again once its operation ended", init: true, then: func(c *wsClient) {
				c.expectViewer(p, "1", alice)
				c.expectViewer(p, "1", alice)
			}},
			{what: "an id used again once its subscription was completed", init: true, frames: []wsFrame{op("1", subscription), text(`{"type":%q,"id":"1"}`, p.complete)}, then: func(c *wsClient) {
				if m := c.next(); m.Type != "complete" || m.ID != "1" {
					t.Fatalf("the subscription completed: %+v", m)
				}
				c.expectViewer(p, "1", alice)
			}},
			{what: "2,000 subscriptions at once", init: true, then: func(c *wsClient) {
				for i := range 2_000 {
					c.write(op(fmt.Sprint(i), subscription))
				}
				refused := 0
				for refused < 2_000-graph.MaxSubscriptionsPerConnection {
					m := c.next()
					if m.Type != "error" && (m.Type != p.result || !strings.Contains(string(m.Payload), "TOO_MANY_SUBSCRIPTIONS")) {
						t.Fatalf("subscription over the connection's limit: %+v", m)
					}
					if m.Type == "error" || p.name == "graphql-ws" {
						refused++
					}
				}
				waitSubscribers(t, env, graph.MaxSubscriptionsPerConnection)
			}},
			{what: "2,000 queries at once", init: true, then: func(c *wsClient) {
				for i := range 2_000 {
					c.write(op(fmt.Sprint(i), "{ viewer { id } }"))
				}
				for done := 0; done < 2_000; {
					switch m := c.next(); m.Type {
					case "complete":
						done++
					case p.result:
					default:
						t.Fatalf("a query: %+v", m)
					}
				}
			}},
		} {
			c, _, err := dialSocket(t, env, nil, p.name)
			if err != nil {
				t.Fatalf("%s, %s: %v", p.name, tc.what, err)
			}
			if tc.init {
				c.write(init)
				if m := c.next(); m.Type != "connection_ack" {
					t.Fatalf("%s, %s: connection_init: %+v", p.name, tc.what, m)
				}
			}
			for _, f := range tc.frames {
				c.write(f)
			}
			if tc.close != 0 {
				if code := c.closeWithin(); code != tc.close {
					t.Errorf("%s, %s: closed with %d, want %d", p.name, tc.what, code, tc.close)
				}
			} else if tc.then != nil {
				tc.then(c)
			}
			_ = c.conn.Close(websocket.StatusNormalClosure, "")
			// The server is still serving.
			alice.Do("GET", "/v1/orgs/"+org, nil).Expect(http.StatusOK)
		}
	}
	// A ping answered as often as it is sent (graphql-transport-ws).
	c := connectWS(t, env, alice)
	for range 1_000 {
		c.write(text(`{"type":"ping","payload":{"n":1}}`))
	}
	for range 1_000 {
		if m := c.next(); m.Type != "pong" || string(m.Payload) != `{"n":1}` {
			t.Fatalf("a ping's answer: %+v", m)
		}
	}
	c.expectViewer(wsProtocols[0], "after the pings", alice)
	_ = c.conn.Close(websocket.StatusNormalClosure, "")

	// The upgrade request's token is the connection's unless
	// connection_init names another: Bob's, then.
	c, _, err := dialSocket(t, env, http.Header{"Authorization": {"Bearer " + alice.Token}}, wsProtocols[0].name)
	if err != nil {
		t.Fatal(err)
	}
	c.write(text(`{"type":"connection_init","payload":{"Authorization":"Bearer %s"}}`, bob.Token))
	if m := c.next(); m.Type != "connection_ack" {
		t.Fatalf("connection_init as Bob: %+v", m)
	}
	c.expectViewer(wsProtocols[0], "1", bob)
	_ = c.conn.Close(websocket.StatusNormalClosure, "")

	waitSubscribersAtMost(t, env, 0)
	waitGoroutinesAtMost(t, before+2)
	metrics := string(env.Do("GET", "/metrics", "", nil).Expect(http.StatusOK).Body)
	if !strings.Contains(metrics, "docsapi_subscriptions 0\n") {
		t.Fatal("/metrics counts subscriptions still held")
	}
}
