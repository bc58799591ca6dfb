package store_test

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"testing"

	"github.com/docsapi/docsapi/store/pgtest"
)

// TestHotReadTimings prints the best of 20 EXPLAIN ANALYZE execution times
// of the hot reads at size (100,000 spaces of another organization, and
// the organization read at 100,000) without and with migration 0036's
// indexes, and of the site's spaces read in the three forms it has had (a
// join, an array, a semi-join on the array), and of the totals of lists:
// the figures of docs/performance.md. Opt-in:
// DOCSAPI_PLAN_TIMINGS=1 go test ./store -run TestHotReadTimings -v
func TestHotReadTimings(t *testing.T) {
	if os.Getenv("DOCSAPI_PLAN_TIMINGS") == "" {
		t.Skip()
	}
	db := pgtest.NewDB(t)
	fillOtherOrganization(t, db)
	ctx := context.Background()
	q := map[string]string{
		"spaces of sites (join)":             `SELECT * FROM spaces AS space WHERE space.deleted_at IS NULL AND space.id IN (SELECT ss.space_id FROM site_spaces AS ss WHERE ss.site_id = ANY('{msite}'))`,
		"spaces of sites (array)":            `SELECT * FROM spaces AS space WHERE space.id = ANY(ARRAY(SELECT ss.space_id FROM site_spaces AS ss WHERE ss.site_id = ANY('{msite}'))) AND space.deleted_at IS NULL`,
		"spaces of sites (array, semi-join)": `SELECT * FROM spaces AS space WHERE space.id IN (SELECT unnest(ARRAY(SELECT ss.space_id FROM site_spaces AS ss WHERE ss.site_id = ANY('{msite}')))) AND space.deleted_at IS NULL`,
		"comment list":                       `SELECT * FROM comments c WHERE c.space_id = 'ms1' AND c.change_request_id IS NULL ORDER BY c.posted_at, c.id LIMIT 21`,
		"open counts":                        `SELECT change_request_id, count(*) FROM comments WHERE change_request_id IN ('mcr1','mcr2','mcr3') AND status = 'open' GROUP BY change_request_id`,
		"cr comment list":                    `SELECT * FROM comments c WHERE c.space_id = 'ms1' AND c.change_request_id = 'mcr1' ORDER BY c.posted_at, c.id LIMIT 21`,
		"cr list":                            `SELECT * FROM change_requests cr WHERE cr.space_id IN ('ms1') ORDER BY cr.created_at DESC, cr.id DESC LIMIT 21`,
		// The totals of lists: the count of an organization's spaces that
		// `count` ran on every page before issue 29, and what totalCount
		// reads instead (an admin's, a member's groups, the spaces granted
		// on themselves).
		"count(*) of 100,000 spaces":             `SELECT count(*) FROM "spaces" AS "space" WHERE (organization_id = 'mine' AND deleted_at IS NULL)`,
		"totals of 100,000 spaces (admin)":       `SELECT coalesce(sum(n) FILTER (WHERE kind = 'space'), 0), coalesce(sum(n) FILTER (WHERE kind = 'collection'), 0) FROM organization_content_counts WHERE organization_id = 'mine'`,
		"groups of 100,000 spaces (member)":      `SELECT kind, NULLIF(parent_id, '') AS parent_id, NULLIF(default_level, '') AS default_level, in_collection, n FROM content_counts WHERE organization_id = 'mine' AND n > 0`,
		"spaces granted on themselves":           `SELECT 'space' AS kind, s.id, s.parent_id, s.default_level, s.created_at, true AS live, s.visibility FROM spaces s WHERE s.organization_id = 'mine' AND s.deleted_at IS NULL AND s.id IN (SELECT g.space_id FROM content_grants g WHERE g.organization_id = 'mine' AND g.space_id IS NOT NULL)`,
		"spaces of an organization, page of 100": `SELECT * FROM spaces AS space WHERE organization_id = 'mine' AND deleted_at IS NULL ORDER BY space.created_at, space.id LIMIT 101`,
	}
	re := regexp.MustCompile(`Execution Time: ([0-9.]+) ms`)
	run := func(label string) {
		for name, sql := range q {
			best := 1e9
			var plan string
			for range 20 {
				rows, err := db.Pool.Query(ctx, "EXPLAIN (ANALYZE, BUFFERS OFF) "+sql)
				if err != nil {
					t.Fatal(err)
				}
				plan = ""
				for rows.Next() {
					var line string
					_ = rows.Scan(&line)
					plan += line + "\n"
				}
				rows.Close()
				var ms float64
				fmt.Sscan(re.FindStringSubmatch(plan)[1], &ms)
				best = min(best, ms)
			}
			top := regexp.MustCompile(`(?m)^.*$`).FindString(plan)
			fmt.Printf("%s | %s | %.3f ms | %s\n", label, name, best, top)
		}
	}
	for _, s := range []string{"DROP INDEX comments_space_content_idx", "DROP INDEX comments_change_request_idx", "DROP INDEX change_requests_space_created_idx", "DROP STATISTICS comments_change_request_space", "ANALYZE"} {
		if _, err := db.Pool.Exec(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	run("before")
	for _, s := range []string{
		"CREATE INDEX comments_space_content_idx ON comments (space_id, posted_at, id) WHERE change_request_id IS NULL",
		"CREATE INDEX comments_change_request_idx ON comments (change_request_id, posted_at, id) INCLUDE (status) WHERE change_request_id IS NOT NULL",
		"CREATE INDEX change_requests_space_created_idx ON change_requests (space_id, created_at, id)",
		"CREATE STATISTICS comments_change_request_space (dependencies) ON change_request_id, space_id FROM comments",
		"VACUUM ANALYZE"} {
		if _, err := db.Pool.Exec(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	run("after")
}
