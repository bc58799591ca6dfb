package graph

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"time"

	"github.com/uptrace/bun"

	"github.com/docsapi/docsapi/graph/budget"
	"github.com/docsapi/docsapi/graph/engine"
	"github.com/docsapi/docsapi/graph/generated"
	"github.com/docsapi/docsapi/graph/live"
	"github.com/docsapi/docsapi/store"
)

// Subscriptions: live updates over a websocket (the transport is the
// engine's, engine.Websocket; Sessions below is what it asks of us). Changes
// record live events in their own transactions (store.RecordLiveEvent,
// recordLive below); the hub (package live) hears of them through
// PostgreSQL and offers each to the subscriptions of what it is about,
// which decide here, with graph's read rules, who gets what. Permission is
// checked when subscribing (as a request is) and again for every event, as
// the caller is now, but from memory: the connection keeps its caller until
// callers may have changed (the caller cache's invalidations, which the hub
// hears before the events committed after them), and the hub reads what
// the decision needs once per event for every subscriber. A caller who lost
// access gets no more events, and the subscription completes.
// live.Connection.Watch re-checks between events too, when callers may have
// changed and every RecheckEvery, and the hub when an organization's access
// changes, so a subscription ends promptly rather than at its next event.

// MaxSubscriptionsPerConnection bounds the subscriptions one websocket
// holds at once.
const MaxSubscriptionsPerConnection = 20

// LiveHub is the hub of live updates (package live) as graph runs it: its
// subscribers act as graph's callers, and space subscriptions are checked
// against graph's access snapshots (orgAccess, access.go), a type nothing
// outside graph can name.
type LiveHub = live.Hub[*Caller, *orgAccess]

// NewLiveHub returns the hub of live updates over db; it starts listening
// with the first subscription.
func NewLiveHub(db *store.DB, log *slog.Logger) *LiveHub {
	return live.NewHub[*Caller](db, log, func(ctx context.Context, orgID string) (*orgAccess, error) {
		x, err := store.LoadOrgAccess(ctx, db, orgID)
		if err != nil {
			return nil, err
		}
		return newOrgAccess(x), nil
	})
}

// liveConnection is what a websocket connection gives its subscriptions
// (live.Connection), its callers graph's.
type liveConnection = live.Connection[*Caller]

// Sessions opens the sessions of websocket connections (engine.Sockets):
// connection_init's token is resolved as an HTTP request's is, and the
// connection's subscriptions re-check their caller every recheck at the
// longest (0: live.DefaultRecheck).
func (r *Resolver) Sessions(recheck time.Duration) func(ctx context.Context, token string) (engine.Session, error) {
	return func(ctx context.Context, token string) (engine.Session, error) {
		first, err := r.Authenticate(ctx, token)
		if errors.Is(err, ErrUnauthenticated) {
			return nil, engine.ErrTokenInvalid
		} else if err != nil {
			return nil, err
		}
		s := &session{r: r, developer: first.Developer(), budgetKey: first.BudgetKey()}
		s.conn = &liveConnection{MaxSubscriptions: MaxSubscriptionsPerConnection,
			Changed: r.DB.Callers.Changed, RecheckEvery: recheck, Token: string(store.TokenDigest(token)), Now: r.now,
			Caller: func(ctx context.Context) (*Caller, error) {
				// Once revoked, the connection's token is refused without a
				// lookup: the connection is closing.
				select {
				case <-s.conn.Revoked():
					return nil, engine.ErrTokenInvalid
				default:
				}
				caller, err := r.Authenticate(ctx, token)
				if errors.Is(err, ErrUnauthenticated) {
					// How the live package knows a token no longer valid.
					return nil, engine.ErrTokenInvalid
				}
				return caller, err
			}}
		return s, nil
	}
}

// session is a websocket connection as the resolvers see it: its live
// connection, which resolves its token again for every operation.
type session struct {
	r    *Resolver
	conn *liveConnection
	// developer and budgetKey are the token's, which does not change: what
	// the connection's documents may be (trusted documents), and whose rate
	// budget its operations draw on. The engine needs them before an
	// operation gets its caller.
	developer bool
	budgetKey string
}

func (s *session) Begin(ctx context.Context) context.Context {
	go s.conn.Watch(ctx, s.r.Log)
	// SECURITY: the connection holds no caller (the upgrade request's, when
	// its header had a token, is masked), nor a visitor: only an operation
	// gets a caller.
	ctx = context.WithValue(ctx, visitorKey{}, (*Visitor)(nil))
	ctx = engine.WithDeveloper(ctx, s.developer)
	ctx = budget.WithMeter(ctx, &budget.Meter{Key: s.budgetKey})
	return live.WithConnection(WithCaller(ctx, nil), s.conn)
}

// Operation gives an operation its caller as of now (the token still valid
// and unexpired, the memberships as they are: the caller cache, emptied by
// every change to them), and fresh loaders and query counter, as an HTTP
// request gets: nothing read for one operation is served to another.
func (s *session) Operation(ctx context.Context) (context.Context, error) {
	caller, err := s.conn.Fresh(ctx)
	if err != nil {
		return ctx, err // engine.ErrTokenInvalid for a token no longer valid
	}
	ctx, _ = store.WithQueryCounter(ctx)
	return WithLoaders(WithCaller(ctx, caller), NewLoaders(s.r.DB)), nil
}

func (s *session) Revoked() <-chan struct{} { return s.conn.Revoked() }
func (s *session) Revoke()                  { s.conn.Revoke() }

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
		return liveSpaceAllowed(ctx, r.Live.Snapshots(), caller, spaceID)
	}
	return subscribeLive(r.Resolver, ctx, live.SpaceKey(spaceID), s.OrganizationID, allowed, func(_ context.Context, caller *Caller, n liveNote) (*store.LiveEvent, error) {
		if n.Live == nil || n.Live.SpaceID == nil || *n.Live.SpaceID != spaceID || n.Space == nil {
			return nil, nil
		}
		if err := spaceAllowed(caller, n.Space, n.Access); err != nil {
			return nil, err
		}
		return n.Live, nil
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
	return subscribeLive(r.Resolver, ctx, live.SiteKey(siteID), "", allowed, func(ctx context.Context, caller *Caller, n liveNote) (*store.LiveEvent, error) {
		if n.Live == nil || n.Live.SiteID == nil || *n.Live.SiteID != siteID || n.Live.OrganizationID != organizationID {
			return nil, nil
		}
		if _, err := contentRole(WithCaller(ctx, caller), organizationID, "site"); err != nil {
			return nil, err
		}
		return n.Live, nil
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
	return subscribeLive(r.Resolver, ctx, live.IntegrationKey(in.ID), "", allowed, func(ctx context.Context, caller *Caller, n liveNote) (*store.IntegrationEvent, error) {
		if n.Integration == nil || n.Integration.IntegrationID != in.ID || n.IntegrationRow == nil {
			return nil, nil
		}
		ctx = WithCaller(ctx, caller)
		if !canSee(ctx, n.IntegrationRow) {
			return nil, NotFound("integration")
		}
		// SECURITY: as Integration.events, the events of installations on
		// the organizations the caller administers (now); others are not
		// theirs to see.
		if !slices.Contains(callerOrgs(ctx, store.RoleAdmin), n.Integration.OrganizationID) {
			return nil, nil
		}
		return n.Integration, nil
	})
}

// liveNote is an event as the hub offers it to graph's checks.
type liveNote = live.Note[*orgAccess]

// subscribeLive subscribes to the events about key (a space's subscription
// names the space's organization, org, whose access changes re-check it).
// Each event the hub offers goes through check, with the connection's
// caller as of now, which returns what to send (the zero value: not for
// this subscriber) or an error that ends the subscription (access lost):
// it decides from memory. The hub's delivery lanes (package live) make the
// response and write it; the subscription's goroutine here re-checks
// through allowed, and ends it. A token no longer valid revokes the
// connection, which ends every subscription; a subscriber too slow has its
// connection closed.
func subscribeLive[T comparable](r *Resolver, ctx context.Context, key, org string, allowed func(ctx context.Context, caller *Caller) error, check func(ctx context.Context, caller *Caller, n liveNote) (T, error)) (<-chan T, error) {
	conn, ok := live.ConnectionFrom[*Caller](ctx)
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
	recheck, err := conn.Acquire()
	if err != nil {
		return nil, subscriptionRefused(err)
	}
	// The executor reads the event to respond to from out, fed just before
	// (engine.Stream.Respond).
	out := make(chan T, 1)
	sub, err := r.Live.Subscribe(ctx, live.Subscription[*Caller, *orgAccess]{
		Key: key, Token: conn.Token, Org: org, Recheck: recheck, Ctx: ctx, Conn: conn, Stream: stream,
		Check: func(ctx context.Context, caller *Caller, n liveNote) (any, error) {
			var zero T
			v, err := check(ctx, caller, n)
			if err != nil || v == zero {
				return nil, err
			}
			// With replicas: what the subscriber reads next, over this
			// connection or through this instance, sees the event.
			r.DB.RecordPosition(ctx, caller.User.ID, n.Position)
			return v, nil
		},
		Encode: func(caller *Caller, v any) ([]byte, error) {
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
		LogEnd: func(what string, err error) {
			var gerr *Error
			if !errors.As(err, &gerr) && ctx.Err() == nil {
				r.Log.ErrorContext(ctx, "subscription: "+what, "err", err)
			}
		}})
	if err != nil {
		conn.Release(recheck)
		err = subscriptionRefused(err)
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
		defer r.Live.Unsubscribe(sub)
		defer conn.Release(recheck)
		for {
			select {
			case <-ctx.Done():
				return
			case <-revoked:
				return
			case <-sub.Done():
				return
			case <-recheck:
			}
			// SECURITY: a re-check with no event ends the subscription
			// once the caller may no longer read what it is about. One
			// that cannot tell (the database unreachable) leaves it be:
			// nothing is delivered before the next event's own check.
			caller, err := conn.Current(ctx)
			if errors.Is(err, engine.ErrTokenInvalid) {
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

// subscriptionRefused is the API's answer to the hub's or the connection's
// refusal of one more subscription (err as is when it is none).
func subscriptionRefused(err error) error {
	switch {
	case errors.Is(err, live.ErrServerFull):
		return &Error{Status: http.StatusServiceUnavailable, Code: "TOO_MANY_SUBSCRIPTIONS",
			Message: "the server holds the most subscriptions it may; try again later"}
	case errors.Is(err, live.ErrTokenFull):
		return &Error{Status: http.StatusTooManyRequests, Code: "TOO_MANY_SUBSCRIPTIONS",
			Message: "this API token holds the most subscriptions it may; complete one first"}
	case errors.Is(err, live.ErrConnectionFull):
		return &Error{Status: http.StatusTooManyRequests, Code: "TOO_MANY_SUBSCRIPTIONS",
			Message: "this connection holds the most subscriptions it may; complete one, or open another connection"}
	}
	return err
}

// spaceAllowed decides from snapshots whether caller may read space s of
// the organization whose access is a: nil, or NotFound as the space's own
// read answers.
func spaceAllowed(caller *Caller, s *store.Space, a *orgAccess) error {
	if s == nil || s.DeletedAt != nil {
		return NotFound("space")
	}
	if spaceRoleIn(a, granteeOf(caller, s.OrganizationID), s) == "" {
		return NotFound("space")
	}
	return nil
}

// liveSpaceAllowed decides whether caller may read space id as of the
// hub's snapshots (read once for all subscribers).
func liveSpaceAllowed(ctx context.Context, a *live.Snapshots[*orgAccess], caller *Caller, id string) error {
	s, err := a.Space(ctx, id)
	if err != nil {
		return orNotFound(err, "space")
	}
	g := granteeOf(caller, s.OrganizationID)
	var oa *orgAccess
	if g.member && !g.isAdmin() {
		if oa, err = a.Org(ctx, s.OrganizationID); err != nil {
			return err
		}
	}
	return spaceAllowed(caller, s, oa)
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
