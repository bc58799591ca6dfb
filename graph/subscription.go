package graph

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"sync"

	"github.com/uptrace/bun"

	"github.com/docsapi/docsapi/graph/generated"
	"github.com/docsapi/docsapi/store"
)

// Subscriptions: live updates over a websocket (the transport is assembled
// in rest/server.go). Changes record live events in their own transactions
// (store.RecordLiveEvent, recordLive below); LiveHub (live.go) hears of them
// through PostgreSQL and offers each to the subscriptions of what it is
// about. Permission is checked when subscribing and again for every event,
// as the caller is now (their token re-resolved, fresh loaders): a caller
// who lost access gets no more events, and the subscription completes.

// LiveConnection is what a websocket connection gives its subscriptions:
// how to resolve its caller again, and a bound on how many subscriptions it
// may hold at once.
type LiveConnection struct {
	// Caller resolves the connection's token again (ErrUnauthenticated once
	// it matches no one).
	Caller func(ctx context.Context) (*Caller, error)
	// MaxSubscriptions bounds the connection's concurrent subscriptions.
	MaxSubscriptions int

	mu     sync.Mutex
	active int
}

type liveConnectionKey struct{}

// WithLiveConnection returns a context carrying c, for the subscriptions of
// one websocket connection.
func WithLiveConnection(ctx context.Context, c *LiveConnection) context.Context {
	return context.WithValue(ctx, liveConnectionKey{}, c)
}

func (c *LiveConnection) acquire() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.active >= c.MaxSubscriptions {
		return &Error{Status: http.StatusTooManyRequests, Code: "TOO_MANY_SUBSCRIPTIONS",
			Message: "this connection holds the most subscriptions it may; complete one, or open another connection"}
	}
	c.active++
	return nil
}

func (c *LiveConnection) release() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.active--
}

func (r *Resolver) Subscription() generated.SubscriptionResolver { return &subscriptionResolver{r} }

type subscriptionResolver struct{ *Resolver }

func (r *subscriptionResolver) SpaceEvents(ctx context.Context, spaceID string) (<-chan *store.LiveEvent, error) {
	// SECURITY: those who can read the space (access.go), now and at each event.
	if _, err := r.space(ctx, spaceID); err != nil {
		return nil, err
	}
	return subscribeLive(r.Resolver, ctx, liveSpaceKey(spaceID), func(ctx context.Context, n liveNote) (*store.LiveEvent, error) {
		if n.live == nil || n.live.SpaceID == nil || *n.live.SpaceID != spaceID {
			return nil, nil
		}
		if _, err := r.space(ctx, spaceID); err != nil {
			return nil, err
		}
		return n.live, nil
	})
}

func (r *subscriptionResolver) SiteEvents(ctx context.Context, organizationID, siteID string) (<-chan *store.LiveEvent, error) {
	// SECURITY: readers of the site's organization (site.go), now and at each event.
	if _, err := r.site(ctx, organizationID, siteID); err != nil {
		return nil, err
	}
	return subscribeLive(r.Resolver, ctx, liveSiteKey(siteID), func(ctx context.Context, n liveNote) (*store.LiveEvent, error) {
		if n.live == nil || n.live.SiteID == nil || *n.live.SiteID != siteID || n.live.OrganizationID != organizationID {
			return nil, nil
		}
		if _, err := r.site(ctx, organizationID, siteID); err != nil {
			return nil, err
		}
		return n.live, nil
	})
}

func (r *subscriptionResolver) IntegrationEvents(ctx context.Context, name string) (<-chan *store.IntegrationEvent, error) {
	in, err := r.integration(ctx, name)
	if err != nil {
		return nil, err
	}
	return subscribeLive(r.Resolver, ctx, liveIntegrationKey(in.ID), func(ctx context.Context, n liveNote) (*store.IntegrationEvent, error) {
		if n.integration == nil || n.integration.IntegrationID != in.ID {
			return nil, nil
		}
		if _, err := r.integration(ctx, name); err != nil {
			return nil, err
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

// subscribeLive subscribes to the events about key: each one the hub
// offers goes through check, in a context with the caller as they are now
// and fresh loaders, which returns what to send (nil: not for this
// subscriber) or an error that ends the subscription (access lost).
func subscribeLive[T comparable](r *Resolver, ctx context.Context, key string, check func(ctx context.Context, n liveNote) (T, error)) (<-chan T, error) {
	conn, ok := ctx.Value(liveConnectionKey{}).(*LiveConnection)
	if !ok {
		return nil, BadRequest("subscriptions are served over a websocket at /graphql (the graphql-transport-ws protocol)")
	}
	if err := conn.acquire(); err != nil {
		return nil, err
	}
	sub, err := r.Live.subscribe(ctx, key)
	if err != nil {
		conn.release()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		r.Log.ErrorContext(ctx, "subscribe", "err", err)
		return nil, errors.New("internal error")
	}
	out := make(chan T, 1)
	go func() {
		defer close(out)
		// The slot is freed before the hub forgets the subscriber: once
		// the hub's count shows it gone, the connection has room again.
		defer r.Live.unsubscribe(sub)
		defer conn.release()
		var zero T
		for {
			var n liveNote
			select {
			case <-ctx.Done():
				return
			case note, ok := <-sub.inbox:
				if !ok {
					return
				}
				n = note
			}
			caller, err := conn.Caller(ctx)
			if err != nil {
				if !errors.Is(err, ErrUnauthenticated) && ctx.Err() == nil {
					r.Log.ErrorContext(ctx, "subscription: resolving the caller", "err", err)
				}
				return
			}
			evCtx := WithLoaders(WithCaller(ctx, caller), NewLoaders(r.DB))
			v, err := check(evCtx, n)
			if err != nil {
				var gerr *Error
				if !errors.As(err, &gerr) && ctx.Err() == nil {
					r.Log.ErrorContext(ctx, "subscription: checking an event", "err", err)
				}
				return
			}
			if v == zero {
				continue
			}
			select {
			case out <- v:
			case <-ctx.Done():
				return
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
