package live

import (
	"context"
	"sync"

	"github.com/docsapi/docsapi/store"
)

// Snapshots is what deciding who may receive a space's events needs, kept
// in memory for every subscriber of this process: per organization its
// access snapshot (A: graph's orgAccess, collections, grants, teams), and
// the rows of the spaces subscribed to. Each is read once and kept until
// it changes: the hub hears store.AccessChannel (migration 0034) on the
// connection that brings the events, and forgets the organization's
// entries, so a change committed before an event is known before that
// event is checked. Who may read what is graph's to decide from them
// (graph/subscription.go); this only keeps them.
//
// Entries are trusted only while that connection listens: with it down,
// every lookup reads the database (and nothing is stored); once it is back
// everything is forgotten, since notifications may have been missed.
// Concurrent lookups of one entry share one read.
type Snapshots[A any] struct {
	db         *store.DB
	loadAccess func(ctx context.Context, orgID string) (A, error)

	mu     sync.Mutex
	live   bool
	orgs   map[string]*accessEntry[A]
	spaces map[string]*accessEntry[*store.Space]
}

// accessEntry is one value read, or being read (ready not yet closed).
type accessEntry[T any] struct {
	ready chan struct{}
	val   T
	err   error
	org   string // the organization it belongs to
}

func newSnapshots[A any](db *store.DB, loadAccess func(ctx context.Context, orgID string) (A, error)) *Snapshots[A] {
	return &Snapshots[A]{db: db, loadAccess: loadAccess,
		orgs:   map[string]*accessEntry[A]{},
		spaces: map[string]*accessEntry[*store.Space]{}}
}

// reset forgets everything; live tells whether entries may be kept from
// now on. The maps are emptied, not replaced: lookups name them (a.orgs,
// a.spaces) before they take the lock, so the fields never change.
func (a *Snapshots[A]) reset(live bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.live = live
	clear(a.orgs)
	clear(a.spaces)
}

// forget drops what is known of organization orgID, and every read under
// way (which may have started before the change).
func (a *Snapshots[A]) forget(orgID string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	forgetIn(a.orgs, orgID)
	forgetIn(a.spaces, orgID)
}

func forgetIn[T any](m map[string]*accessEntry[T], orgID string) {
	for key, e := range m {
		select {
		case <-e.ready:
			if e.org != orgID {
				continue
			}
		default:
		}
		delete(m, key)
	}
}

// Org is the access snapshot of orgID.
func (a *Snapshots[A]) Org(ctx context.Context, orgID string) (A, error) {
	return shared(a, a.orgs, ctx, orgID, func(ctx context.Context) (A, string, error) {
		x, err := a.loadAccess(ctx, orgID)
		if err != nil {
			var zero A
			return zero, "", err
		}
		return x, orgID, nil
	})
}

// Space is space id's row, deleted or not (store.ErrNotFound when there is
// none).
func (a *Snapshots[A]) Space(ctx context.Context, id string) (*store.Space, error) {
	return shared(a, a.spaces, ctx, id, func(ctx context.Context) (*store.Space, string, error) {
		s, err := store.GetSpace(ctx, a.db, id)
		if err != nil {
			return nil, "", err
		}
		return s, s.OrganizationID, nil
	})
}

// shared returns m's entry for key, reading it with load (once, however
// many ask at the same time) when it is not known. Failures are not kept.
func shared[T, A any](a *Snapshots[A], m map[string]*accessEntry[T], ctx context.Context, key string, load func(context.Context) (T, string, error)) (T, error) {
	a.mu.Lock()
	if !a.live {
		a.mu.Unlock()
		v, _, err := load(ctx)
		return v, err
	}
	if e := m[key]; e != nil {
		a.mu.Unlock()
		select {
		case <-e.ready:
		case <-ctx.Done():
			var zero T
			return zero, ctx.Err()
		}
		if e.err == nil {
			return e.val, nil
		}
		v, _, err := load(ctx)
		return v, err
	}
	e := &accessEntry[T]{ready: make(chan struct{})}
	m[key] = e
	a.mu.Unlock()
	// Shared: one asker leaving does not fail the others.
	e.val, e.org, e.err = load(context.WithoutCancel(ctx))
	a.mu.Lock()
	if e.err != nil && m[key] == e {
		delete(m, key)
	}
	a.mu.Unlock()
	close(e.ready)
	return e.val, e.err
}
