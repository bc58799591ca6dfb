package atsize_test

import (
	"context"
	"slices"
	"testing"

	"github.com/docsapi/docsapi/store"
	"github.com/docsapi/docsapi/store/atsize"
	"github.com/docsapi/docsapi/store/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// A fill is what the application would have written: every row where its
// plan says, the counters on spaces those of the rows, the pages' search
// sections those store.SaveBody gives their bodies, and the pages found by
// store.Search.
func TestFillIsConsistent(t *testing.T) {
	ctx := context.Background()
	db := pgtest.NewDB(t)
	p := atsize.Plan{Prefix: "x-", Organizations: 3, Spaces: 60, SiteSpaces: 30,
		ChangeRequests: 40, Comments: 50, Replies: 20, Pages: 30, Words: []string{"alpha", "beta", "gamma", "delta"}, Members: 200}
	if err := atsize.Fill(ctx, db.Pool, p); err != nil {
		t.Fatal(err)
	}
	counts := []struct {
		table string
		want  int
	}{
		{"organizations", 3}, {"spaces", 60}, {"revisions", 60}, {"sites", 3}, {"site_publishing_auths", 3}, {"site_spaces", 30},
		{"change_requests", 40}, {"comments", 50}, {"comment_replies", 20},
		{"revision_pages", 30}, {"page_bodies", 30}, {"body_sections", 60},
		{"organization_members", 200}, {"organization_members WHERE role = 'admin'", 2}, {"organization_members WHERE role IS NULL", 8},
	}
	for _, c := range counts {
		var n int
		if err := db.Pool.QueryRow(ctx, "SELECT count(*) FROM "+c.table).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != c.want {
			t.Errorf("%s: %d rows, want %d", c.table, n, c.want)
		}
	}

	// Every child row is in its parent's organization: its parent is found
	// there (the joins name the organization, as a Citus cluster needs).
	var mismatched int
	err := db.Pool.QueryRow(ctx, `SELECT
		(SELECT count(*) FROM revisions r WHERE NOT EXISTS
			(SELECT 1 FROM spaces s WHERE s.organization_id = r.organization_id AND s.id = r.space_id)) +
		(SELECT count(*) FROM site_spaces ss WHERE NOT EXISTS
			(SELECT 1 FROM spaces s WHERE s.organization_id = ss.organization_id AND s.id = ss.space_id)
			OR NOT EXISTS (SELECT 1 FROM sites si WHERE si.organization_id = ss.organization_id AND si.id = ss.site_id)) +
		(SELECT count(*) FROM change_requests c WHERE NOT EXISTS
			(SELECT 1 FROM revisions r WHERE r.organization_id = c.organization_id AND r.id = c.revision AND r.space_id = c.space_id)) +
		(SELECT count(*) FROM comments c WHERE NOT EXISTS
			(SELECT 1 FROM spaces s WHERE s.organization_id = c.organization_id AND s.id = c.space_id)) +
		(SELECT count(*) FROM comments c WHERE c.change_request_id IS NOT NULL AND NOT EXISTS
			(SELECT 1 FROM change_requests cr WHERE cr.organization_id = c.organization_id AND cr.id = c.change_request_id
				AND cr.space_id = c.space_id AND cr.revision = c.revision_id)) +
		(SELECT count(*) FROM comment_replies r WHERE NOT EXISTS
			(SELECT 1 FROM comments c WHERE c.organization_id = r.organization_id AND c.id = r.comment_id)) +
		(SELECT count(*) FROM revision_pages p WHERE NOT EXISTS
			(SELECT 1 FROM revisions r WHERE r.organization_id = p.organization_id AND r.id = p.revision_id))`).Scan(&mismatched)
	if err != nil {
		t.Fatal(err)
	}
	if mismatched != 0 {
		t.Errorf("%d rows in another organization than their parent's", mismatched)
	}

	// The counters the triggers keep are the rows'.
	var wrong int
	err = db.Pool.QueryRow(ctx, `SELECT count(*) FROM spaces s WHERE
		open_comments <> (SELECT count(*) FROM comments c WHERE c.organization_id = s.organization_id AND c.space_id = s.id AND c.change_request_id IS NULL AND c.status = 'open')
		OR change_requests_open <> (SELECT count(*) FROM change_requests c WHERE c.organization_id = s.organization_id AND c.space_id = s.id AND c.status = 'open')
		OR change_requests_draft <> (SELECT count(*) FROM change_requests c WHERE c.organization_id = s.organization_id AND c.space_id = s.id AND c.status = 'draft')`).Scan(&wrong)
	if err != nil {
		t.Fatal(err)
	}
	if wrong != 0 {
		t.Errorf("%d spaces' counters differ from their rows", wrong)
	}
	if drift, err := store.ContentCountsDrift(ctx, db); err != nil || len(drift) > 0 {
		t.Errorf("the counts of spaces differ from their rows: %v %v", drift, err)
	}
	space, err := store.GetSpace(ctx, db, p.SpaceID(p.ChangeRequestSpace(1)))
	if err != nil || space.ChangeRequestsOpen == 0 {
		t.Errorf("the space of the first change request: %+v, %v", space, err)
	}

	// A body's sections are those the application stores for it.
	rows, err := db.Pool.Query(ctx, `SELECT b.markdown, array_agg(s.heading || '|' || s.anchor || '|' || s.body ORDER BY s.position)
		FROM page_bodies b JOIN body_sections s ON s.body_sha256 = b.sha256 AND s.organization_id = b.organization_id
		WHERE b.sha256 = encode(sha256(convert_to(b.markdown, 'UTF8')), 'hex')
		GROUP BY b.markdown`)
	if err != nil {
		t.Fatal(err)
	}
	bodies := 0
	for rows.Next() {
		var markdown string
		var got []string
		if err := rows.Scan(&markdown, &got); err != nil {
			t.Fatal(err)
		}
		var want []string
		for _, s := range store.SplitSections(markdown) {
			want = append(want, s.Heading+"|"+s.Anchor+"|"+s.Body)
		}
		if !slices.Equal(got, want) {
			t.Errorf("sections of\n%s\n got %q\nwant %q", markdown, got, want)
		}
		bodies++
	}
	if rows.Err() != nil || bodies != 30 {
		t.Errorf("%d bodies whose digest is their markdown's (%v), want 30", bodies, rows.Err())
	}

	// Search finds the pages of a space by their words.
	hits, err := store.Search(ctx, db, p.OrganizationID(p.PageSpace(1)), []string{p.SpaceID(p.PageSpace(1))}, "alpha")
	if err != nil || len(hits) == 0 {
		t.Errorf("search: %d hits, %v", len(hits), err)
	}
}

// A fill into an existing organization puts every row there.
func TestFillIntoAnOrganization(t *testing.T) {
	ctx := context.Background()
	db := pgtest.NewDB(t)
	if _, err := db.Pool.Exec(ctx, `INSERT INTO organizations (id, title, created_at, updated_at) VALUES ('mine', 'Mine', now(), now())`); err != nil {
		t.Fatal(err)
	}
	p := atsize.Plan{Prefix: "m-", Organization: "mine", Spaces: 20, ChangeRequests: 8, Comments: 10, Replies: 4, Pages: 10}
	if err := atsize.Fill(ctx, db.Pool, p); err != nil {
		t.Fatal(err)
	}
	var orgs []string
	err := db.Pool.QueryRow(ctx, `SELECT array_agg(DISTINCT organization_id) FROM (
		SELECT organization_id FROM spaces UNION ALL SELECT organization_id FROM change_requests
		UNION ALL SELECT organization_id FROM comments UNION ALL SELECT organization_id FROM revision_pages) t`).Scan(&orgs)
	if err != nil || !slices.Equal(orgs, []string{"mine"}) {
		t.Errorf("organizations of the rows: %v, %v", orgs, err)
	}
}
