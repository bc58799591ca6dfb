package store_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/uptrace/bun"

	"github.com/docsapi/docsapi/store"
	"github.com/docsapi/docsapi/store/pgtest"
)

// rowsBefore0035 is a little of every kind of row the migration fills,
// written as the schema before it had them: two organizations, one body
// shown by pages of both (and one by A's only, and one by nobody), a
// reaction to a comment, to a reply, and to something deleted since.
var rowsBefore0035 = []string{
	`INSERT INTO users (id, email, display_name, created_at, updated_at) VALUES ('u', 'u@example.com', 'U', now(), now())`,
	`INSERT INTO organizations (id, title, created_at, updated_at) VALUES ('oa', 'A', now(), now()), ('ob', 'B', now(), now())`,
	`INSERT INTO spaces (id, organization_id, revision_id, created_at, updated_at)
		VALUES ('sa', 'oa', 'ra', now(), now()), ('sb', 'ob', 'rb', now(), now())`,
	`INSERT INTO revisions (id, space_id, type, created_at)
		VALUES ('ra', 'sa', 'edits', now()), ('ra2', 'sa', 'edits', now()), ('rb', 'sb', 'edits', now())`,
	`INSERT INTO page_bodies (sha256, markdown) VALUES ('shared', '# Shared words'), ('onlya', 'A only'), ('orphan', 'nobody')`,
	`INSERT INTO body_sections (body_sha256, position, anchor, heading, body)
		VALUES ('shared', 0, 'shared-words', 'Shared words', ''), ('onlya', 0, '', '', 'A only'), ('orphan', 0, '', '', 'nobody')`,
	`INSERT INTO revision_pages (revision_id, page_id, position, type, title, slug, body_sha256, created_at, updated_at) VALUES
		('ra', 'p1', 0, 'document', 'P', 'p', 'shared', now(), now()),
		('ra2', 'p1', 0, 'document', 'P', 'p', 'onlya', now(), now()),
		('rb', 'p2', 0, 'document', 'Q', 'q', 'shared', now(), now())`,
	`INSERT INTO revision_files (revision_id, file_id, name, content_type, size, blob_sha256)
		VALUES ('rb', 'f', 'f.png', 'image/png', 1, 'blob')`,
	`INSERT INTO change_requests (id, space_id, number, status, created_at, updated_at, revision_initial, revision)
		VALUES ('cra', 'sa', 1, 'open', now(), now(), 'ra', 'ra2')`,
	`INSERT INTO change_request_contributors (change_request_id, user_id) VALUES ('cra', 'u')`,
	`INSERT INTO change_request_reviews (id, change_request_id, reviewer_id, status, revision_id, created_at, updated_at)
		VALUES ('rv', 'cra', 'u', 'approved', 'ra2', now(), now())`,
	`INSERT INTO change_request_requested_reviewers (change_request_id, user_id, revision_id, created_at)
		VALUES ('cra', 'u', 'ra2', now())`,
	`INSERT INTO comments (id, space_id, change_request_id, revision_id, body, posted_at, status)
		VALUES ('ca', 'sa', 'cra', 'ra2', 'hi', now(), 'open'), ('cb', 'sb', NULL, 'rb', 'yo', now(), 'open')`,
	`INSERT INTO comment_replies (id, comment_id, body, posted_at) VALUES ('rpb', 'cb', 'reply', now())`,
	`INSERT INTO comment_reactions (target_id, user_id, emoji, reacted_at)
		VALUES ('ca', 'u', '+1', now()), ('rpb', 'u', 'tada', now()), ('gone', 'u', 'eyes', now())`,
	`INSERT INTO openapi_specs (id, organization_id, slug, source_url, created_at, updated_at)
		VALUES ('spec', 'ob', 'api', 'https://example.com/a.yaml', now(), now())`,
	`INSERT INTO openapi_spec_versions (id, spec_id, digest, document, content_type, entry, files, created_at)
		VALUES ('v', 'spec', 'd', '\x00', 'application/yaml', 'a.yaml', '{}', now())`,
	`INSERT INTO sites (id, organization_id, title, share_key, created_at, updated_at) VALUES ('site', 'ob', 'S', 'k', now(), now())`,
	`INSERT INTO integrations (id, name, organization_id, version, runtime, title, description, summary, visibility, target,
		scopes, categories, blocks, content_sources, configurations, external_links, preview_images, script, created_at, updated_at)
		VALUES ('int', 'int', 'oa', 1, 'v1', 'I', '', '', 'public', 'all', '{}', '{}', '[]', '[]', '{}', '[]', '[]', '', now(), now())`,
	`INSERT INTO integration_installations (id, integration_id, organization_id, status, space_selection, site_selection,
		configuration, external_ids, created_at, updated_at)
		VALUES ('inst', 'int', 'ob', 'active', 'selected', 'selected', '{}', '{}', now(), now())`,
	`INSERT INTO integration_space_installations (installation_id, space_id, status, configuration, external_ids, created_at, updated_at)
		VALUES ('inst', 'sb', 'active', '{}', '{}', now(), now())`,
	`INSERT INTO integration_site_installations (installation_id, site_id, status, configuration, external_ids, created_at, updated_at)
		VALUES ('inst', 'site', 'active', '{}', '{}', now(), now())`,
	`INSERT INTO events (id, type, organization_id, payload, created_at) VALUES ('ev', 'space_content_updated', 'ob', '{}', now())`,
	`INSERT INTO integration_events (id, event_id, integration_id, installation_id, organization_id, status, created_at)
		VALUES ('ie', 'ev', 'int', 'inst', 'ob', 'pending', now())`,
	`INSERT INTO integration_event_logs (integration_event_id, level, message, logged_at) VALUES ('ie', 'info', 'queued', now())`,
	`INSERT INTO saml_providers (id, organization_id, label, created_at, updated_at) VALUES ('sp', 'oa', 'IdP', now(), now())`,
	`INSERT INTO saml_requests (id, provider_id, created_at) VALUES ('sr', 'sp', now())`,
}

// Migration 0035 meets a database that has data: every row gets its
// parent's organization, bodies are copied to each organization that shows
// them, and what no organization can reach any more goes.
func TestOrganizationIDMigrationFillsExistingRows(t *testing.T) {
	if pgtest.Citus() {
		// The schema before 0035 is not distributable (its keys lack the
		// organization); a cluster's install starts from a later one.
		t.Skip("the migrations before 0035 run on one PostgreSQL only")
	}
	ctx := context.Background()
	db := databaseBefore(t, "0035")
	for _, q := range rowsBefore0035 {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%v\n%s", err, q)
		}
	}
	if err := db.Migrate(ctx, nil); err != nil {
		t.Fatal(err)
	}

	for _, c := range []struct{ table, where, org string }{
		{"revisions", "id = 'ra'", "oa"},
		{"revisions", "id = 'rb'", "ob"},
		{"revision_pages", "revision_id = 'ra2'", "oa"},
		{"revision_pages", "revision_id = 'rb'", "ob"},
		{"revision_files", "revision_id = 'rb'", "ob"},
		{"change_requests", "id = 'cra'", "oa"},
		{"change_request_contributors", "change_request_id = 'cra'", "oa"},
		{"change_request_reviews", "id = 'rv'", "oa"},
		{"change_request_requested_reviewers", "change_request_id = 'cra'", "oa"},
		{"comments", "id = 'ca'", "oa"},
		{"comments", "id = 'cb'", "ob"},
		{"comment_replies", "id = 'rpb'", "ob"},
		{"comment_reactions", "target_id = 'ca'", "oa"},
		{"comment_reactions", "target_id = 'rpb'", "ob"},
		{"openapi_spec_versions", "id = 'v'", "ob"},
		{"integration_space_installations", "space_id = 'sb'", "ob"},
		{"integration_site_installations", "site_id = 'site'", "ob"},
		{"integration_event_logs", "integration_event_id = 'ie'", "ob"},
		{"saml_requests", "id = 'sr'", "oa"},
		{"page_bodies", "sha256 = 'onlya'", "oa"},
	} {
		var orgs []string
		if err := db.NewRaw(fmt.Sprintf("SELECT organization_id FROM %s WHERE %s", c.table, c.where)).Scan(ctx, &orgs); err != nil {
			t.Fatal(err)
		}
		if len(orgs) != 1 || orgs[0] != c.org {
			t.Errorf("%s where %s: organizations %v, want [%s]", c.table, c.where, orgs, c.org)
		}
	}

	// One copy of a body, and of its sections, per organization showing it;
	// none of the body nobody shows; none of a reaction to nothing.
	for _, c := range []struct {
		query string
		want  []string
	}{
		{"SELECT sha256 || '/' || organization_id FROM page_bodies ORDER BY 1", []string{"onlya/oa", "shared/oa", "shared/ob"}},
		{"SELECT body_sha256 || '/' || organization_id FROM body_sections ORDER BY 1", []string{"onlya/oa", "shared/oa", "shared/ob"}},
		{"SELECT markdown FROM page_bodies WHERE sha256 = 'shared' ORDER BY organization_id", []string{"# Shared words", "# Shared words"}},
		{"SELECT target_id FROM comment_reactions ORDER BY 1", []string{"ca", "rpb"}},
	} {
		var got []string
		if err := db.NewRaw(c.query).Scan(ctx, &got); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.query, got, c.want)
		}
	}

	// Search finds the shared text once per space that shows it, through
	// the space's organization's copy. A search is of one organization's
	// spaces, whose sections alone it reads.
	var found []string
	for org, space := range map[string]string{"oa": "sa", "ob": "sb"} {
		hits, err := store.Search(ctx, db, org, []string{space}, "shared")
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range hits {
			found = append(found, h.SpaceID+"/"+h.PageID+"/"+store.StringOf(h.Anchor))
		}
	}
	// sa's current revision (ra) shows the shared body on p1.
	if want := []string{"sa/p1/shared-words", "sb/p2/shared-words"}; !slices.Equal(sortedCopy(found), want) {
		t.Errorf("search hits %v, want %v", found, want)
	}
	// And the store writes the new columns: a new revision of sb, its page
	// and the page's body are B's.
	rev := &store.Revision{ID: "rb2", SpaceID: "sb", Parents: []string{"rb"}, Type: "edits"}
	digest, err := store.SaveSpaceBody(ctx, db, "sb", "# Shared words")
	if err != nil {
		t.Fatal(err)
	}
	page := &store.RevisionPage{ID: "p3", Type: store.PageDocument, Title: "R", Slug: "r", BodySHA256: digest}
	if err := store.CreateRevision(ctx, db, rev, store.Content{Pages: []*store.RevisionPage{page}}); err != nil {
		t.Fatal(err)
	}
	if rev.OrganizationID != "ob" {
		t.Errorf("the new revision's organization: %q", rev.OrganizationID)
	}
	var orgs []string
	if err := db.NewRaw(`SELECT rp.organization_id || '/' || b.organization_id FROM revision_pages rp
		JOIN page_bodies b ON b.sha256 = rp.body_sha256 WHERE rp.revision_id = 'rb2'`).Scan(ctx, &orgs); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(orgs, []string{"ob/ob"}) {
		t.Errorf("the new page and its body: %v", orgs)
	}
}

// databaseBefore is a new database as it was before migration name: the
// migrations before it applied, and nothing else. The test runs the rest
// (db.Migrate) once it has written its rows.
func databaseBefore(t *testing.T, name string) *store.DB {
	t.Helper()
	ctx := context.Background()
	db, err := store.OpenWith(ctx, pgtest.NewDatabase(t), store.Options{MaxConns: 4})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	if _, err := db.ExecContext(ctx, "DROP SCHEMA public CASCADE; CREATE SCHEMA public"); err != nil {
		t.Fatal(err)
	}
	if err := db.MigrateBefore(ctx, name); err != nil {
		t.Fatal(err)
	}
	return db
}

func sortedCopy(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

// A space given to another organization takes its whole content along:
// every row carries the new organization, the bodies its pages show are
// copied there, and it can be searched and edited there.
func TestMoveToOrganizationRetenantsTheContent(t *testing.T) {
	ctx := context.Background()
	db := pgtest.NewDB(t)
	for _, q := range []string{
		`INSERT INTO users (id, email, display_name, created_at, updated_at) VALUES ('u', 'u@example.com', 'U', now(), now())`,
		`INSERT INTO organizations (id, title, created_at, updated_at) VALUES ('oa', 'A', now(), now()), ('ob', 'B', now(), now())`,
		`INSERT INTO spaces (id, organization_id, revision_id, created_at, updated_at) VALUES ('s', 'oa', 'r1', now(), now())`,
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	digest, err := store.SaveSpaceBody(ctx, db, "s", "# Moving words\nalong")
	if err != nil {
		t.Fatal(err)
	}
	page := &store.RevisionPage{ID: "p", Type: store.PageDocument, Title: "P", Slug: "p", BodySHA256: digest}
	r1 := &store.Revision{ID: "r1", SpaceID: "s", Parents: []string{}, Type: "edits"}
	if err := store.CreateRevision(ctx, db, r1, store.Content{Pages: []*store.RevisionPage{page}}); err != nil {
		t.Fatal(err)
	}
	cr := &store.ChangeRequest{ID: "cr", SpaceID: "s", Number: 1, Status: store.CROpen, RevisionInitial: "r1", Revision: "r1"}
	if err := store.CreateChangeRequest(ctx, db, cr); err != nil {
		t.Fatal(err)
	}
	if err := store.AddContributor(ctx, db, cr.OrganizationID, "cr", "u"); err != nil {
		t.Fatal(err)
	}
	c := &store.Comment{ID: "c", SpaceID: "s", ChangeRequestID: &cr.ID, RevisionID: "r1", Body: "hi", Status: store.CommentOpen}
	reply := &store.CommentReply{ID: "re", CommentID: "c", Body: "yes"}
	for _, row := range []any{c, reply} {
		if err := store.InsertRow(ctx, db, row); err != nil {
			t.Fatal(err)
		}
	}
	if err := store.React(ctx, db, "oa", "re", "u", []string{"tada"}, nil, c.PostedAt); err != nil {
		t.Fatal(err)
	}
	if c.OrganizationID != "oa" || reply.OrganizationID != "oa" || cr.OrganizationID != "oa" {
		t.Fatalf("written in %q, %q, %q", c.OrganizationID, reply.OrganizationID, cr.OrganizationID)
	}

	err = store.RunInTx(ctx, db, func(ctx context.Context, tx bun.Tx) error {
		return store.MoveToOrganization(ctx, tx, "oa", "ob", nil, []string{"s"})
	})
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	err = db.NewRaw(`SELECT t FROM (
		SELECT 'spaces' AS t, organization_id FROM spaces UNION ALL
		SELECT 'revisions', organization_id FROM revisions UNION ALL
		SELECT 'revision_pages', organization_id FROM revision_pages UNION ALL
		SELECT 'change_requests', organization_id FROM change_requests UNION ALL
		SELECT 'change_request_contributors', organization_id FROM change_request_contributors UNION ALL
		SELECT 'comments', organization_id FROM comments UNION ALL
		SELECT 'comment_replies', organization_id FROM comment_replies UNION ALL
		SELECT 'comment_reactions', organization_id FROM comment_reactions) x WHERE organization_id <> 'ob'`).Scan(ctx, &left)
	if err != nil || len(left) > 0 {
		t.Errorf("rows left in the old organization: %v %v", left, err)
	}
	hits, err := store.Search(ctx, db, "ob", []string{"s"}, "moving")
	if err != nil || len(hits) != 1 || store.StringOf(hits[0].Anchor) != "moving-words" {
		t.Errorf("search after the move: %+v %v", hits, err)
	}
	// A new revision of the moved content, in the new organization.
	content, err := store.LoadContent(ctx, db, "ob", "r1")
	if err != nil {
		t.Fatal(err)
	}
	r2 := &store.Revision{ID: "r2", SpaceID: "s", Parents: []string{"r1"}, Type: "edits"}
	if err := store.CreateRevision(ctx, db, r2, content.Copy()); err != nil {
		t.Fatal(err)
	}
	if r2.OrganizationID != "ob" {
		t.Errorf("the new revision's organization: %q", r2.OrganizationID)
	}
}
