// Package budget is the rate budget shared by /graphql and the REST
// adapter: each caller (a token, or an anonymous client's address) may
// spend Limit points per fixed Window, an operation costing its computed
// complexity. The count is kept in PostgreSQL (Store), so every instance
// behind a load balancer draws on the same budget.
//
// Counting every request in the database would add a round trip to the
// cheapest reads, so each instance admits requests against what it last
// heard from the database plus what it has admitted since (pending), and
// adds pending to the database in the background (every FlushEvery), or
// before admitting a request that would take pending past Allowance. An
// instance therefore never holds more than Allowance unreported points of a
// caller: across N instances a caller spends at most Limit + N×Allowance
// points in a window, and on one instance exactly Limit. With Allowance 0
// every request is counted in the database before it runs, in the statement
// that tells whether it fits: exact across instances too.
package budget

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// Store keeps the shared count (store.DB).
type Store interface {
	// AddRateUsage adds n to key's count of the window starting at window
	// and returns the count after it, atomically.
	AddRateUsage(ctx context.Context, key string, window time.Time, n int64) (int64, error)
	// DeleteRateUsageBefore deletes the counts of windows started before t.
	DeleteRateUsageBefore(ctx context.Context, t time.Time) (int64, error)
}

// Config configures a Budget.
type Config struct {
	// Limit is the points a caller may spend per Window.
	Limit  int64
	Window time.Duration
	// Allowance is what an instance may admit of a caller beyond what it
	// last heard from the database (default Limit/100; 0 with
	// ExactAllowance: every request counted in the database first).
	Allowance      int64
	ExactAllowance bool
	// FlushEvery spaces the background additions (default 250 ms).
	FlushEvery time.Duration
	Clock      func() time.Time
	Log        *slog.Logger
}

// Usage is a caller's budget as one request left it.
type Usage struct {
	Limit int64
	// Cost is what the request cost (0 when it was refused).
	Cost int64
	// Used is what the window has spent, the request included.
	Used int64
	// Reset is when the window ends and the budget is whole again.
	Reset time.Time
}

// Remaining is what is left to spend in the window.
func (u Usage) Remaining() int64 { return max(0, u.Limit-u.Used) }

// Budget is an instance's side of the shared rate budget.
type Budget struct {
	cfg   Config
	store Store

	mu      sync.Mutex
	callers map[string]*caller
	// swept is the window whose predecessors' counts were last deleted.
	swept time.Time

	stop chan struct{}
	done chan struct{}
}

// caller is one caller's count on this instance, for one window.
type caller struct {
	mu     sync.Mutex
	window time.Time
	// known is the window's count in the database when last heard;
	// pending what this instance admitted since and has not added yet.
	known, pending int64
}

// New starts a budget (its background flusher runs until Close).
func New(store Store, cfg Config) *Budget {
	if cfg.Allowance == 0 && !cfg.ExactAllowance {
		cfg.Allowance = cfg.Limit / 100
	}
	if cfg.FlushEvery == 0 {
		cfg.FlushEvery = 250 * time.Millisecond
	}
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	b := &Budget{cfg: cfg, store: store, callers: map[string]*caller{},
		stop: make(chan struct{}), done: make(chan struct{})}
	go b.flusher()
	return b
}

// Close stops the flusher, adding what is pending first (nil: nothing).
func (b *Budget) Close() {
	if b == nil {
		return
	}
	select {
	case <-b.stop:
		return
	default:
	}
	close(b.stop)
	<-b.done
}

// Limit is the points per window.
func (b *Budget) Limit() int64 { return b.cfg.Limit }

// Window is the window's length.
func (b *Budget) Window() time.Duration { return b.cfg.Window }

func (b *Budget) windowOf(now time.Time) time.Time { return now.Truncate(b.cfg.Window) }

func (b *Budget) callerOf(key string) *caller {
	b.mu.Lock()
	defer b.mu.Unlock()
	c := b.callers[key]
	if c == nil {
		c = &caller{}
		b.callers[key] = c
	}
	return c
}

// Charge spends cost points of key's budget, unless that would take the
// window past the limit: then nothing is spent and ok is false. The usage
// says what is left either way.
func (b *Budget) Charge(key string, cost int64) (u Usage, ok bool) {
	now := b.cfg.Clock()
	w := b.windowOf(now)
	c := b.callerOf(key)
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.window.Equal(w) {
		// A new window: what was pending of the last one no longer limits
		// anyone.
		c.window, c.known, c.pending = w, 0, 0
	}
	u = Usage{Limit: b.cfg.Limit, Used: c.known + c.pending, Reset: w.Add(b.cfg.Window)}
	if u.Used+cost > b.cfg.Limit {
		// What is known and pending is spent for sure (others may have
		// spent more): a refusal on it is never wrong, and asks no one.
		return u, false
	}
	if c.pending+cost <= b.cfg.Allowance {
		c.pending += cost
		u.Cost, u.Used = cost, u.Used+cost
		return u, true
	}
	// Past what this instance may admit unheard: the request is counted in
	// the database with what is pending, in one statement that also tells
	// what the others spent.
	used, err := b.add(key, c.window, c.pending+cost)
	if err != nil {
		b.cfg.Log.Warn("rate budget: cannot add to the shared count; admitting on what is known", "err", err)
		c.pending += cost
		u.Cost, u.Used = cost, u.Used+cost
		return u, true
	}
	c.known, c.pending = used, 0
	if used > b.cfg.Limit {
		// Over with this request: refused, and its cost taken back (should
		// that fail, the count errs on the caller's side of the limit).
		if back, err := b.add(key, c.window, -cost); err == nil {
			c.known = back
		}
		u.Used = c.known
		return u, false
	}
	u.Cost, u.Used = cost, used
	return u, true
}

// Peek is key's budget as this instance knows it, spending nothing and
// asking no one.
func (b *Budget) Peek(key string) Usage {
	w := b.windowOf(b.cfg.Clock())
	u := Usage{Limit: b.cfg.Limit, Reset: w.Add(b.cfg.Window)}
	b.mu.Lock()
	c := b.callers[key]
	b.mu.Unlock()
	if c == nil {
		return u
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.window.Equal(w) {
		u.Used = c.known + c.pending
	}
	return u
}

// flushLocked adds c's pending points to the database and learns the
// window's count. A failure (the database out of reach) keeps them pending:
// the budget does not turn a database fault into refusals, and a request
// meets the fault itself if it needs the database.
func (b *Budget) flushLocked(key string, c *caller) {
	used, err := b.add(key, c.window, c.pending)
	if err != nil {
		b.cfg.Log.Warn("rate budget: cannot add to the shared count", "err", err)
		return
	}
	c.known, c.pending = used, 0
}

// add adds n to key's count of window in the database. Not under the
// request's context: a flush carries other requests' points too, and is no
// query of the request (its debug statistics).
func (b *Budget) add(key string, window time.Time, n int64) (int64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return b.store.AddRateUsage(ctx, key, window, n)
}

// flusher adds pending points every FlushEvery, forgets callers of ended
// windows, and deletes ended windows' counts once per window.
func (b *Budget) flusher() {
	defer close(b.done)
	t := time.NewTicker(b.cfg.FlushEvery)
	defer t.Stop()
	for {
		select {
		case <-b.stop:
			b.flushAll()
			return
		case <-t.C:
			b.flushAll()
		}
	}
}

func (b *Budget) flushAll() {
	w := b.windowOf(b.cfg.Clock())
	b.mu.Lock()
	keys := make(map[string]*caller, len(b.callers))
	for k, c := range b.callers {
		keys[k] = c
	}
	sweep := !b.swept.Equal(w)
	b.swept = w
	b.mu.Unlock()
	for key, c := range keys {
		c.mu.Lock()
		if c.pending > 0 {
			b.flushLocked(key, c)
		}
		ended := c.window.Before(w) && c.pending == 0
		c.mu.Unlock()
		if ended {
			b.mu.Lock()
			// Charge may have found it since and moved it to this window.
			if c.mu.TryLock() {
				if c.window.Before(w) {
					delete(b.callers, key)
				}
				c.mu.Unlock()
			}
			b.mu.Unlock()
		}
	}
	if sweep {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		// The previous window is kept: an instance whose clock lags a
		// little may still be counting it.
		if _, err := b.store.DeleteRateUsageBefore(ctx, w.Add(-b.cfg.Window)); err != nil {
			b.cfg.Log.Warn("rate budget: cannot delete ended windows", "err", err)
		}
	}
}

// Refusal is the message of a request refused for an exhausted budget.
func (u Usage) Refusal(window time.Duration) string {
	return fmt.Sprintf("rate limit exceeded: %d points per %s; the budget is whole again at %s",
		u.Limit, window, u.Reset.UTC().Format(time.RFC3339))
}

// RetryAfter is the seconds until the window ends (at least 1).
func (u Usage) RetryAfter(now time.Time) int64 {
	return max(1, int64((u.Reset.Sub(now)+time.Second-1)/time.Second))
}

// Meter is one request's (or websocket connection's) side of the budget:
// whose budget it draws on, and what the last charge left.
type Meter struct {
	Key string

	mu      sync.Mutex
	usage   Usage
	charged bool
	refused bool
}

// Record notes what a charge left.
func (m *Meter) Record(u Usage, ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.usage, m.charged, m.refused = u, true, m.refused || !ok
}

// Last is what the last charge left; ok false before any.
func (m *Meter) Last() (u Usage, refused, ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.usage, m.refused, m.charged
}

type meterKey struct{}

// WithMeter returns ctx whose operations draw on m's budget.
func WithMeter(ctx context.Context, m *Meter) context.Context {
	return context.WithValue(ctx, meterKey{}, m)
}

// MeterFrom is ctx's meter; nil for an operation that draws on no budget.
func MeterFrom(ctx context.Context) *Meter {
	m, _ := ctx.Value(meterKey{}).(*Meter)
	return m
}
