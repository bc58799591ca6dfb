package store

import (
	"context"
	"log/slog"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"

	"github.com/hashicorp/golang-lru/v2/expirable"
	"github.com/uptrace/bun"
)

// Every request resolves its bearer token to a user and their memberships.
// CallerCache keeps those answers in memory so most requests skip that
// query, without ever serving a stale one after a change is known:
//
//   - Writes to the tables a caller is made of (users, api_tokens,
//     organization_members, organizations) through this process empty the
//     cache as soon as they are committed (callerWatchHook below): a request
//     that follows a write's response sees the write.
//   - Other processes learn of them through PostgreSQL: the same hook
//     NOTIFYs callersChannel with the write, at commit (notify.go), and
//     every process LISTENs on it.
//   - The cache is used only while the LISTEN connection is up. When it
//     drops, lookups go to the database until it is back (and the cache is
//     emptied then, since notifications may have been missed).
//   - A generation number, bumped by every invalidation, stops a lookup that
//     raced with a change from storing what it read before the change.
//   - Entries expire after callerTTL whatever happens: a last resort against
//     a change made behind PostgreSQL's back (a restored backup).
//
// Every invalidation also closes the channel Changed returned: long-lived
// holders of a caller (websocket subscriptions) re-resolve theirs then.
type CallerCache struct {
	db      *DB
	entries *expirable.LRU[string, cachedCaller]
	gen     atomic.Uint64
	live    atomic.Bool

	mu      sync.Mutex
	changed chan struct{}
}

// cachedCaller is a lookup's answer, the token's organization scope
// included: a cached caller is never wider than the token.
type cachedCaller struct {
	caller *TokenCaller
	gen    uint64
}

const (
	callersChannel = "docsapi_callers"
	callerTTL      = time.Minute
	callerEntries  = 10_000
)

func newCallerCache(db *DB) *CallerCache {
	return &CallerCache{db: db, entries: expirable.NewLRU[string, cachedCaller](callerEntries, nil, callerTTL),
		changed: make(chan struct{})}
}

// Caller is CallerByToken, answered from memory when it safely can; a token
// that has expired by now is ErrNotFound, cached or not. What it returns is
// shared: callers must not modify it.
func (c *CallerCache) Caller(ctx context.Context, token string, now time.Time) (*TokenCaller, error) {
	digest := string(TokenDigest(token))
	gen := c.gen.Load()
	e, ok := cachedCaller{}, false
	if c.live.Load() {
		e, ok = c.entries.Get(digest)
		ok = ok && e.gen == gen
	}
	if !ok {
		var err error
		e.caller, err = CallerByToken(ctx, c.db, token)
		if err != nil {
			return nil, err
		}
		if c.live.Load() && c.gen.Load() == gen {
			e.gen = gen
			c.entries.Add(digest, e)
		}
	}
	if e.caller.ExpiresAt != nil && !now.Before(*e.caller.ExpiresAt) {
		return nil, ErrNotFound
	}
	return e.caller, nil
}

// Invalidate forgets every cached caller.
func (c *CallerCache) Invalidate() {
	c.gen.Add(1)
	c.entries.Purge()
	c.mu.Lock()
	close(c.changed)
	c.changed = make(chan struct{})
	c.mu.Unlock()
}

// Changed returns a channel closed at the next invalidation: some caller
// may have changed (a token deleted, a membership removed), here or, while
// the listener is up, in another process. It says nothing of which; while
// the listener is down, changes made elsewhere close it only when the
// listener is back (holders re-check on a timer too).
func (c *CallerCache) Changed() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.changed
}

// listen keeps a connection LISTENing on callersChannel until ctx ends,
// reconnecting with a growing pause when it drops.
func (c *CallerCache) listen(ctx context.Context, log *slog.Logger) {
	pause := 100 * time.Millisecond
	for ctx.Err() == nil {
		err := c.listenOnce(ctx)
		c.live.Store(false)
		c.Invalidate()
		if ctx.Err() != nil {
			return
		}
		log.Warn("caller cache: listening for changes failed; tokens are checked against the database until it is back", "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(pause):
		}
		pause = min(2*pause, 10*time.Second)
	}
}

func (c *CallerCache) listenOnce(ctx context.Context) error {
	pooled, err := c.db.Pool.Acquire(ctx)
	if err != nil {
		return err
	}
	// Taken out of the pool for good: a connection that has LISTENed is
	// closed, never handed to someone else.
	conn := pooled.Hijack()
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "LISTEN "+callersChannel); err != nil {
		return err
	}
	// Anything may have changed while nobody listened.
	c.Invalidate()
	c.live.Store(true)
	for {
		if _, err := conn.WaitForNotification(ctx); err != nil {
			return err
		}
		c.Invalidate()
	}
}

// callerTables are the tables a caller is read from.
var callerTables = []string{"users", "api_tokens", "organization_members", "organizations"}

// txWrites marks the context of a transaction run by RunInTx: writes to
// callerTables inside it invalidate the cache once the transaction commits,
// not before (a lookup in between would read, and cache, the old rows).
// It also collects the integration events to deliver after the commit
// (store/delivery.go).
type txWrites struct {
	callers atomic.Pointer[CallerCache]

	// origin is the DB's (DB.Origin), for the payloads it marks.
	origin string

	mu         sync.Mutex
	deliveries []string
	// notifications are raised just before the commit (notify.go).
	notifications []notification
}

type txWritesKey struct{}

// callerWatchHook invalidates the cache after a successful write to one of
// callerTables: at once outside a transaction, at commit inside one.
type callerWatchHook struct{ cache *CallerCache }

func (callerWatchHook) BeforeQuery(ctx context.Context, _ *bun.QueryEvent) context.Context {
	return ctx
}

func (h callerWatchHook) AfterQuery(ctx context.Context, e *bun.QueryEvent) {
	if e.Err != nil || !writesCallerTable(e) {
		return
	}
	if w, ok := ctx.Value(txWritesKey{}).(*txWrites); ok {
		w.callers.Store(h.cache)
		// The other processes' caches: at commit, with the write.
		_ = notifyAtCommit(ctx, nil, callersChannel, "")
		return
	}
	h.cache.Invalidate()
	// A statement on its own is committed already: tell the others now.
	if e.DB != nil {
		if _, err := e.DB.ExecContext(ctx, "SELECT pg_notify(?, '')", callersChannel); err != nil {
			slog.Default().Warn("caller cache: could not tell the other processes of a change; their caches expire within a minute", "err", err)
		}
	}
}

// readOnly tells a statement that writes nothing: one that starts with
// SELECT, or a WITH without a data-modifying word. From the statement's
// text, not bun's QueryEvent.Operation, which says SELECT for every
// NewRaw query: a DELETE FROM api_tokens by NewRaw emptied no cache and
// told no other process (TestTwoInstances' revoked token, served from
// another instance's cache until its TTL).
func readOnly(query string) bool {
	q := strings.TrimLeftFunc(query, unicode.IsSpace)
	end := strings.IndexFunc(q, unicode.IsSpace)
	if end < 0 {
		end = len(q)
	}
	switch first := q[:end]; {
	case strings.EqualFold(first, "SELECT"):
		return true
	case strings.EqualFold(first, "WITH"):
		return !modifyingWord.MatchString(q)
	}
	return false
}

// modifyingWord finds a data-modifying keyword as a word (deleted_at and
// updated_at are not; a FOR UPDATE is, which costs an empty cache only).
var modifyingWord = regexp.MustCompile(`(?i)\b(insert|update|delete|truncate)\b`)

// writesCallerTable tells whether a query may have written one of
// callerTables: anything but a SELECT that names one (quoted, as bun writes
// them, or bare in hand-written SQL). A false positive costs an empty cache,
// never a stale answer.
func writesCallerTable(e *bun.QueryEvent) bool {
	if readOnly(e.Query) {
		return false
	}
	for _, t := range callerTables {
		if strings.Contains(e.Query, `"`+t+`"`) || strings.Contains(e.Query, " "+t+" ") {
			return true
		}
	}
	return false
}
