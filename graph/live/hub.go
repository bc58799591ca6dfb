package live

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/docsapi/docsapi/graph/engine"
	"github.com/docsapi/docsapi/store"
)

// Hub hands the events PostgreSQL announces to this process's GraphQL
// subscribers (graph/subscription.go). One per process, it keeps one
// dedicated connection LISTENing on store.LiveChannel and
// store.IntegrationEventsChannel (reconnecting with a growing pause when it
// drops); each notification carries an event id, which the hub reads once
// and offers to the subscribers of what the event is about. Every process
// on the database hears every notification, so each delivers every event
// to its own subscribers.
//
// Who may receive an event is decided from memory, not with a query per
// subscriber: the hub reads, once per event, what the decision needs (the
// space's row and its organization's access snapshot, snapshots.go, kept
// until they change; an integration's row), and each subscriber decides,
// by the check graph gave it, with its connection's caller, kept until
// callers may have changed. The
// same connection LISTENs on store.CallersChannel and store.AccessChannel,
// so a change committed before an event is known (the caller cache
// emptied, the snapshot forgotten) before that event is checked; a change
// to an organization's access also has its space subscriptions re-check
// at once, so they end without waiting for an event.
//
// The hub hands each event to a few delivery lanes (delivery.go), which
// decide for each subscriber and write the responses, made once per shape
// and visibility.
//
// Delivery is live, not durable: events committed while the connection is
// down are not replayed (a client that reconnects refetches what it shows).
//
// C is the caller a subscriber acts as, A an organization's access
// snapshot, as graph has them (graph.LiveHub).
type Hub[C Caller[C], A any] struct {
	db  *store.DB
	log *slog.Logger
	// MaxPerToken and MaxTotal bound the subscriptions one API token, and
	// all callers together, hold at once in this process (0: the defaults,
	// DefaultSubscriptionsPerToken and DefaultSubscriptionsMax).
	MaxPerToken, MaxTotal int
	// Lanes is how many goroutines at most deliver events at once (0:
	// one fewer than the CPUs Go runs on, at least one: deliveryLanes).
	Lanes int

	access *Snapshots[A]

	startOnce sync.Once
	stop      context.CancelFunc
	done      chan struct{}
	// listening is closed once the first LISTEN is in place: a subscription
	// starts only then, so that a change made after it is heard.
	listening chan struct{}

	// lanes are made as the hub starts; subscriptions are spread over
	// them in turn (next).
	lanes []*lane[C, A]

	mu       sync.Mutex
	closed   bool
	subs     map[string]map[*Subscriber[C, A]]struct{}
	perToken map[string]int
	total    int
	next     int
	refused  atomic.Int64
	// responses counts the responses made to events, sent the messages
	// carrying them: one response is sent to every subscriber sharing it.
	responses, sent atomic.Int64
}

// Defaults of the limits on subscriptions (DOCSAPI_SUBSCRIPTIONS_PER_TOKEN,
// DOCSAPI_SUBSCRIPTIONS_MAX).
const (
	DefaultSubscriptionsPerToken = 100
	DefaultSubscriptionsMax      = 10_000
)

// Note is one event offered to a subscriber: a live event or an
// integration event, with what deciding its recipients needs, read once
// for all of them.
type Note[A any] struct {
	Live        *store.LiveEvent
	Integration *store.IntegrationEvent
	// A space's event: the space's row and its organization's access.
	Space  *store.Space
	Access A
	// An integration's event: the integration's row.
	IntegrationRow *store.Integration
	// Position is the primary's past the event (with replicas; else 0):
	// a subscriber told of it reads at least there after
	// (graph/subscription.go), so its refetch finds what the event names.
	Position store.LSN
}

// Subscription is what the hub is told of one subscription: what it is
// about, whose it is, and how to decide and make what its subscriber gets.
type Subscription[C Caller[C], A any] struct {
	// Key is what it is about (SpaceKey, SiteKey, IntegrationKey).
	Key string
	// Token identifies its token (a digest), for the limit per token.
	Token string
	// Org is, for a space's subscription, the space's organization: a
	// change to its access has the subscription re-check (Recheck).
	Org     string
	Recheck chan struct{}
	// Ctx is the subscription's operation's; Conn its websocket's; Stream
	// where its responses are written.
	Ctx    context.Context
	Conn   *Connection[C]
	Stream *engine.Stream
	// Check decides, as caller, what of the event the subscriber gets
	// (nil: nothing), or fails when the subscription is to end (access
	// lost), from memory. Encode makes the response to v, as caller.
	Check  func(ctx context.Context, caller C, n Note[A]) (any, error)
	Encode func(caller C, v any) ([]byte, error)
	// LogEnd logs why the subscription ends, unless it is a client's
	// matter (access lost) or the subscription was over anyway.
	LogEnd func(what string, err error)
}

// Subscriber is one subscription as the hub knows it: what it is about,
// and what delivering an event to it takes (delivery.go).
type Subscriber[C Caller[C], A any] struct {
	Subscription[C, A]
	hub *Hub[C, A]
	// lane is the delivery lane that delivers its events, in order.
	lane int

	mu    sync.Mutex
	ended bool
	// done is closed once the subscription is to end (end).
	done chan struct{}
	// behind holds, in order, the events waiting for its own goroutine
	// while it catches up (catchUp): at most engine.MaxEventsBehind.
	behind     []batchNote[A]
	catchingUp bool
}

// Done is closed once the subscription is to end: an event's check
// refused it, its subscriber fell behind, or the hub closed.
func (s *Subscriber[C, A]) Done() <-chan struct{} { return s.done }

// NewHub returns a hub over db; it starts listening with the first
// subscription. loadAccess reads an organization's access snapshot, which
// the hub keeps for its subscribers until it changes (Snapshots).
func NewHub[C Caller[C], A any](db *store.DB, log *slog.Logger, loadAccess func(ctx context.Context, orgID string) (A, error)) *Hub[C, A] {
	return &Hub[C, A]{db: db, log: log, done: make(chan struct{}), listening: make(chan struct{}),
		access: newSnapshots(db, loadAccess), subs: map[string]map[*Subscriber[C, A]]struct{}{}, perToken: map[string]int{}}
}

// deliveryLanes is how many delivery lanes a hub configured with n has: n,
// or one fewer than the CPUs Go runs on, at least one, so that a burst of
// deliveries leaves a CPU to requests.
func deliveryLanes(n int) int {
	if n > 0 {
		return n
	}
	return max(1, runtime.GOMAXPROCS(0)-1)
}

// The keys of what subscriptions are about.
func SpaceKey(id string) string       { return "space:" + id }
func SiteKey(id string) string        { return "site:" + id }
func IntegrationKey(id string) string { return "integration:" + id }

// Why the hub refuses a subscription: the limits on all subscriptions of
// the process (ErrServerFull) and on those of one token (ErrTokenFull).
// graph tells its clients with a TOO_MANY_SUBSCRIPTIONS error.
var (
	ErrServerFull = errors.New("live updates: the server holds the most subscriptions it may")
	ErrTokenFull  = errors.New("live updates: this API token holds the most subscriptions it may")
)

// Subscribe registers sub for the events about sub.Key, once the hub
// listens. The caller must Unsubscribe it. Over the limits, it returns
// ErrServerFull or ErrTokenFull.
func (h *Hub[C, A]) Subscribe(ctx context.Context, sub Subscription[C, A]) (*Subscriber[C, A], error) {
	h.startOnce.Do(h.start)
	select {
	case <-h.listening:
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-h.done:
		return nil, errors.New("live updates are stopped")
	}
	s := &Subscriber[C, A]{Subscription: sub, hub: h, done: make(chan struct{})}
	key, token := s.Key, s.Token
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, errors.New("live updates are stopped")
	}
	if h.total >= cmp.Or(h.MaxTotal, DefaultSubscriptionsMax) {
		h.refused.Add(1)
		return nil, ErrServerFull
	}
	if h.perToken[token] >= cmp.Or(h.MaxPerToken, DefaultSubscriptionsPerToken) {
		h.refused.Add(1)
		return nil, ErrTokenFull
	}
	if h.subs[key] == nil {
		h.subs[key] = map[*Subscriber[C, A]]struct{}{}
	}
	s.lane = h.next % len(h.lanes)
	h.next++
	h.subs[key][s] = struct{}{}
	h.perToken[token]++
	h.total++
	return s, nil
}

// dropLocked forgets s, which it holds; h.mu is held.
func (h *Hub[C, A]) dropLocked(s *Subscriber[C, A]) {
	delete(h.subs[s.Key], s)
	if len(h.subs[s.Key]) == 0 {
		delete(h.subs, s.Key)
	}
	if h.perToken[s.Token]--; h.perToken[s.Token] <= 0 {
		delete(h.perToken, s.Token)
	}
	h.total--
	s.end()
}

// Unsubscribe forgets s (ending it if the hub has not).
func (h *Hub[C, A]) Unsubscribe(s *Subscriber[C, A]) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.subs[s.Key][s]; ok {
		h.dropLocked(s)
	}
}

// Refused is how many subscriptions the limits refused since the start.
func (h *Hub[C, A]) Refused() int64 { return h.refused.Load() }

// Responses is how many responses to events this process has made since
// the start, and Sent how many messages carried them to subscribers.
func (h *Hub[C, A]) Responses() int64 { return h.responses.Load() }
func (h *Hub[C, A]) Sent() int64      { return h.sent.Load() }

// Snapshots is what the hub keeps of spaces and their organizations'
// access, for the checks of space subscriptions (read once for all
// subscribers, kept until it changes).
func (h *Hub[C, A]) Snapshots() *Snapshots[A] { return h.access }

// Subscribers is the number of subscriptions this process serves (tests
// wait for a subscription to be in place before making a change).
func (h *Hub[C, A]) Subscribers() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.total
}

// Close stops listening and ends every subscription.
func (h *Hub[C, A]) Close() {
	h.mu.Lock()
	h.closed = true
	for _, m := range h.subs {
		for s := range m {
			h.dropLocked(s)
		}
	}
	h.mu.Unlock()
	h.startOnce.Do(func() { close(h.done) }) // never started
	if h.stop != nil {
		h.stop()
	}
	<-h.done
}

func (h *Hub[C, A]) start() {
	ctx, stop := context.WithCancel(context.Background())
	h.stop = stop
	for range deliveryLanes(h.Lanes) {
		h.lanes = append(h.lanes, newLane[C, A]())
	}
	go func() {
		defer close(h.done)
		h.listen(ctx)
	}()
}

// listen keeps the LISTEN connection up until ctx ends.
func (h *Hub[C, A]) listen(ctx context.Context) {
	var once sync.Once
	ready := func() { once.Do(func() { close(h.listening) }) }
	pause := 100 * time.Millisecond
	// The events' channels last: tests find the connection by its last
	// statement.
	channels := []string{store.CallersChannel, store.AccessChannel, store.LiveChannel, store.IntegrationEventsChannel}
	for ctx.Err() == nil {
		err := h.db.ListenOnce(ctx, channels, func() {
			// Anything may have changed while nobody listened.
			h.access.reset(true)
			h.db.Callers.Invalidate()
			ready()
			pause = 100 * time.Millisecond
		}, func(channel, payload string) { h.deliver(ctx, channel, payload) })
		h.access.reset(false)
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

// deliver handles a notification of channel: a change to callers or to an
// organization's access (payload: its id, or every organization's), or an
// event (payload: its organization and id),
// which it reads and offers to the subscribers of what it is about.
func (h *Hub[C, A]) deliver(ctx context.Context, channel, payload string) {
	switch channel {
	case store.CallersChannel:
		// SECURITY: heard here too, so that it is known before the events
		// committed after it (the caller cache's own listener may be late).
		h.db.Callers.Invalidate()
		return
	case store.AccessChannel:
		if store.EveryOrganization(payload) {
			h.access.reset(true)
		} else {
			h.access.forget(payload)
		}
		h.recheckOrg(payload)
		return
	}
	if h.Subscribers() == 0 {
		return // nobody here to read it for
	}
	var note Note[A]
	var keys []string
	switch channel {
	case store.LiveChannel:
		orgID, id, _ := store.ParseEventPayload(payload)
		e, err := store.GetLiveEvent(ctx, h.db, orgID, id)
		if err != nil {
			h.readFailed(ctx, channel, payload, err)
			return
		}
		note.Live = e
		if e.SpaceID != nil && h.has(SpaceKey(*e.SpaceID)) {
			// SECURITY: what the space's subscribers are checked against,
			// as of now (a change committed before the event is known).
			if note.Space, err = h.access.Space(ctx, *e.SpaceID); err != nil {
				h.readFailed(ctx, channel, payload, err)
				return
			}
			if note.Access, err = h.access.Org(ctx, note.Space.OrganizationID); err != nil {
				h.readFailed(ctx, channel, payload, err)
				return
			}
			keys = append(keys, SpaceKey(*e.SpaceID))
		}
		if e.SiteID != nil {
			keys = append(keys, SiteKey(*e.SiteID))
		}
	case store.IntegrationEventsChannel:
		orgID, id, _ := store.ParseEventPayload(payload)
		e, err := store.GetIntegrationEventByID(ctx, h.db, orgID, id)
		if err != nil {
			h.readFailed(ctx, channel, payload, err)
			return
		}
		key := IntegrationKey(e.IntegrationID)
		if !h.has(key) {
			return
		}
		note.Integration = e
		if note.IntegrationRow, err = store.GetIntegrationByID(ctx, h.db, e.IntegrationID); err != nil {
			h.readFailed(ctx, channel, payload, err)
			return
		}
		keys = append(keys, key)
	default:
		return
	}
	if len(keys) == 0 {
		return
	}
	// Read once the event is: its commit is behind it.
	note.Position = h.db.PrimaryPosition(ctx)
	h.fanOut(ctx, note, keys)
}

// has tells whether anyone subscribes to key.
func (h *Hub[C, A]) has(key string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.subs[key]) > 0
}

// recheckOrg has the space subscriptions of orgID re-check their
// permission (a request already pending stands for this one).
func (h *Hub[C, A]) recheckOrg(orgID string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, m := range h.subs {
		for s := range m {
			if (s.Org != orgID && !store.EveryOrganization(orgID)) || s.Recheck == nil {
				continue
			}
			select {
			case s.Recheck <- struct{}{}:
			default:
			}
		}
	}
}

func (h *Hub[C, A]) readFailed(ctx context.Context, channel, id string, err error) {
	if ctx.Err() != nil {
		return
	}
	// Gone already (its organization deleted since): nothing to deliver.
	if errors.Is(err, store.ErrNotFound) {
		return
	}
	h.log.Error("live updates: reading an event failed", "channel", channel, "id", id, "err", err)
}
