package graph

import (
	"context"
	"time"

	"github.com/graph-gophers/dataloader/v7"

	"github.com/docsapi/docsapi/store"
)

// Loaders batch and cache reads for one request; middleware creates them for
// every request, GraphQL and REST alike. Loaders keyed by id gather the keys
// asked for within a short window into one query. The site tree's loaders are
// keyed by the site instead (every section of a site is one key), so siblings
// share one pending result and no window is needed on that hot path.
type Loaders struct {
	Organization *dataloader.Loader[string, *store.Organization]
	User         *dataloader.Loader[string, *store.User]
	// Space loads live spaces; deleted ones are not found.
	Space *dataloader.Loader[string, *store.Space]
}

// batchWindow is how long an id loader waits for sibling keys. The hot paths
// do not depend on it (see above); it only merges stragglers.
const batchWindow = 2 * time.Millisecond

// maxBatch keeps IN (...) lists bounded.
const maxBatch = 500

// NewLoaders returns fresh loaders reading from db.
func NewLoaders(db *store.DB) *Loaders {
	return &Loaders{
		Organization: newIDLoader(func(ctx context.Context, ids []string) ([]*store.Organization, error) {
			return store.OrganizationsByIDs(ctx, db, ids)
		}, func(o *store.Organization) string { return o.ID }, "organization"),
		User: newIDLoader(func(ctx context.Context, ids []string) ([]*store.User, error) {
			return store.UsersByIDs(ctx, db, ids)
		}, func(u *store.User) string { return u.ID }, "user"),
		Space: newIDLoader(func(ctx context.Context, ids []string) ([]*store.Space, error) {
			return store.SpacesByIDs(ctx, db, ids)
		}, func(s *store.Space) string { return s.ID }, "space"),
	}
}

// newIDLoader builds a loader over a fetch-by-ids query, answering each key
// with its row or NotFound(what).
func newIDLoader[T any](fetch func(context.Context, []string) ([]T, error), id func(T) string, what string) *dataloader.Loader[string, T] {
	batch := func(ctx context.Context, keys []string) []*dataloader.Result[T] {
		rows, err := fetch(ctx, keys)
		results := make([]*dataloader.Result[T], len(keys))
		if err != nil {
			for i := range results {
				results[i] = &dataloader.Result[T]{Error: err}
			}
			return results
		}
		byID := make(map[string]T, len(rows))
		for _, row := range rows {
			byID[id(row)] = row
		}
		for i, k := range keys {
			if row, ok := byID[k]; ok {
				results[i] = &dataloader.Result[T]{Data: row}
			} else {
				results[i] = &dataloader.Result[T]{Error: NotFound(what)}
			}
		}
		return results
	}
	return dataloader.NewBatchedLoader(batch,
		dataloader.WithWait[string, T](batchWindow),
		dataloader.WithBatchCapacity[string, T](maxBatch))
}

type loadersKey struct{}

// WithLoaders returns a context carrying l.
func WithLoaders(ctx context.Context, l *Loaders) context.Context {
	return context.WithValue(ctx, loadersKey{}, l)
}

// loadersFrom returns the request's loaders.
func (r *Resolver) loaders(ctx context.Context) *Loaders {
	if l, ok := ctx.Value(loadersKey{}).(*Loaders); ok {
		return l
	}
	// A context without loaders (a background job calling a resolver helper)
	// gets private ones: correct, merely uncached across calls.
	return NewLoaders(r.DB)
}
