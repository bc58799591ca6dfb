package live

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/docsapi/docsapi/graph/engine"
)

// Caller is who a connection's subscriptions act as: graph's *Caller. A
// connection keeps it while no change to callers is heard and its token
// has not expired, and compares it with the one resolved next (Watch).
type Caller[C any] interface {
	comparable
	// Expired tells whether the caller's token has expired by now.
	Expired(now time.Time) bool
	// SameAs tells whether o is the same user with the same memberships.
	SameAs(o C) bool
}

// Connection is what a websocket connection gives its subscriptions:
// how to resolve its caller again, a bound on how many subscriptions it may
// hold at once, and what tells it to re-check them.
type Connection[C Caller[C]] struct {
	// Caller resolves the connection's token again, as of now
	// (engine.ErrTokenInvalid once it matches no one or has expired).
	Caller func(ctx context.Context) (C, error)
	// MaxSubscriptions bounds the connection's concurrent subscriptions.
	MaxSubscriptions int
	// Changed, when set, returns a channel closed when callers may have
	// changed (store.CallerCache.Changed).
	Changed func() <-chan struct{}
	// RecheckEvery spaces the re-checks Watch makes with no change heard
	// (default DefaultRecheck).
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
		caller  C
		changed <-chan struct{}
	}
	// subs holds each subscription's re-check signal.
	subs map[chan struct{}]struct{}
	// revoked is closed once the connection's token is found no longer
	// valid (made on first use).
	revoked chan struct{}
}

// DefaultRecheck is how often, at the longest, a subscription's caller
// and permission are re-checked with no event and no change heard: the
// bound on how long a subscription outlives an expired token, a listener
// that is down, or access lost through something other than the caller
// (a space's permissions).
const DefaultRecheck = 30 * time.Second

// changeJitter bounds the pause before a connection re-resolves its
// caller after a change: every connection hears every change, which has
// just emptied the caller cache, so their lookups are spread out (and a
// burst of changes costs one).
const changeJitter = 500 * time.Millisecond

type connectionKey struct{}

// WithConnection returns a context carrying c, for the subscriptions of
// one websocket connection.
func WithConnection[C Caller[C]](ctx context.Context, c *Connection[C]) context.Context {
	return context.WithValue(ctx, connectionKey{}, c)
}

// ConnectionFrom is the connection ctx carries (WithConnection), if any.
func ConnectionFrom[C Caller[C]](ctx context.Context) (*Connection[C], bool) {
	c, ok := ctx.Value(connectionKey{}).(*Connection[C])
	return c, ok
}

// ErrConnectionFull is why a connection refuses one more subscription
// (MaxSubscriptions); graph tells its client with a
// TOO_MANY_SUBSCRIPTIONS error.
var ErrConnectionFull = errors.New("live updates: this connection holds the most subscriptions it may")

// Acquire takes a subscription slot and returns its re-check signal
// (ErrConnectionFull when none is left). The caller must Release it.
func (c *Connection[C]) Acquire() (chan struct{}, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.subs) >= c.MaxSubscriptions {
		return nil, ErrConnectionFull
	}
	if c.subs == nil {
		c.subs = map[chan struct{}]struct{}{}
	}
	recheck := make(chan struct{}, 1)
	c.subs[recheck] = struct{}{}
	return recheck, nil
}

// Release frees the slot of recheck (Acquire).
func (c *Connection[C]) Release(recheck chan struct{}) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.subs, recheck)
}

// holding tells whether the connection holds any subscription.
func (c *Connection[C]) holding() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.subs) > 0
}

// recheck asks every subscription to re-check its permission (a request
// already pending stands for this one).
func (c *Connection[C]) recheck() {
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
func (c *Connection[C]) Revoked() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.revokedLocked()
}

func (c *Connection[C]) revokedLocked() chan struct{} {
	if c.revoked == nil {
		c.revoked = make(chan struct{})
	}
	return c.revoked
}

// Revoke records that the connection's token is no longer valid: its
// subscriptions end, and the transport closes the connection once they have
// (graph/engine's websocket).
func (c *Connection[C]) Revoke() {
	c.mu.Lock()
	defer c.mu.Unlock()
	revoked := c.revokedLocked()
	select {
	case <-revoked:
	default:
		close(revoked)
	}
}

// Current is the connection's caller as of now: the one last resolved
// while no change to callers has been heard since (and its token not
// expired by now), else resolved again.
func (c *Connection[C]) Current(ctx context.Context) (C, error) {
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

// Fresh is the connection's caller resolved as of now, and kept (so a
// subscription's first event finds it).
func (c *Connection[C]) Fresh(ctx context.Context) (C, error) {
	c.resolving.Lock()
	defer c.resolving.Unlock()
	return c.resolve(ctx)
}

// kept returns the caller held, while it is still valid.
func (c *Connection[C]) kept() (C, bool) {
	var none C
	c.mu.Lock()
	caller, changed := c.held.caller, c.held.changed
	c.mu.Unlock()
	if caller == none || changed == nil {
		return none, false
	}
	select {
	case <-changed:
		return none, false
	default:
	}
	// SECURITY: a token that has expired since is looked up again (and
	// found no longer valid).
	now := time.Now()
	if c.Now != nil {
		now = c.Now()
	}
	return caller, !caller.Expired(now)
}

// resolve resolves the caller afresh and keeps it.
func (c *Connection[C]) resolve(ctx context.Context) (C, error) {
	// Taken before resolving: a change from now on makes it stale.
	changed := c.changed()
	caller, err := c.Caller(ctx)
	if err != nil {
		var none C
		return none, err
	}
	c.mu.Lock()
	c.held.caller, c.held.changed = caller, changed
	c.mu.Unlock()
	return caller, nil
}

// changed is the channel Changed returns, or nil (never ready) without one.
func (c *Connection[C]) changed() <-chan struct{} {
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
func (c *Connection[C]) Watch(ctx context.Context, log *slog.Logger) {
	tick := time.NewTicker(cmp.Or(c.RecheckEvery, DefaultRecheck))
	defer tick.Stop()
	revoked := c.Revoked()
	changed := c.changed()
	var last, none C
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
			case <-time.After(rand.N(changeJitter)):
			}
		}
		// Taken before resolving: a change from now on wakes the next round.
		changed = c.changed()
		if !c.holding() {
			last = none
			continue
		}
		// SECURITY: the token as of now (engine.ErrTokenInvalid once
		// deleted or expired) and the memberships as they are now; kept
		// for the subscriptions' events.
		caller, err := c.Fresh(ctx)
		if errors.Is(err, engine.ErrTokenInvalid) {
			c.Revoke()
			return
		}
		if err != nil {
			if ctx.Err() == nil {
				log.WarnContext(ctx, "subscriptions: re-checking the caller failed; retrying at the next change or tick", "err", err)
			}
			continue
		}
		if every || last == none || !caller.SameAs(last) {
			c.recheck()
		}
		last = caller
	}
}
