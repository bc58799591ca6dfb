package graph

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/docsapi/docsapi/store"
)

// LiveHub hands the events PostgreSQL announces to this process's GraphQL
// subscribers (graph/subscription.go). One per process, it keeps one
// dedicated connection LISTENing on store.LiveChannel and
// store.IntegrationEventsChannel (reconnecting with a growing pause when it
// drops); each notification carries an event id, which the hub reads once
// and offers to the subscribers of what the event is about. Every process
// on the database hears every notification, so each delivers every event
// to its own subscribers. Subscribers check permission again themselves.
//
// Delivery is live, not durable: events committed while the connection is
// down are not replayed (a client that reconnects refetches what it shows).
type LiveHub struct {
	db  *store.DB
	log *slog.Logger

	startOnce sync.Once
	stop      context.CancelFunc
	done      chan struct{}
	// listening is closed once the first LISTEN is in place: a subscription
	// starts only then, so that a change made after it is heard.
	listening chan struct{}

	mu     sync.Mutex
	closed bool
	subs   map[string]map[*liveSub]struct{}
}

// liveNote is one event offered to a subscriber: a live event or an
// integration event.
type liveNote struct {
	live        *store.LiveEvent
	integration *store.IntegrationEvent
}

// liveSub is one subscription's inbox. A subscriber too slow to keep up
// with liveBuffer events is dropped (its inbox closed): the client sees the
// subscription complete rather than silently missing events.
type liveSub struct {
	key   string
	inbox chan liveNote
}

const liveBuffer = 64

// NewLiveHub returns a hub over db; it starts listening with the first
// subscription.
func NewLiveHub(db *store.DB, log *slog.Logger) *LiveHub {
	return &LiveHub{db: db, log: log, done: make(chan struct{}), listening: make(chan struct{}),
		subs: map[string]map[*liveSub]struct{}{}}
}

func liveSpaceKey(id string) string       { return "space:" + id }
func liveSiteKey(id string) string        { return "site:" + id }
func liveIntegrationKey(id string) string { return "integration:" + id }

// subscribe registers an inbox for the events about key, once the hub
// listens. The caller must unsubscribe it.
func (h *LiveHub) subscribe(ctx context.Context, key string) (*liveSub, error) {
	h.startOnce.Do(h.start)
	select {
	case <-h.listening:
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-h.done:
		return nil, errors.New("live updates are stopped")
	}
	s := &liveSub{key: key, inbox: make(chan liveNote, liveBuffer)}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, errors.New("live updates are stopped")
	}
	if h.subs[key] == nil {
		h.subs[key] = map[*liveSub]struct{}{}
	}
	h.subs[key][s] = struct{}{}
	return s, nil
}

// unsubscribe forgets s (closing its inbox if the hub has not).
func (h *LiveHub) unsubscribe(s *liveSub) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.subs[s.key][s]; ok {
		delete(h.subs[s.key], s)
		if len(h.subs[s.key]) == 0 {
			delete(h.subs, s.key)
		}
		close(s.inbox)
	}
}

// Subscribers is the number of subscriptions this process serves (tests
// wait for a subscription to be in place before making a change).
func (h *LiveHub) Subscribers() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, m := range h.subs {
		n += len(m)
	}
	return n
}

// Close stops listening and ends every subscription.
func (h *LiveHub) Close() {
	h.mu.Lock()
	h.closed = true
	for key, m := range h.subs {
		for s := range m {
			close(s.inbox)
		}
		delete(h.subs, key)
	}
	h.mu.Unlock()
	h.startOnce.Do(func() { close(h.done) }) // never started
	if h.stop != nil {
		h.stop()
	}
	<-h.done
}

func (h *LiveHub) start() {
	ctx, stop := context.WithCancel(context.Background())
	h.stop = stop
	go func() {
		defer close(h.done)
		h.listen(ctx)
	}()
}

// listen keeps the LISTEN connection up until ctx ends.
func (h *LiveHub) listen(ctx context.Context) {
	var once sync.Once
	ready := func() { once.Do(func() { close(h.listening) }) }
	pause := 100 * time.Millisecond
	for ctx.Err() == nil {
		err := h.db.ListenOnce(ctx, []string{store.LiveChannel, store.IntegrationEventsChannel}, func() {
			ready()
			pause = 100 * time.Millisecond
		}, func(channel, id string) { h.deliver(ctx, channel, id) })
		if ctx.Err() != nil {
			return
		}
		h.log.Warn("live updates: listening for events failed; retrying (events until then are not delivered)", "err", err, "retry_in", pause)
		select {
		case <-ctx.Done():
			return
		case <-time.After(pause):
		}
		pause = min(2*pause, 10*time.Second)
	}
}

// deliver reads event id of channel and offers it to the subscribers of
// what it is about.
func (h *LiveHub) deliver(ctx context.Context, channel, id string) {
	if h.Subscribers() == 0 {
		return // nobody here to read it for
	}
	var note liveNote
	var keys []string
	switch channel {
	case store.LiveChannel:
		e, err := store.GetLiveEvent(ctx, h.db, id)
		if err != nil {
			h.readFailed(ctx, channel, id, err)
			return
		}
		note.live = e
		if e.SpaceID != nil {
			keys = append(keys, liveSpaceKey(*e.SpaceID))
		}
		if e.SiteID != nil {
			keys = append(keys, liveSiteKey(*e.SiteID))
		}
	case store.IntegrationEventsChannel:
		e, err := store.GetIntegrationEventByID(ctx, h.db, id)
		if err != nil {
			h.readFailed(ctx, channel, id, err)
			return
		}
		note.integration = e
		keys = append(keys, liveIntegrationKey(e.IntegrationID))
	default:
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, key := range keys {
		for s := range h.subs[key] {
			select {
			case s.inbox <- note:
			default:
				h.log.Warn("live updates: a subscriber fell behind; ending its subscription", "key", key)
				delete(h.subs[key], s)
				close(s.inbox)
			}
		}
		if len(h.subs[key]) == 0 {
			delete(h.subs, key)
		}
	}
}

func (h *LiveHub) readFailed(ctx context.Context, channel, id string, err error) {
	if ctx.Err() != nil {
		return
	}
	// Gone already (its organization deleted since): nothing to deliver.
	if errors.Is(err, store.ErrNotFound) {
		return
	}
	h.log.Error("live updates: reading an event failed", "channel", channel, "id", id, "err", err)
}
