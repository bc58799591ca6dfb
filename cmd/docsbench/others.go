package main

import (
	"context"
	"fmt"
	"time"

	"github.com/docsapi/docsapi/store"
)

// Other organizations' data, so that the tree is measured at a realistic
// size too: on an almost empty database every plan is fast, and a plan that
// scans every tenant's rows (a hash join over all spaces, say) only shows
// once the tables hold other organizations' rows and PostgreSQL has
// analyzed them (autovacuum does within a minute on a live instance).
//
// The rows are inserted by SQL, set-based (100,000 spaces in seconds
// rather than the hour the API would take): organizations of
// othersPerOrganization spaces each, every space with its revision. None of
// them is reachable by the bench's user; they only make the tables big.
const othersPerOrganization = 100

// seedOthers inserts n spaces of other organizations (with their
// revisions) and analyzes the database.
func seedOthers(ctx context.Context, db *store.DB, n int) (time.Duration, error) {
	start := time.Now()
	orgs := (n + othersPerOrganization - 1) / othersPerOrganization
	// A prefix per run: DATABASE_URL may name a database a previous run
	// filled already.
	prefix := fmt.Sprintf("o%x-", time.Now().UnixNano()&0xffffffff)
	statements := []string{
		`INSERT INTO organizations (id, title, created_at, updated_at)
		 SELECT $1 || 'org-' || g, 'Other ' || g, now(), now() FROM generate_series(1, $2::int) g`,
		`INSERT INTO spaces (id, organization_id, title, revision_id, created_at, updated_at)
		 SELECT $1 || 'space-' || g, $1 || 'org-' || (1 + g % $2::int), 'Space ' || g, $1 || 'rev-' || g, now(), now()
		 FROM generate_series(1, $3::int) g`,
		`INSERT INTO revisions (id, space_id, organization_id, type, created_at)
		 SELECT $1 || 'rev-' || g, $1 || 'space-' || g, $1 || 'org-' || (1 + g % $2::int), 'edits', now()
		 FROM generate_series(1, $3::int) g`,
	}
	for i, q := range statements {
		args := []any{prefix, orgs, n}
		if i == 0 {
			args = []any{prefix, orgs}
		}
		if _, err := db.Pool.Exec(ctx, q, args...); err != nil {
			return 0, fmt.Errorf("other organizations: %w", err)
		}
	}
	if _, err := db.Pool.Exec(ctx, "ANALYZE"); err != nil {
		return 0, err
	}
	return time.Since(start), nil
}
