package store

import (
	"context"
	"fmt"
	"sync"
)

// serializeLockSpace is the first key of Serialize's advisory locks: the
// two-key locks are a key space apart from the one-key locks of migrations
// and conversation insights, and this one keeps them apart from any other.
const serializeLockSpace int32 = 0x45544147 // "ETAG"

// Serialize runs fn holding a PostgreSQL advisory lock named key: across
// every process on the database, one fn at a time per key (names hash to
// 32 bits; two that collide wait for each other, harmlessly). The lock is a
// transaction-level lock taken on a connection of its own, released when fn
// returns, or with the connection if the process dies. fn gets ctx as it
// is, with no transaction in it: what it runs takes connections and makes
// transactions of its own as usual.
//
// Each fn holds a connection besides the ones it uses, so the connections
// holding or awaiting locks are bounded: within a process, callers of one
// key queue in memory, and only the first waits on PostgreSQL; at most a
// quarter of the pool's connections do, the others are left for the work.
// Waiting for a lock another process holds is bounded by the statement
// timeout (a timeout error).
func (db *DB) Serialize(ctx context.Context, key string, fn func(ctx context.Context) error) error {
	unlock, err := db.serialKeys.lock(ctx, key)
	if err != nil {
		return err
	}
	defer unlock()
	select {
	case db.serialSlots <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-db.serialSlots }()
	tx, err := db.Pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("store: serialize: %w", err)
	}
	// Rollback releases the lock; nothing was written.
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1, hashtext($2))", serializeLockSpace, key); err != nil {
		return translate(err)
	}
	return fn(ctx)
}

// keyedMutex is a mutex per key, kept while someone holds or awaits it.
type keyedMutex struct {
	mu   sync.Mutex
	keys map[string]*keyLock
}

type keyLock struct {
	held  chan struct{} // holds a value while locked
	users int
}

// lock locks key, or gives up when ctx ends.
func (k *keyedMutex) lock(ctx context.Context, key string) (unlock func(), err error) {
	k.mu.Lock()
	if k.keys == nil {
		k.keys = map[string]*keyLock{}
	}
	l := k.keys[key]
	if l == nil {
		l = &keyLock{held: make(chan struct{}, 1)}
		k.keys[key] = l
	}
	l.users++
	k.mu.Unlock()
	release := func() {
		k.mu.Lock()
		if l.users--; l.users == 0 {
			delete(k.keys, key)
		}
		k.mu.Unlock()
	}
	select {
	case l.held <- struct{}{}:
		return func() { <-l.held; release() }, nil
	case <-ctx.Done():
		release()
		return nil, ctx.Err()
	}
}
