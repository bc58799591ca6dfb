package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/docsapi/docsapi/store"
	"github.com/docsapi/docsapi/store/atsize"
	"github.com/docsapi/docsapi/store/pgtest"
)

// bigTables are the tenant tables that grow with every organization's data:
// a hot read that scans one of them whole costs every request more as the
// instance grows.
var bigTables = []string{"spaces", "site_spaces", "comments", "change_requests", "revisions", "revision_pages", "body_sections", "current_pages", "shown_bodies",
	"organization_members", "collections", "content_grants", "content_counts"}

// fillOtherOrganization gives the database what a busy instance holds: the
// organization under test ("mine") at 100,000 spaces (mySpaces), and, besides
// it, tens of thousands of another organization's spaces. Both hold what
// busy tenants do (store/atsize, the fill docsbench measures at): spaces
// with their revisions, change requests, comments with replies, searchable
// pages (10,000 of the other's sections have the word searched), members;
// mine also a site publishing a thousand of its spaces, a space with 500
// change requests and 2,000 comments on its content and on one of its
// change requests (lists longer than a page), collections holding spaces
// of every level and visibility, and grants to a member and to a team. All
// analyzed, as autovacuum does within a minute. A plan that reads every row
// of the organization its request is for, or of every organization, only
// shows at that size. (Filled once per test, ~1 minute on 2 CPUs: the
// subtests share it.)
func fillOtherOrganization(t *testing.T, db *store.DB) {
	t.Helper()
	others := 40_000
	if os.Getenv("DOCSAPI_PLAN_TIMINGS") != "" {
		others = 100_000
	}
	fillOrganizations(t, db, others, mySpaces)
}

// mySpaces is the size the plan test fills the organization under test to.
const mySpaces = 100_000

// myCollectionSpaces are the spaces of mine in its collections.
const myCollectionSpaces = 5_000

// fillOrganizations is fillOtherOrganization with organizations of other
// sizes: the other organization's others spaces, and its other rows in
// proportion (40,000 spaces: the sizes above); mine at mine spaces (at
// least 1,000 + myCollectionSpaces: the site's and the collections'; the
// rest, and their rows, by atsize in proportion).
func fillOrganizations(t *testing.T, db *store.DB, others, mine int) {
	t.Helper()
	scaled := func(n int) int { return max(1, n*others/40_000) }
	ctx := context.Background()
	if _, err := db.Pool.Exec(ctx, `INSERT INTO organizations (id, title, created_at, updated_at) VALUES ('other', 'Other', now(), now())`); err != nil {
		t.Fatal(err)
	}
	err := atsize.Fill(ctx, db.Pool, atsize.Plan{Prefix: "o", Organization: "other", Spaces: others, Busy: scaled(10_000),
		SiteSpaces: scaled(20_000), ChangeRequests: scaled(20_000), Comments: scaled(40_000), Replies: scaled(10_000), Pages: scaled(20_000),
		Members: scaled(2_000)})
	if err != nil {
		t.Fatal(err)
	}
	// The other's collections, each with a space of its own (groups of
	// the counts), and grants to its members on its spaces: tables that
	// grow with every tenant too.
	for _, s := range []string{
		fmt.Sprintf(`INSERT INTO collections (id, organization_id, title, default_level, created_at, updated_at)
			SELECT 'oc' || i, 'other', 'Collection ' || i, (ARRAY['inherit', NULL, 'read'])[1 + i %% 3], now(), now() FROM generate_series(1, %d) i`, scaled(10_000)),
		fmt.Sprintf(`INSERT INTO spaces (id, organization_id, title, revision_id, parent_id, default_level, created_at, updated_at)
			SELECT 'ocs' || i, 'other', 'Space ' || i, 'ocr' || i, 'oc' || i, 'inherit', now(), now() FROM generate_series(1, %d) i`, scaled(10_000)),
		fmt.Sprintf(`INSERT INTO content_grants (organization_id, space_id, user_id, role, created_at)
			SELECT 'other', 'ospace-' || i, 'omember-' || (1 + i %% %d), 'edit', now() FROM generate_series(1, %d) i`, scaled(2_000), scaled(10_000)),
	} {
		execUnhurried(t, db, s)
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
	}...)
	execUnhurried(t, db, append(statements, myCollections...)...)
	// The rest of mine, with its rows in proportion: a hundredth of its
	// spaces busy (20 change requests, 40 comments, 20 pages each), a
	// member for every 20 spaces. Fill analyzes the database.
	err = atsize.Fill(ctx, db.Pool, atsize.Plan{Prefix: "m", Organization: "mine", Author: "u", Spaces: max(1, mine-1_000-myCollectionSpaces),
		Busy: max(1, mine/100), ChangeRequests: mine / 5, Comments: 2 * mine / 5, Replies: mine / 10, Pages: mine / 5, Members: mine / 20})
	if err != nil {
		t.Fatal(err)
	}
}

// execUnhurried runs the statements of a fill in one transaction without
// the pool's statement timeout: on a busy machine (2 CPUs shared) a
// statement inserting thousands of rows through their triggers may take
// longer than a request should.
func execUnhurried(t *testing.T, db *store.DB, statements ...string) {
	t.Helper()
	ctx := context.Background()
	tx, err := db.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck // after Commit, a no-op
	for _, s := range append([]string{"SET LOCAL statement_timeout = 0"}, statements...) {
		if _, err := tx.Exec(ctx, s); err != nil {
			t.Fatalf("%v\n%s", err, s)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
}

// myCollections fill mine (with its user "u") with 50 collections, "mcol"
// and "mcol1" to "mcol49" (some nested, some with a level of their own),
// holding myCollectionSpaces spaces ("mcs1"...) of every default level and
// visibility; and with grants to a member, "mgrantee", on 20 of the
// spaces at the root and 5 collections, and to a team of 100 members on 5
// other collections and 20 spaces.
var myCollections = []string{
	`INSERT INTO collections (id, organization_id, title, default_level, created_at, updated_at)
		SELECT CASE WHEN i = 0 THEN 'mcol' ELSE 'mcol' || i END, 'mine', 'Collection ' || i,
			(ARRAY['inherit', NULL, 'read', 'inherit'])[1 + i % 4], now(), now() FROM generate_series(0, 49) i`,
	`UPDATE collections SET parent_id = 'mcol' || (id_n - 10) FROM (SELECT generate_series(20, 29) AS id_n) x
		WHERE organization_id = 'mine' AND id = 'mcol' || id_n`,
	`INSERT INTO spaces (id, organization_id, title, revision_id, parent_id, default_level, visibility, created_at, updated_at)
		SELECT 'mcs' || i, 'mine', 'Space ' || i, 'mcr-' || i, CASE WHEN i % 50 = 0 THEN 'mcol' ELSE 'mcol' || (i % 50) END,
			(ARRAY['inherit', NULL, 'read', 'edit', 'inherit'])[1 + i % 5], (ARRAY['private', 'in-collection', 'public'])[1 + i % 3],
			now() - i * interval '1 second', now()
		FROM generate_series(1, ` + fmt.Sprint(myCollectionSpaces) + `) i`,
	`INSERT INTO users (id, email, display_name, created_at, updated_at)
		SELECT 'mgrantee' || i, 'mgrantee' || i || '@example.com', 'Grantee', now(), now() FROM generate_series(0, 100) i`,
	`INSERT INTO organization_members (organization_id, user_id, role, joined_at)
		SELECT 'mine', 'mgrantee' || i, NULL, now() FROM generate_series(0, 100) i`,
	`INSERT INTO teams (id, organization_id, title, created_at) VALUES ('mteam', 'mine', 'Team', now())`,
	`INSERT INTO team_members (team_id, organization_id, user_id, role)
		SELECT 'mteam', 'mine', 'mgrantee' || i, 'member' FROM generate_series(1, 100) i`,
	`INSERT INTO content_grants (organization_id, space_id, user_id, role, created_at)
		SELECT 'mine', 'ms' || i, 'mgrantee0', 'read', now() FROM generate_series(1, 20) i`,
	`INSERT INTO content_grants (organization_id, collection_id, user_id, role, created_at)
		SELECT 'mine', 'mcol' || i, 'mgrantee0', 'read', now() FROM generate_series(1, 5) i`,
	`INSERT INTO content_grants (organization_id, space_id, team_id, role, created_at)
		SELECT 'mine', 'ms' || i, 'mteam', 'edit', now() FROM generate_series(21, 40) i`,
	`INSERT INTO content_grants (organization_id, collection_id, team_id, role, created_at)
		SELECT 'mine', 'mcol' || i, 'mteam', 'edit', now() FROM generate_series(6, 10) i`,
}

// The hot reads (the site tree, a space, comment lists, the open comment
// counts of change requests, change request lists, member lists, a
// revision's pages, search, the totals of lists) reach their rows through
// indexes driven by the keys they are given: at size, no plan of theirs
// scans a whole tenant table, nor reads more than maxRowsRead rows of one
// (a count, or a walk over the index of the organization's rows, that
// would be the organization under test's 100,000), whether PostgreSQL
// plans the statement for its arguments (custom plans: the first
// executions of a prepared statement, and bun's statements with inline
// arguments) or once for any (the generic plan a prepared statement
// switches to). The statements are the ones the store functions send, run
// by EXPLAIN ANALYZE: the rows are those the plan read.
func TestHotReadPlansDoNotScanTenantTables(t *testing.T) {
	if testing.Short() {
		t.Skip("fills a database")
	}
	if pgtest.Citus() {
		// A distributed statement's EXPLAIN is Citus's custom scan, whose
		// rows are not the shard's: TestHotReadsAreSingleShardOnCitus checks
		// the cluster's plans (one task each), this test one PostgreSQL's.
		t.Skip("the plans of one PostgreSQL; on Citus, TestHotReadsAreSingleShardOnCitus")
	}
	db := pgtest.NewDB(t)
	start := time.Now()
	fillOtherOrganization(t, db)
	t.Logf("filled in %s", time.Since(start).Round(time.Second))
	reads := hotReads(db, mySpaces)
	conn, err := db.Pool.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	for _, r := range reads {
		t.Run(r.name, func(t *testing.T) {
			explainEach(t, conn.Conn(), true, r.read, func(mode string, s store.Statement, plan string) {
				scans, sorts := planProblems(plan)
				if len(scans) > 0 {
					t.Errorf("%s plan scans %s whole:\n%s\n%s", mode, strings.Join(scans, ", "), s.SQL, plan)
				}
				if r.ordered && sorts > 0 {
					t.Errorf("%s plan sorts the list rather than reading it in order:\n%s\n%s", mode, s.SQL, plan)
				}
				if n, table := rowsRead(plan); n > maxRowsRead {
					t.Errorf("%s plan reads %d rows of %s (at most %d: the organization has %d spaces):\n%s\n%s", mode, n, table, maxRowsRead, mySpaces, s.SQL, plan)
				}
			})
		})
	}
	t.Run("writes changing what a space shows", func(t *testing.T) { checkShownBodiesWritesByKey(t, conn.Conn()) })
	// The checks see what they are for: the count of the organization's
	// spaces that every list page ran while `count` was the total (issue
	// 29), and the access rows a member's counts read then.
	t.Run("a count of the organization's rows is caught", func(t *testing.T) {
		for _, sql := range []string{
			`SELECT count(*) FROM spaces WHERE organization_id = $1 AND deleted_at IS NULL`,
			`SELECT id, parent_id, default_level, visibility FROM spaces WHERE organization_id = $1 AND deleted_at IS NULL`,
		} {
			for _, mode := range []string{"force_custom_plan", "force_generic_plan"} {
				plan := explainWith(t, conn.Conn(), mode, "ANALYZE, FORMAT JSON", store.Statement{SQL: sql, Args: []any{"mine"}})
				if n, _ := rowsRead(plan); n <= maxRowsRead {
					t.Errorf("%s: %s reads %d rows, which the check lets through", mode, sql, n)
				}
			}
		}
	})
}

// maxRowsRead bounds the rows a hot read's statement reads of one tenant
// table: the thousand spaces of a site's tree and the site spaces that
// publish them, twice over; a twentieth of the organization's spaces.
const maxRowsRead = 5_000

// hotRead is a read of the filled database (fillOrganizations) as a
// request makes it. ordered reads page through a list: an index gives the
// rows in the page's order, so the plan has no Sort (which would read
// every row of the list to return twenty).
type hotRead struct {
	name    string
	ordered bool
	read    func(context.Context) error
}

// hotReads are the hot reads of the organization "mine", of mine spaces,
// and a write's read in "other", of a database fillOrganizations filled.
func hotReads(db *store.DB, mine int) []hotRead {
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
		{"members of an organization, a page", true, func(ctx context.Context) error {
			_, err := store.ListMembers(ctx, db, "mine", store.MemberFilter{Desc: true}, store.Page{Limit: 20})
			return err
		}},
		{"a member", false, func(ctx context.Context) error { _, err := store.GetMember(ctx, db, "mine", "mgrantee0"); return err }},
		{"access of an organization (a member's roles: collections, grants, teams)", false, func(ctx context.Context) error {
			_, err := store.LoadOrgAccess(ctx, db, "mine")
			return err
		}},
		{"spaces of a collection, a page", true, func(ctx context.Context) error {
			_, err := store.ListSpacesInCollection(ctx, db, "mine", "mcol7", store.Page{Limit: 20})
			return err
		}},
		{"collections of an organization, a page", true, func(ctx context.Context) error {
			_, err := store.ListCollections(ctx, db, "mine", false, store.Page{Limit: 20})
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
		{"site spaces of a site with their spaces (a site tree)", false, func(ctx context.Context) error {
			_, _, err := store.SiteSpacesWithSpaces(ctx, db, "mine", []string{"msite"}, false)
			return err
		}},
		{"site spaces of a site with their space summaries", false, func(ctx context.Context) error {
			_, _, err := store.SiteSpacesWithSpaces(ctx, db, "mine", []string{"msite"}, true)
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
		// The totals of the lists of spaces and collections (totalCount):
		// the counts the database keeps, and the spaces granted on
		// themselves (a member's total).
		{"totals of an organization", false, func(ctx context.Context) error {
			t, err := store.LoadContentTotals(ctx, db, "mine")
			if err == nil && (t.Spaces != mine || t.Collections != 50) {
				err = fmt.Errorf("%d spaces and %d collections, want %d and 50", t.Spaces, t.Collections, mine)
			}
			return err
		}},
		{"groups of an organization's spaces and collections", false, func(ctx context.Context) error {
			_, err := store.ContentGroups(ctx, db, "mine")
			return err
		}},
		{"groups of a collection's spaces", false, func(ctx context.Context) error {
			_, err := store.ContentGroupsIn(ctx, db, "mine", store.CountedSpaces, "mcol")
			return err
		}},
		{"spaces granted on themselves", false, func(ctx context.Context) error {
			_, err := store.GrantedSpaceNodes(ctx, db, "mine")
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
	// mine's: those of ms1's 100 pages, and the two of each of the pages
	// atsize gave it.
	if want := 100 + 2*(mySpaces/5); shown != want {
		t.Errorf("%d of mine's sections are shown, want the %d of its spaces' pages", shown, want)
	}
}

// explain returns the JSON plan of s under plan_cache_mode mode.
func explain(t *testing.T, conn *pgx.Conn, mode string, s store.Statement) string {
	return explainWith(t, conn, mode, "FORMAT JSON", s)
}

// explainWith returns the plan of s under plan_cache_mode mode, explained
// with options (EXPLAIN's: "ANALYZE, FORMAT JSON" runs it).
func explainWith(t *testing.T, conn *pgx.Conn, mode, options string, s store.Statement) string {
	t.Helper()
	ctx := context.Background()
	if _, err := conn.Exec(ctx, "SET plan_cache_mode = "+mode); err != nil {
		t.Fatal(err)
	}
	var plan string
	// Prepared (not the simple protocol): the arguments are parameters, as
	// when the read runs.
	args := append([]any{pgx.QueryExecModeDescribeExec}, s.Args...)
	if err := conn.QueryRow(ctx, "EXPLAIN ("+options+") "+s.SQL, args...).Scan(&plan); err != nil {
		t.Fatalf("explain: %v\n%s", err, s.SQL)
	}
	return plan
}

// explainEach runs read, then explains each statement it sent, planned for
// its arguments (a custom plan) and for any (the generic plan a prepared
// statement switches to), and passes each plan to check; with analyze,
// each plan is run (EXPLAIN ANALYZE).
func explainEach(t *testing.T, conn *pgx.Conn, analyze bool, read func(context.Context) error, check func(mode string, s store.Statement, plan string)) {
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
			options := "FORMAT JSON"
			if analyze {
				options = "ANALYZE, FORMAT JSON"
			}
			check(mode, s, explainWith(t, conn, mode, options, s))
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
	// Of an analyzed plan.
	ActualRows       float64 `json:"Actual Rows"`
	ActualLoops      float64 `json:"Actual Loops"`
	RemovedByFilter  float64 `json:"Rows Removed by Filter"`
	RemovedByRecheck float64 `json:"Rows Removed by Index Recheck"`
}

// rowsRead is the most rows an analyzed JSON plan read of one big table
// (those its nodes returned and those their filters removed, in every
// loop), and which table.
func rowsRead(plan string) (int, string) {
	read := map[string]float64{}
	if !walkPlan(plan, func(n planNode) {
		if slices.Contains(bigTables, n.Relation) {
			read[n.Relation] += (n.ActualRows + n.RemovedByFilter + n.RemovedByRecheck) * max(1, n.ActualLoops)
		}
	}) {
		return -1, "(unreadable plan)"
	}
	most, table := 0.0, ""
	for r, n := range read {
		if n > most {
			most, table = n, r
		}
	}
	return int(most), table
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
		{"site spaces of sites with their spaces", func(ctx context.Context) error {
			_, _, err := store.SiteSpacesWithSpaces(ctx, db, "mine", []string{"msite"}, false)
			return err
		}},
	} {
		t.Run(r.name, func(t *testing.T) {
			explainEach(t, conn.Conn(), false, r.read, func(mode string, s store.Statement, plan string) {
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
