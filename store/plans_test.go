package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/docsapi/docsapi/store"
	"github.com/docsapi/docsapi/store/atsize"
	"github.com/docsapi/docsapi/store/pgtest"
)

// bigTables are the tenant tables that grow with every organization's data:
// a hot read that scans one of them whole costs every request more as the
// instance grows.
var bigTables = []string{"spaces", "site_spaces", "comments", "change_requests", "revisions", "revision_pages", "body_sections", "current_pages", "shown_bodies"}

// fillOtherOrganization gives the database what a busy instance holds
// besides the organization under test: tens of thousands of another
// organization's spaces (each with a revision), a site publishing 20,000 of
// them, change requests, comments with replies and searchable pages
// (store/atsize, the fill docsbench measures at; 10,000 of its sections
// have the word searched), analyzed (as autovacuum
// does within a minute). The organization under test ("mine") has a site
// publishing a thousand spaces, and a space with 500 change requests and
// 2,000 comments on its content and on one of its change requests: lists
// longer than a page.
func fillOtherOrganization(t *testing.T, db *store.DB) {
	t.Helper()
	others := 40_000
	if os.Getenv("DOCSAPI_PLAN_TIMINGS") != "" {
		others = 100_000
	}
	fillOrganizations(t, db, others)
}

// fillOrganizations is fillOtherOrganization with the other organization
// at a size of its own: others spaces, and its other rows in proportion
// (40,000 spaces: the sizes above).
func fillOrganizations(t *testing.T, db *store.DB, others int) {
	t.Helper()
	scaled := func(n int) int { return max(1, n*others/40_000) }
	ctx := context.Background()
	if _, err := db.Pool.Exec(ctx, `INSERT INTO organizations (id, title, created_at, updated_at) VALUES ('other', 'Other', now(), now())`); err != nil {
		t.Fatal(err)
	}
	err := atsize.Fill(ctx, db.Pool, atsize.Plan{Prefix: "o", Organization: "other", Spaces: others, Busy: scaled(10_000),
		SiteSpaces: scaled(20_000), ChangeRequests: scaled(20_000), Comments: scaled(40_000), Replies: scaled(10_000), Pages: scaled(20_000)})
	if err != nil {
		t.Fatal(err)
	}
	kettles := scaled(10_000)
	statements := []string{
		`INSERT INTO organizations (id, title, created_at, updated_at) VALUES ('mine', 'Mine', now(), now())`,
		// The other organization's pages with the word searched below
		// (10,000 sections): an index that is not the organization's would
		// read them all.
		fmt.Sprintf(`INSERT INTO page_bodies (organization_id, sha256, markdown)
			SELECT 'other', 'ob' || i, 'Kettle ' || i FROM generate_series(1, %d) i`, kettles),
		fmt.Sprintf(`INSERT INTO body_sections (organization_id, body_sha256, position, anchor, heading, body)
			SELECT 'other', 'ob' || i, 0, '', '', 'The kettle number ' || i FROM generate_series(1, %d) i`, kettles),
		fmt.Sprintf(`INSERT INTO revision_pages (organization_id, revision_id, page_id, position, type, title, slug, body_sha256, created_at, updated_at)
			SELECT 'other', 'orev-' || i, 'kettle-' || i, 1000, 'document', 'Kettle', 'kettle', 'ob' || i, now(), now()
			FROM generate_series(1, %d) i`, kettles),
		`INSERT INTO users (id, email, display_name, created_at, updated_at) VALUES ('u', 'u@example.com', 'U', now(), now())`,
	}
	// Mine: a site publishing 1,000 spaces; comments on the first.
	statements = append(statements, siteOfAThousandSpaces...)
	statements = append(statements, []string{
		`INSERT INTO change_requests (id, organization_id, space_id, number, status, created_at, updated_at, revision_initial, revision)
			SELECT 'mcr' || i, 'mine', 'ms1', i, 'open', now() - i * interval '1 second', now(), 'mr1', 'mr1'
			FROM generate_series(1, 500) i`,
		`INSERT INTO comments (id, organization_id, space_id, change_request_id, revision_id, body, posted_by, posted_at, status)
			SELECT 'mc' || i, 'mine', 'ms1', CASE WHEN i % 4 = 0 THEN 'mcr1' END, 'mr1', 'Hello', 'u',
				now() - i * interval '1 second', (ARRAY['open', 'resolved'])[i % 2 + 1]
			FROM generate_series(1, 2000) i`,
		// Mine: 100 pages of the first space with a body, some with the word.
		`INSERT INTO page_bodies (organization_id, sha256, markdown)
			SELECT 'mine', 'mb' || i, 'x' FROM generate_series(1, 100) i`,
		`INSERT INTO body_sections (organization_id, body_sha256, position, anchor, heading, body)
			SELECT 'mine', 'mb' || i, 0, '', CASE WHEN i % 10 = 0 THEN 'Kettles' ELSE 'Tea' END,
				CASE WHEN i % 2 = 0 THEN 'A kettle' ELSE 'A cup' END
			FROM generate_series(1, 100) i`,
		`INSERT INTO revision_pages (organization_id, revision_id, page_id, position, type, title, slug, body_sha256, created_at, updated_at)
			SELECT 'mine', 'mr1', 'mp' || i, i, 'document', 'Page ' || i, 'p' || i, 'mb' || i, now(), now()
			FROM generate_series(1, 100) i`,
		// Customized sites: the other organization's site spaces all
		// override their site's settings; of mine, the site and a tenth of
		// its site spaces.
		`INSERT INTO site_customizations (site_id, organization_id, settings, updated_at)
			SELECT id, organization_id, '{"title": "Docs"}', now() FROM sites`,
		`INSERT INTO site_space_customizations (site_space_id, organization_id, site_id, overrides, updated_at)
			SELECT id, organization_id, site_id, '{"title": "Variant"}', now() FROM site_spaces
			WHERE organization_id = 'other' OR position % 10 = 0`,
		`ANALYZE`,
	}...)
	for _, s := range statements {
		if _, err := db.Pool.Exec(ctx, s); err != nil {
			t.Fatalf("%v\n%s", err, s)
		}
	}
}

// The hot reads (the site tree, a space, comment lists, the open comment
// counts of change requests, change request lists, a revision's pages,
// search) reach their rows through indexes driven by the keys they are given: at
// size, no plan of theirs scans a whole tenant table, whether PostgreSQL
// plans the statement for its arguments (custom plans: the first
// executions of a prepared statement, and bun's statements with inline
// arguments) or once for any (the generic plan a prepared statement
// switches to). The statements are the ones the store functions send.
func TestHotReadPlansDoNotScanTenantTables(t *testing.T) {
	if testing.Short() {
		t.Skip("fills a database")
	}
	db := pgtest.NewDB(t)
	fillOtherOrganization(t, db)
	reads := hotReads(db)
	conn, err := db.Pool.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	for _, r := range reads {
		t.Run(r.name, func(t *testing.T) {
			explainEach(t, conn.Conn(), r.read, func(mode string, s store.Statement, plan string) {
				scans, sorts := planProblems(plan)
				if len(scans) > 0 {
					t.Errorf("%s plan scans %s whole:\n%s\n%s", mode, strings.Join(scans, ", "), s.SQL, plan)
				}
				if r.ordered && sorts > 0 {
					t.Errorf("%s plan sorts the list rather than reading it in order:\n%s\n%s", mode, s.SQL, plan)
				}
			})
		})
	}
	t.Run("writes changing what a space shows", func(t *testing.T) { checkShownBodiesWritesByKey(t, conn.Conn()) })
}

// hotRead is a read of the filled database (fillOrganizations) as a
// request makes it. ordered reads page through a list: an index gives the
// rows in the page's order, so the plan has no Sort (which would read
// every row of the list to return twenty).
type hotRead struct {
	name    string
	ordered bool
	read    func(context.Context) error
}

// hotReads are the hot reads of the organization "mine", and a write's
// read in "other", of a database fillOrganizations filled.
func hotReads(db *store.DB) []hotRead {
	busyCR := "mcr1"
	return []hotRead{
		{"GET space", false, func(ctx context.Context) error { _, err := store.GetSpace(ctx, db, "ms1"); return err }},
		{"GET change request", false, func(ctx context.Context) error {
			space, err := store.GetSpace(ctx, db, "ms1")
			if err == nil {
				_, err = store.GetChangeRequest(ctx, db, space, "1")
			}
			return err
		}},
		{"GET comment", false, func(ctx context.Context) error {
			_, err := store.GetComment(ctx, db, "mine", "ms1", nil, "mc1")
			return err
		}},
		{"a revision's pages, bodies and files (GET page, GET file)", false, func(ctx context.Context) error {
			if _, err := store.RevisionPages(ctx, db, "mine", "mr1"); err != nil {
				return err
			}
			if _, err := store.PageBodies(ctx, db, "mine", []string{"mb1", "mb2"}); err != nil {
				return err
			}
			_, err := store.RevisionFiles(ctx, db, "mine", "mr1")
			return err
		}},
		{"spaces of an organization, a page", true, func(ctx context.Context) error {
			_, err := store.ListSpaces(ctx, db, "mine", store.Page{Limit: 20}, false)
			return err
		}},
		{"groups and sections of a site", false, func(ctx context.Context) error {
			if _, err := store.GroupsOfSites(ctx, db, "mine", []string{"msite"}); err != nil {
				return err
			}
			_, err := store.SectionsOfSites(ctx, db, "mine", []string{"msite"})
			return err
		}},
		{"site spaces of a site", false, func(ctx context.Context) error {
			_, err := store.SiteSpacesOfSites(ctx, db, "mine", []string{"msite"}, true)
			return err
		}},
		{"customizations of a site and its site spaces (a published site)", false, func(ctx context.Context) error {
			c, err := store.CustomizationsOfSites(ctx, db, "mine", []string{"msite"})
			if err == nil && len(c) != 101 {
				err = fmt.Errorf("%d customizations, want 101", len(c))
			}
			return err
		}},
		{"spaces of sites", false, func(ctx context.Context) error {
			_, err := store.SpacesOfSites(ctx, db, "mine", []string{"msite"})
			return err
		}},
		{"spaces by ids (the space loader, 5 ids)", false, func(ctx context.Context) error {
			_, err := store.SpacesByIDs(ctx, db, []string{"ms1", "ms2", "ms3", "ms4", "ms5"})
			return err
		}},
		{"spaces by ids (the space loader, 500 ids)", false, func(ctx context.Context) error {
			_, err := store.SpacesByIDs(ctx, db, mySpaceIDs(500))
			return err
		}},
		{"space summaries of sites", false, func(ctx context.Context) error {
			_, err := store.SpaceSummariesOfSites(ctx, db, "mine", []string{"msite"})
			return err
		}},
		{"comment list of a space", true, func(ctx context.Context) error {
			_, err := store.ListComments(ctx, db, "mine", "ms1", nil, store.CommentFilter{}, store.Page{Limit: 20})
			return err
		}},
		{"open comments of a space, newest first", true, func(ctx context.Context) error {
			_, err := store.ListComments(ctx, db, "mine", "ms1", nil, store.CommentFilter{Status: store.CommentOpen, Desc: true}, store.Page{Limit: 20})
			return err
		}},
		{"comment list of a change request", true, func(ctx context.Context) error {
			_, err := store.ListComments(ctx, db, "mine", "ms1", &busyCR, store.CommentFilter{}, store.Page{Limit: 20})
			return err
		}},
		{"open comment counts of change requests", false, func(ctx context.Context) error {
			_, err := store.OpenChangeRequestComments(ctx, db, "mine", []string{"mcr1", "mcr2", "mcr3"})
			return err
		}},
		{"change requests of a space", true, func(ctx context.Context) error {
			_, err := store.ListChangeRequests(ctx, db, "mine", []string{"ms1"}, store.ChangeRequestFilter{}, store.Page{Limit: 20})
			return err
		}},
		{"search of an organization's spaces", false, func(ctx context.Context) error {
			hits, err := store.Search(ctx, db, "mine", []string{"ms1", "ms2", "ms3"}, "kettle")
			if err == nil && len(hits) != 50 {
				err = fmt.Errorf("%d hits, want 50", len(hits))
			}
			return err
		}},
		// A write's read: where a new space goes, at the root of the
		// organization of 40,000 spaces, and in a collection.
		{"next position at an organization's root", false, func(ctx context.Context) error {
			_, err := store.NextPosition(ctx, db, "other", nil)
			return err
		}},
		{"next position in a collection", false, func(ctx context.Context) error {
			parent := "mcol"
			_, err := store.NextPosition(ctx, db, "mine", &parent)
			return err
		}},
		{"pages of a revision", false, func(ctx context.Context) error {
			_, err := store.RevisionsPages(ctx, db, "mine", []string{"mr1"})
			return err
		}},
	}
}

// The triggers that keep search's shown flags (migration 0039) reach the
// rows of what a space stops and starts showing by their keys: changing a
// space of the filled database (a merge: a new revision with a tenth of its
// pages changed, then the space naming it; deleting it; restoring it) scans
// no tenant table whole, however many other pages, bodies and sections the
// instance holds. The statements run in a transaction, whose own table
// statistics (pg_stat_xact_user_tables) count the triggers' scans too, and
// which is rolled back.
func checkShownBodiesWritesByKey(t *testing.T, conn *pgx.Conn) {
	ctx := context.Background()
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck // the rows are the test's alone
	for _, s := range []string{
		`INSERT INTO page_bodies (organization_id, sha256, markdown) SELECT 'mine', 'mb-new' || i, 'y' FROM generate_series(1, 10) i`,
		`INSERT INTO body_sections (organization_id, body_sha256, position, anchor, heading, body)
			SELECT 'mine', 'mb-new' || i, 0, '', 'Tea', 'A new kettle' FROM generate_series(1, 10) i`,
		`INSERT INTO revisions (id, organization_id, space_id, type, created_at) VALUES ('mr1-merge', 'mine', 'ms1', 'merge', now())`,
		`INSERT INTO revision_pages (organization_id, revision_id, page_id, position, type, title, slug, body_sha256, created_at, updated_at)
			SELECT 'mine', 'mr1-merge', page_id, position, type, title, slug,
				CASE WHEN position <= 10 THEN 'mb-new' || position ELSE body_sha256 END, now(), now()
			FROM revision_pages WHERE revision_id = 'mr1'`,
		`UPDATE spaces SET revision_id = 'mr1-merge' WHERE id = 'ms1'`,
		`UPDATE spaces SET deleted_at = now() WHERE id = 'ms1'`,
		`UPDATE spaces SET deleted_at = NULL WHERE id = 'ms1'`,
	} {
		if _, err := tx.Exec(ctx, s); err != nil {
			t.Fatalf("%v\n%s", err, s)
		}
	}
	var scanned []string
	err = tx.QueryRow(ctx, `SELECT coalesce(array_agg(relname::text), '{}') FROM pg_stat_xact_user_tables WHERE seq_scan > 0 AND relname = ANY($1)`,
		append(bigTables, "page_bodies")).Scan(&scanned)
	if err != nil {
		t.Fatal(err)
	}
	if len(scanned) > 0 {
		t.Errorf("changing what a space shows scans %v whole", scanned)
	}
	// The fill (written by SQL: spaces, then their revisions' pages) shows
	// every body it wrote, and the triggers flagged them all, but for the
	// ten the merge replaced.
	var hidden int
	if err := tx.QueryRow(ctx, `SELECT count(*) FROM body_sections WHERE NOT shown`).Scan(&hidden); err != nil {
		t.Fatal(err)
	}
	if hidden != 10 {
		t.Errorf("%d sections are not flagged shown, want the 10 the merge replaced", hidden)
	}
	var shown int
	if err := tx.QueryRow(ctx, `SELECT count(*) FROM body_sections WHERE organization_id = 'mine' AND shown`).Scan(&shown); err != nil {
		t.Fatal(err)
	}
	if shown != 100 {
		t.Errorf("%d of mine's sections are shown, want the 100 of its space's pages", shown)
	}
}

// explain returns the JSON plan of s under plan_cache_mode mode.
func explain(t *testing.T, conn *pgx.Conn, mode string, s store.Statement) string {
	t.Helper()
	ctx := context.Background()
	if _, err := conn.Exec(ctx, "SET plan_cache_mode = "+mode); err != nil {
		t.Fatal(err)
	}
	var plan string
	// Prepared (not the simple protocol): the arguments are parameters, as
	// when the read runs.
	args := append([]any{pgx.QueryExecModeDescribeExec}, s.Args...)
	if err := conn.QueryRow(ctx, "EXPLAIN (FORMAT JSON) "+s.SQL, args...).Scan(&plan); err != nil {
		t.Fatalf("explain: %v\n%s", err, s.SQL)
	}
	return plan
}

// explainEach runs read, then explains each statement it sent, planned for
// its arguments (a custom plan) and for any (the generic plan a prepared
// statement switches to), and passes each plan to check.
func explainEach(t *testing.T, conn *pgx.Conn, read func(context.Context) error, check func(mode string, s store.Statement, plan string)) {
	t.Helper()
	ctx, statements := store.RecordStatements(context.Background())
	if err := read(ctx); err != nil {
		t.Fatal(err)
	}
	if len(*statements) == 0 {
		t.Fatal("no statement recorded")
	}
	for _, s := range *statements {
		for _, mode := range []string{"force_custom_plan", "force_generic_plan"} {
			if mode == "force_generic_plan" && len(s.Args) == 0 {
				continue // arguments inline: always planned for them
			}
			check(mode, s, explain(t, conn, mode, s))
		}
	}
}

// walkPlan calls visit on every node of a JSON plan; false when the plan
// cannot be read.
func walkPlan(plan string, visit func(planNode)) bool {
	var root []struct{ Plan planNode }
	if err := json.Unmarshal([]byte(plan), &root); err != nil {
		return false
	}
	var walk func(n planNode)
	walk = func(n planNode) {
		visit(n)
		for _, c := range n.Plans {
			walk(c)
		}
	}
	for _, r := range root {
		walk(r.Plan)
	}
	return true
}

// planProblems names the big tables a JSON plan reads with a sequential
// scan, and counts its Sort nodes.
func planProblems(plan string) (scans []string, sorts int) {
	ok := walkPlan(plan, func(n planNode) {
		if n.NodeType == "Seq Scan" && slices.Contains(bigTables, n.Relation) {
			scans = append(scans, n.Relation)
		}
		if n.NodeType == "Sort" || n.NodeType == "Incremental Sort" {
			sorts++
		}
	})
	if !ok {
		return []string{"(unreadable plan)"}, 0
	}
	return scans, sorts
}

type planNode struct {
	NodeType string     `json:"Node Type"`
	Relation string     `json:"Relation Name"`
	Filter   string     `json:"Filter"`
	Plans    []planNode `json:"Plans"`
}

// mySpaceIDs are the ids of the first n spaces of siteOfAThousandSpaces.
func mySpaceIDs(n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("ms%d", i+1)
	}
	return ids
}

// siteOfAThousandSpaces fills organization "mine" (inserted before) with
// a site, "msite", publishing 1,000 spaces, "ms1" to "ms1000".
var siteOfAThousandSpaces = []string{
	`INSERT INTO spaces (id, organization_id, title, revision_id, created_at, updated_at)
		SELECT 'ms' || i, 'mine', 'Space ' || i, 'mr' || i, now(), now() FROM generate_series(1, 1000) i`,
	`INSERT INTO revisions (id, organization_id, space_id, type, created_at)
		SELECT 'mr' || i, 'mine', 'ms' || i, 'edits', now() FROM generate_series(1, 1000) i`,
	`INSERT INTO sites (id, organization_id, title, share_key, created_at, updated_at)
		VALUES ('msite', 'mine', 'Site', 'mk', now(), now())`,
	`INSERT INTO site_spaces (id, organization_id, site_id, space_id, path, position, created_at)
		SELECT 'mss' || i, 'mine', 'msite', 'ms' || i, 'p' || i, i, now() FROM generate_series(1, 1000) i`,
}

// Reads by a list of ids stay linear on a small database too. There a
// sequential scan is the right plan, but a filter id = ANY($n) over an
// array PostgreSQL only has at run time (a parameter, an InitPlan's result)
// compares every row with every element, one after the other: a site's
// thousand spaces against a thousand ids took 5.7 ms, where hashing the ids
// took 0.5 ms. The database holds the one organization whose site publishes
// a thousand spaces, and nothing else.
func TestIDListReadsDoNotCompareEveryRowWithEveryID(t *testing.T) {
	db := pgtest.NewDB(t)
	ctx := context.Background()
	for _, s := range append([]string{
		`INSERT INTO organizations (id, title, created_at, updated_at) VALUES ('mine', 'Mine', now(), now())`,
	}, append(siteOfAThousandSpaces, `ANALYZE`)...) {
		if _, err := db.Pool.Exec(ctx, s); err != nil {
			t.Fatalf("%v\n%s", err, s)
		}
	}
	ids := mySpaceIDs(1000)
	conn, err := db.Pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	for _, r := range []struct {
		name string
		read func(context.Context) error
	}{
		{"spaces of sites", func(ctx context.Context) error {
			_, err := store.SpacesOfSites(ctx, db, "mine", []string{"msite"})
			return err
		}},
		{"space summaries of sites", func(ctx context.Context) error {
			_, err := store.SpaceSummariesOfSites(ctx, db, "mine", []string{"msite"})
			return err
		}},
		{"spaces by ids", func(ctx context.Context) error { _, err := store.SpacesByIDs(ctx, db, ids); return err }},
		{"nodes by ids", func(ctx context.Context) error { _, err := store.NodesByIDs[store.Space](ctx, db, ids); return err }},
		{"site spaces of sites", func(ctx context.Context) error {
			_, err := store.SiteSpacesOfSites(ctx, db, "mine", []string{"msite"}, true)
			return err
		}},
	} {
		t.Run(r.name, func(t *testing.T) {
			explainEach(t, conn.Conn(), r.read, func(mode string, s store.Statement, plan string) {
				if filters := runTimeArrayFilters(plan); len(filters) > 0 {
					t.Errorf("%s plan compares rows with every element of %s:\n%s\n%s", mode, strings.Join(filters, ", "), s.SQL, plan)
				}
			})
		})
	}
}

// runTimeArrayFilters are the filters of plan's nodes that compare a row
// with an array known only at run time, element by element.
func runTimeArrayFilters(plan string) []string {
	var out []string
	if !walkPlan(plan, func(n planNode) {
		if strings.Contains(n.Filter, "= ANY ($") {
			out = append(out, n.Filter)
		}
	}) {
		return []string{"(unreadable plan)"}
	}
	return out
}
