package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/docsapi/docsapi/store"
	"github.com/docsapi/docsapi/store/atsize"
)

// Other organizations' data, so that the measurements are made at a
// realistic size too: on an almost empty database every plan is fast, and a
// plan that scans every tenant's rows (a hash join over all spaces, say)
// only shows once the tables hold other organizations' rows and PostgreSQL
// has analyzed them (autovacuum does within a minute on a live instance).
//
// The rows are inserted by SQL, set-based (store/atsize: 100,000 spaces and
// their data in a minute or two rather than the hours the API would take).
// None of them is reachable by the bench's user; they make the tables big.
//
// For n spaces: organizations of othersPerOrganization spaces each; every
// space with its revision; n/5 of them published by their organization's
// site; on the busiest tenth of the spaces n/5 change requests, 2n/5
// comments (half on content, half on change requests, open and resolved)
// with n/5 replies, and n/2 pages whose bodies are indexed for search,
// written in the content scenario's vocabulary (so searches of the
// measured organization meet other organizations' matches in the index).
const othersPerOrganization = 100

// othersPlan is the fill of n spaces of other organizations.
func othersPlan(n int) atsize.Plan {
	return atsize.Plan{
		// A prefix per run: DATABASE_URL may name a database a previous
		// run filled already.
		Prefix:         fmt.Sprintf("o%x-", time.Now().UnixNano()&0xffffffff),
		Organizations:  (n + othersPerOrganization - 1) / othersPerOrganization,
		Spaces:         n,
		SiteSpaces:     n / 5,
		ChangeRequests: n / 5,
		Comments:       2 * n / 5,
		Replies:        n / 5,
		Pages:          n / 2,
		Words:          contentWords(),
	}
}

// contentWords is the vocabulary of generated content, the same in every
// scenario.
func contentWords() []string { return vocabulary(rand.New(rand.NewPCG(1, 1)), 5000) }

// seedOthers fills the database with n spaces of other organizations and
// their data (othersPlan), analyzes it, and says what it added.
func seedOthers(ctx context.Context, db *store.DB, n int) (string, error) {
	start := time.Now()
	p := othersPlan(n)
	if err := atsize.Fill(ctx, db.Pool, p); err != nil {
		return "", fmt.Errorf("other organizations: %w", err)
	}
	return fmt.Sprintf("added by SQL, then analyzed, in %s: %d other organizations with %d spaces (and their revisions), "+
		"%d site spaces, %d change requests, %d comments, %d replies, %d searchable pages",
		time.Since(start).Round(time.Millisecond), p.Organizations, p.Spaces, p.SiteSpaces,
		p.ChangeRequests, p.Comments, p.Replies, p.Pages), nil
}
