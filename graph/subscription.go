package graph

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/uptrace/bun"

	"github.com/docsapi/docsapi/graph/budget"
	"github.com/docsapi/docsapi/graph/engine"
	"github.com/docsapi/docsapi/graph/generated"
	"github.com/docsapi/docsapi/store"
)

// Subscriptions: live updates over a websocket (the transport is the
// engine's, engine.Websocket; Sessions below is what it asks of us). Changes
// record live events in their own transactions (store.RecordLiveEvent,
// recordLive below); LiveHub (live.go) hears of them through PostgreSQL and
// offers each to the subscriptions of what it is about. Permission is
// checked when subscribing (as a request is) and again for every event, as
// the caller is now, but from memory: the connection keeps its caller until
// callers may have changed (the caller cache's invalidations, which the hub
// hears before the events committed after them), and the hub reads what
// the decision needs once per event for every subscriber. A caller who lost
// access gets no more events, and the subscription completes.
// LiveConnection.Watch re-checks between events too, when callers may have
// changed and every RecheckEvery, and the hub when an organization's access
// changes, so a subscription ends promptly rather than at its next event.

// MaxSubscriptionsPerConnection bounds the subscriptions one websocket
// holds at once.
const MaxSubscriptionsPerConnection = 20

// Sessions opens the sessions of websocket connections (engine.Sockets):
// connection_init's token is resolved as an HTTP request's is, and the
// connection's subscriptions re-check their caller every recheck at the
// longest (0: DefaultLiveRecheck).
func (r *Resolver) Sessions(recheck time.Duration) func(ctx context.Context, token string) (engine.Session, error) {
	return func(ctx context.Context, token string) (engine.Session, error) {
		first, err := r.Authenticate(ctx, token)
		if errors.Is(err, ErrUnauthenticated) {
			return nil, engine.ErrTokenInvalid
		} else if err != nil {
			return nil, err
		}
		s := &session{r: r, developer: first.Developer(), budgetKey: first.BudgetKey()}
		s.live = &LiveConnection{MaxSubscriptions: MaxSubscriptionsPerConnection,
			Changed: r.DB.Callers.Changed, RecheckEvery: recheck, Token: string(store.TokenDigest(token)), Now: r.now,
			Caller: func(ctx context.Context) (*Caller, error) {
				// Once revoked, the connection's token is refused without a
				// lookup: the connection is closing.
				select {
				case <-s.live.Revoked():
					return nil, ErrUnauthenticated
				default:
				}
				return r.Authenticate(ctx, token)
			}}
		return s, nil
	}
}

// session is a websocket connection as the resolvers see it: its live
// connection, which resolves its token again for every operation.
type session struct {
	r    *Resolver
	live *LiveConnection
	// developer and budgetKey are the token's, which does not change: what
	// the connection's documents may be (trusted documents), and whose rate
	// budget its operations draw on. The engine needs them before an
	// operation gets its caller.
	developer bool
	budgetKey string
}

func (s *session) Begin(ctx context.Context) context.Context {
	go s.live.Watch(ctx, s.r.Log)
	// SECURITY: the connection holds no caller (the upgrade request's, when
	// its header had a token, is masked), nor a visitor: only an operation
	// gets a caller.
	ctx = context.WithValue(ctx, visitorKey{}, (*Visitor)(nil))
	ctx = engine.WithDeveloper(ctx, s.developer)
	ctx = budget.WithMeter(ctx, &budget.Meter{Key: s.budgetKey})
	return WithLiveConnection(WithCaller(ctx, nil), s.live)
}

// Operation gives an operation its caller as of now (the token still valid
// and unexpired, the memberships as they are: the caller cache, emptied by
// every change to them), and fresh loaders and query counter, as an HTTP
// request gets: nothing read for one operation is served to another.
func (s *session) Operation(ctx context.Context) (context.Context, error) {
	caller, err := s.live.fresh(ctx)
	if errors.Is(err, ErrUnauthenticated) {
		return ctx, engine.ErrTokenInvalid
	} else if err != nil {
		return ctx, err
	}
	ctx, _ = store.WithQueryCounter(ctx)
	return WithLoaders(WithCaller(ctx, caller), NewLoaders(s.r.DB)), nil
}

func (s *session) Revoked() <-chan struct{} { return s.live.Revoked() }
func (s *session) Revoke()                  { s.live.Revoke() }

// LiveConnection is what a websocket connection gives its subscriptions:
// how to resolve its caller again, a bound on how many subscriptions it may
// hold at once, and what tells it to re-check them.
type LiveConnection struct {
	// Caller resolves the connection's token again, as of now
	// (ErrUnauthenticated once it matches no one or has expired).
	Caller func(ctx context.Context) (*Caller, error)
	// MaxSubscriptions bounds the connection's concurrent subscriptions.
	MaxSubscriptions int
	// Changed, when set, returns a channel closed when callers may have
	// changed (store.CallerCache.Changed).
	Changed func() <-chan struct{}
	// RecheckEvery spaces the re-checks Watch makes with no change heard
	// (default DefaultLiveRecheck).
	RecheckEvery time.Duration
	// Token identifies the connection's token (a digest) for the limit on
	// subscriptions per token.
	Token string
	// Now is the current time (default time.Now), against which a kept
	// caller's token expiry is checked.
	Now func() time.Time

	// resolving serialises the connection's lookups of its caller: its
	// subscriptions, woken by one event, share one.
	resolving sync.Mutex

	mu sync.Mutex
	// held is the caller last resolved, valid until changed is closed.
	held struct {
		caller  *Caller
		changed <-chan struct{}
	}
	// subs holds each subscription's re-check signal.
	subs map[chan struct{}]struct{}
	// revoked is closed once the connection's token is found no longer
	// valid (made on first use).
	revoked chan struct{}
}

// DefaultLiveRecheck is how often, at the longest, a subscription's caller
// and permission are re-checked with no event and no change heard: the
// bound on how long a subscription outlives an expired token, a listener
// that is down, or access lost through something other than the caller
// (a space's permissions).
const DefaultLiveRecheck = 30 * time.Second

// liveChangeJitter bounds the pause before a connection re-resolves its
// caller after a change: every connection hears every change, which has
// just emptied the caller cache, so their lookups are spread out (and a
// burst of changes costs one).
const liveChangeJitter = 500 * time.Millisecond

type liveConnectionKey struct{}

// WithLiveConnection returns a context carrying c, for the subscriptions of
// one websocket connection.
func WithLiveConnection(ctx context.Context, c *LiveConnection) context.Context {
	return context.WithValue(ctx, liveConnectionKey{}, c)
}

// acquire takes a subscription slot and returns its re-check signal.
func (c *LiveConnection) acquire() (chan struct{}, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.subs) >= c.MaxSubscriptions {
		return nil, &Error{Status: http.StatusTooManyRequests, Code: "TOO_MANY_SUBSCRIPTIONS",
			Message: "this connection holds the most subscriptions it may; complete one, or open another connection"}
	}
	if c.subs == nil {
		c.subs = map[chan struct{}]struct{}{}
	}
	recheck := make(chan struct{}, 1)
	c.subs[recheck] = struct{}{}
	return recheck, nil
}

func (c *LiveConnection) release(recheck chan struct{}) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.subs, recheck)
}

// holding tells whether the connection holds any subscription.
func (c *LiveConnection) holding() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.subs) > 0
}

// recheck asks every subscription to re-check its permission (a request
// already pending stands for this one).
func (c *LiveConnection) recheck() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for recheck := range c.subs {
		select {
		case recheck <- struct{}{}:
		default:
		}
	}
}

// Revoked returns a channel closed once the connection's token is no
// longer valid.
func (c *LiveConnection) Revoked() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.revokedLocked()
}

func (c *LiveConnection) revokedLocked() chan struct{} {
	if c.revoked == nil {
		c.revoked = make(chan struct{})
	}
	return c.revoked
}

// Revoke records that the connection's token is no longer valid: its
// subscriptions end, and the transport closes the connection once they have
// (rest/subscription.go).
func (c *LiveConnection) Revoke() {
	c.mu.Lock()
	defer c.mu.Unlock()
	revoked := c.revokedLocked()
	select {
	case <-revoked:
	default:
		close(revoked)
	}
}

// current is the connection's caller as of now: the one last resolved
// while no change to callers has been heard since (and its token not
// expired by now), else resolved again.
func (c *LiveConnection) current(ctx context.Context) (*Caller, error) {
	if caller, ok := c.kept(); ok {
		return caller, nil
	}
	c.resolving.Lock()
	defer c.resolving.Unlock()
	if caller, ok := c.kept(); ok {
		return caller, nil // another subscription of the connection resolved it
	}
	return c.resolve(ctx)
}

// fresh is the connection's caller resolved as of now, and kept (so a
// subscription's first event finds it).
func (c *LiveConnection) fresh(ctx context.Context) (*Caller, error) {
	c.resolving.Lock()
	defer c.resolving.Unlock()
	return c.resolve(ctx)
}

// kept returns the caller held, while it is still valid.
func (c *LiveConnection) kept() (*Caller, bool) {
	c.mu.Lock()
	caller, changed := c.held.caller, c.held.changed
	c.mu.Unlock()
	if caller == nil || changed == nil {
		return nil, false
	}
	select {
	case <-changed:
		return nil, false
	default:
	}
	// SECURITY: a token that has expired since is looked up again (and
	// found no longer valid).
	now := time.Now()
	if c.Now != nil {
		now = c.Now()
	}
	return caller, !caller.expired(now)
}

// resolve resolves the caller afresh and keeps it.
func (c *LiveConnection) resolve(ctx context.Context) (*Caller, error) {
	// Taken before resolving: a change from now on makes it stale.
	changed := c.changed()
	caller, err := c.Caller(ctx)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.held.caller, c.held.changed = caller, changed
	c.mu.Unlock()
	return caller, nil
}

// changed is the channel Changed returns, or nil (never ready) without one.
func (c *LiveConnection) changed() <-chan struct{} {
	if c.Changed == nil {
		return nil
	}
	return c.Changed()
}

// Watch keeps the connection's subscriptions from outliving their caller's
// access between events, until ctx ends or the connection is revoked.
// While it holds subscriptions, it re-resolves the caller when callers may
// have changed and every RecheckEvery: a token no longer valid revokes the
// connection; a caller whose memberships changed, and every subscription
// each RecheckEvery, has its subscriptions re-check their permission (which
// ends those no longer allowed). Each check is as of now, as for an event.
func (c *LiveConnection) Watch(ctx context.Context, log *slog.Logger) {
	tick := time.NewTicker(cmp.Or(c.RecheckEvery, DefaultLiveRecheck))
	defer tick.Stop()
	revoked := c.Revoked()
	changed := c.changed()
	var last *Caller
	for {
		every := false
		select {
		case <-ctx.Done():
			return
		case <-revoked:
			return
		case <-tick.C:
			every = true
		case <-changed:
			select {
			case <-ctx.Done():
				return
			case <-time.After(rand.N(liveChangeJitter)):
			}
		}
		// Taken before resolving: a change from now on wakes the next round.
		changed = c.changed()
		if !c.holding() {
			last = nil
			continue
		}
		// SECURITY: the token as of now (ErrUnauthenticated once deleted or
		// expired) and the memberships as they are now; kept for the
		// subscriptions' events.
		caller, err := c.fresh(ctx)
		if errors.Is(err, ErrUnauthenticated) {
			c.Revoke()
			return
		}
		if err != nil {
			if ctx.Err() == nil {
				log.WarnContext(ctx, "subscriptions: re-checking the caller failed; retrying at the next change or tick", "err", err)
			}
			continue
		}
		if every || last == nil || !caller.sameAs(last) {
			c.recheck()
		}
		last = caller
	}
}

func (r *Resolver) Subscription() generated.SubscriptionResolver { return &subscriptionResolver{r} }

type subscriptionResolver struct{ *Resolver }

func (r *subscriptionResolver) SpaceEvents(ctx context.Context, spaceID string) (<-chan *store.LiveEvent, error) {
	// SECURITY: those who can read the space (access.go): now, as a
	// request; at each event, from what the hub read for it; at each
	// re-check, from the shared snapshots.
	s, err := r.space(ctx, spaceID)
	if err != nil {
		return nil, err
	}
	allowed := func(ctx context.Context, caller *Caller) error {
		return r.Live.access.liveSpaceAllowed(ctx, caller, spaceID)
	}
	return subscribeLive(r.Resolver, ctx, liveSpaceKey(spaceID), s.OrganizationID, allowed, func(_ context.Context, caller *Caller, n liveNote) (*store.LiveEvent, error) {
		if n.live == nil || n.live.SpaceID == nil || *n.live.SpaceID != spaceID || n.space == nil {
			return nil, nil
		}
		if err := spaceAllowed(caller, n.space, n.access); err != nil {
			return nil, err
		}
		return n.live, nil
	})
}

func (r *subscriptionResolver) SiteEvents(ctx context.Context, organizationID, siteID string) (<-chan *store.LiveEvent, error) {
	// SECURITY: readers of the site's organization (site.go): now and at
	// each re-check, as a request; at each event, from the caller's
	// memberships (the event is of the site, in the organization).
	allowed := func(ctx context.Context, caller *Caller) error {
		_, err := r.site(WithLoaders(WithCaller(ctx, caller), NewLoaders(r.DB)), organizationID, siteID)
		return err
	}
	if _, err := r.site(ctx, organizationID, siteID); err != nil {
		return nil, err
	}
	return subscribeLive(r.Resolver, ctx, liveSiteKey(siteID), "", allowed, func(ctx context.Context, caller *Caller, n liveNote) (*store.LiveEvent, error) {
		if n.live == nil || n.live.SiteID == nil || *n.live.SiteID != siteID || n.live.OrganizationID != organizationID {
			return nil, nil
		}
		if _, err := contentRole(WithCaller(ctx, caller), organizationID, "site"); err != nil {
			return nil, err
		}
		return n.live, nil
	})
}

func (r *subscriptionResolver) IntegrationEvents(ctx context.Context, name string) (<-chan *store.IntegrationEvent, error) {
	// SECURITY: those who may see the integration (integration.go): now
	// and at each re-check, as a request; at each event, from the
	// integration's row the hub read for it.
	allowed := func(ctx context.Context, caller *Caller) error {
		_, err := r.integration(WithLoaders(WithCaller(ctx, caller), NewLoaders(r.DB)), name)
		return err
	}
	in, err := r.integration(ctx, name)
	if err != nil {
		return nil, err
	}
	return subscribeLive(r.Resolver, ctx, liveIntegrationKey(in.ID), "", allowed, func(ctx context.Context, caller *Caller, n liveNote) (*store.IntegrationEvent, error) {
		if n.integration == nil || n.integration.IntegrationID != in.ID || n.integrationRow == nil {
			return nil, nil
		}
		ctx = WithCaller(ctx, caller)
		if !canSee(ctx, n.integrationRow) {
			return nil, NotFound("integration")
		}
		// SECURITY: as Integration.events, the events of installations on
		// the organizations the caller administers (now); others are not
		// theirs to see.
		if !slices.Contains(callerOrgs(ctx, store.RoleAdmin), n.integration.OrganizationID) {
			return nil, nil
		}
		return n.integration, nil
	})
}

// subscribeLive subscribes to the events about key (a space's subscription
// names the space's organization, org, whose access changes re-check it).
// Each event the hub offers goes through check, with the connection's
// caller as of now, which returns what to send (the zero value: not for
// this subscriber) or an error that ends the subscription (access lost):
// it decides from memory. The delivery lanes (livedelivery.go) make the
// response and write it; the subscription's goroutine here re-checks
// through allowed, and ends it. A token no longer valid revokes the
// connection, which ends every subscription; a subscriber too slow has its
// connection closed.
func subscribeLive[T comparable](r *Resolver, ctx context.Context, key, org string, allowed func(ctx context.Context, caller *Caller) error, check func(ctx context.Context, caller *Caller, n liveNote) (T, error)) (<-chan T, error) {
	conn, ok := ctx.Value(liveConnectionKey{}).(*LiveConnection)
	stream := engine.StreamOf(ctx)
	if !ok || stream == nil {
		return nil, BadRequest("subscriptions are served over a websocket at /graphql (the graphql-transport-ws protocol)")
	}
	revoked := conn.Revoked()
	select {
	case <-revoked:
		return nil, ErrUnauthenticated
	default:
	}
	recheck, err := conn.acquire()
	if err != nil {
		return nil, err
	}
	// The executor reads the event to respond to from out, fed just before
	// (engine.Stream.Respond).
	out := make(chan T, 1)
	sub := &liveSub{key: key, token: conn.Token, org: org, recheck: recheck, r: r, ctx: ctx, conn: conn, stream: stream,
		done: make(chan struct{}),
		check: func(ctx context.Context, caller *Caller, n liveNote) (any, error) {
			var zero T
			v, err := check(ctx, caller, n)
			if err != nil || v == zero {
				return nil, err
			}
			return v, nil
		},
		encode: func(caller *Caller, v any) ([]byte, error) {
			return stream.Respond(func() {
				select {
				case <-out: // left by a response that failed
				default:
				}
				out <- v.(T)
			}, func(ctx context.Context) context.Context {
				// SECURITY: as the caller the response is for, with loaders
				// of its own: nothing read for another response is used.
				return WithLoaders(WithCaller(ctx, caller), NewLoaders(r.DB))
			})
		},
		logEnd: func(what string, err error) {
			var gerr *Error
			if !errors.As(err, &gerr) && ctx.Err() == nil {
				r.Log.ErrorContext(ctx, "subscription: "+what, "err", err)
			}
		}}
	if err := r.Live.subscribe(ctx, sub); err != nil {
		conn.release(recheck)
		var gerr *Error
		if errors.As(err, &gerr) || ctx.Err() != nil {
			return nil, cmp.Or(ctx.Err(), err)
		}
		r.Log.ErrorContext(ctx, "subscribe", "err", err)
		return nil, errors.New("internal error")
	}
	stream.Start()
	go func() {
		// The slot is freed before the hub forgets the subscriber: once
		// the hub's count shows it gone, the connection has room again.
		// The stream ends last: its client is told once the hub is done
		// with it.
		defer stream.End()
		defer r.Live.unsubscribe(sub)
		defer conn.release(recheck)
		for {
			select {
			case <-ctx.Done():
				return
			case <-revoked:
				return
			case <-sub.done:
				return
			case <-recheck:
			}
			// SECURITY: a re-check with no event ends the subscription
			// once the caller may no longer read what it is about. One
			// that cannot tell (the database unreachable) leaves it be:
			// nothing is delivered before the next event's own check.
			caller, err := conn.current(ctx)
			if errors.Is(err, ErrUnauthenticated) {
				conn.Revoke()
				return
			}
			if err == nil {
				err = allowed(ctx, caller)
			}
			if gerr := (*Error)(nil); errors.As(err, &gerr) {
				return
			} else if err != nil && ctx.Err() == nil {
				r.Log.WarnContext(ctx, "subscription: re-checking permission failed; checking again at the next event or re-check", "err", err)
			}
		}
	}()
	return out, nil
}

// recordLive records a live event about a change in tx, the change's own
// transaction, made by the caller now: the one helper every change that
// subscriptions tell of calls, once.
func (r *Resolver) recordLive(ctx context.Context, tx bun.IDB, e store.LiveEvent) error {
	if id := actorID(ctx); id != "" {
		e.ActorID = &id
	}
	e.CreatedAt = r.now()
	return store.RecordLiveEvent(ctx, tx, &e)
}
