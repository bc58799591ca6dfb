package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
)

// The fan-out scenario's limit (fanout.go): a bare broadcast loop. A
// websocket server on a loopback listener of its own, in the bench's
// process as docsapi's is, that answers graphql-transport-ws's handshake
// (connection_ack, then the subscription taken without reading it) and,
// for an event, writes one message's bytes to every connection with
// coder/websocket's Write, as docsapi's delivery does, in as many loops as
// docsapi has delivery lanes, each writing to its share of the
// connections in turn. The message is the bytes docsapi wrote for an
// event (fanoutSample), its event id replaced by one of the same length,
// and the subscribers are the same program as docsapi's, in a process of
// their own: the only difference left is what docsapi does between a
// commit and its writes (the notification, reading the event, access,
// encoding, the lanes' queue), and the cost of being a GraphQL server.
type bareBroadcast struct {
	mu    sync.Mutex
	conns []*websocket.Conn
	ready atomic.Int64 // subscribed connections
	srv   *http.Server
	url   string
}

// startBareBroadcast listens on a free loopback port.
func startBareBroadcast() (*bareBroadcast, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	b := &bareBroadcast{url: "ws://" + ln.Addr().String() + "/"}
	b.srv = &http.Server{Handler: b, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = b.srv.Serve(ln) }()
	return b, nil
}

func (b *bareBroadcast) close() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = b.srv.Shutdown(ctx)
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, c := range b.conns {
		c.CloseNow()
	}
}

func (b *bareBroadcast) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true, Subprotocols: []string{"graphql-transport-ws"}})
	if err != nil {
		return
	}
	defer c.CloseNow()
	ctx := context.Background()
	if _, _, err := c.Read(ctx); err != nil { // connection_init
		return
	}
	if err := c.Write(ctx, websocket.MessageText, []byte(`{"type":"connection_ack"}`)); err != nil {
		return
	}
	if _, _, err := c.Read(ctx); err != nil { // subscribe
		return
	}
	b.mu.Lock()
	b.conns = append(b.conns, c)
	b.mu.Unlock()
	b.ready.Add(1)
	for { // control frames, until the client goes
		if _, _, err := c.Read(ctx); err != nil {
			return
		}
	}
}

// send writes msg to every connection, in lanes loops at once.
func (b *bareBroadcast) send(ctx context.Context, msg []byte, lanes int) error {
	b.mu.Lock()
	conns := b.conns
	b.mu.Unlock()
	var wg sync.WaitGroup
	var failed atomic.Pointer[error]
	for l := range lanes {
		wg.Go(func() {
			for i := l; i < len(conns); i += lanes {
				if err := conns[i].Write(ctx, websocket.MessageText, msg); err != nil {
					failed.CompareAndSwap(nil, &err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err := failed.Load(); err != nil {
		return fmt.Errorf("bare broadcast: %w", *err)
	}
	return nil
}

// bareLanes is how many loops the bare broadcast writes in: docsapi's
// delivery lanes (graph.LiveHub.Lanes: n, or one fewer than the CPUs Go
// runs on, at least one), so that a machine with more CPUs gives both
// sides as many writers.
func bareLanes(n int) int {
	if n > 0 {
		return n
	}
	return max(1, runtime.GOMAXPROCS(0)-1)
}

// fanoutSample is one subscriber of docsapi in the bench's process, there
// to read the bytes docsapi writes for an event.
type fanoutSample struct{ conn *websocket.Conn }

// subscribeSample subscribes as the subscribers do (subscribe).
func subscribeSample(ctx context.Context, url, token, space string) (*fanoutSample, error) {
	conn, _, err := subscribe(ctx, url, token, space)
	if err != nil {
		return nil, fmt.Errorf("sample subscriber: %w", err)
	}
	return &fanoutSample{conn: conn}, nil
}

// message reads messages until the event id's, and returns its bytes.
func (s *fanoutSample) message(ctx context.Context, id string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for {
		_, data, err := s.conn.Read(ctx)
		if err != nil {
			return nil, fmt.Errorf("sample subscriber: %w", err)
		}
		if bytes.Contains(data, []byte(`"next"`)) && bytes.Count(data, []byte(id)) == 1 {
			return data, nil
		}
	}
}

func (s *fanoutSample) close() { s.conn.CloseNow() }
