package store_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/docsapi/docsapi/store"
	"github.com/docsapi/docsapi/store/pgtest"
)

// A site's redirects are found by their source in their own site only, one
// per source, and go with the site.
func TestSiteRedirects(t *testing.T) {
	db := pgtest.NewDB(t)
	ctx := context.Background()
	if _, err := db.Pool.Exec(ctx, `INSERT INTO organizations (id, title, created_at, updated_at)
		VALUES ('mine', 'Mine', now(), now()), ('other', 'Other', now(), now())`); err != nil {
		t.Fatal(err)
	}
	now := store.Now(time.Now)
	for _, s := range []struct{ id, org string }{{"one", "mine"}, {"two", "mine"}, {"theirs", "other"}} {
		if err := store.CreateSite(ctx, db, &store.Site{ID: s.id, OrganizationID: s.org, Type: store.SiteTypeBasic, Title: s.id,
			Visibility: store.SiteVisibilityPublic, ShareKey: store.NewSecret(), AgentsContext: store.AgentsContextIncluded,
			CreatedAt: now, UpdatedAt: now}); err != nil {
			t.Fatal(err)
		}
	}
	url := "https://example.com/new"
	section := "section-1"
	redirect := func(id, org, site, source string, to store.SiteRedirectDestination) error {
		return store.CreateSiteRedirect(ctx, db, &store.SiteRedirect{ID: id, OrganizationID: org, SiteID: site, Source: source,
			Destination: to, CreatedAt: now, UpdatedAt: now})
	}
	if err := redirect("r1", "mine", "one", "/old", store.SiteRedirectDestination{Kind: store.RedirectToURL, URL: &url}); err != nil {
		t.Fatal(err)
	}
	if err := redirect("r2", "mine", "two", "/old", store.SiteRedirectDestination{Kind: store.RedirectToSiteSection, SiteSectionID: &section}); err != nil {
		t.Fatalf("the same source in another site: %v", err)
	}
	if err := redirect("r3", "mine", "one", "/old", store.SiteRedirectDestination{Kind: store.RedirectToURL, URL: &url}); !errors.Is(err, store.ErrConflict) {
		t.Errorf("a second redirect from the same source: %v, want ErrConflict", err)
	}

	got, err := store.SiteRedirectBySource(ctx, db, "mine", "one", "/old")
	if err != nil || got.ID != "r1" || got.Destination.Kind != store.RedirectToURL || store.StringOf(got.Destination.URL) != url ||
		got.Destination.SiteSectionID != nil {
		t.Errorf("by source: %+v, %v", got, err)
	}
	got, err = store.GetSiteRedirect(ctx, db, "mine", "two", "r2")
	if err != nil || got.Destination.Kind != store.RedirectToSiteSection || store.StringOf(got.Destination.SiteSectionID) != section {
		t.Errorf("by id: %+v, %v", got, err)
	}
	for _, c := range []struct{ org, site, source string }{{"mine", "one", "/Old"}, {"mine", "one", "/old/"}, {"other", "one", "/old"}, {"mine", "theirs", "/old"}} {
		if _, err := store.SiteRedirectBySource(ctx, db, c.org, c.site, c.source); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s/%s from %q: %v, want ErrNotFound", c.org, c.site, c.source, err)
		}
	}
	if n, err := store.CountSiteRedirects(ctx, db, "mine", "one"); n != 1 || err != nil {
		t.Errorf("site one counts %d redirects (%v)", n, err)
	}

	// Deleting a site takes its redirects along.
	if _, err := store.DeleteSite(ctx, db, "mine", "one"); err != nil {
		t.Fatal(err)
	}
	if _, err := store.GetSiteRedirect(ctx, db, "mine", "one", "r1"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a redirect of a deleted site: %v", err)
	}
}

// pageTree is a revision's tree of pages given as "id=path", parents
// before their children.
func pageTree(pages ...string) *store.PageTree {
	var rows []*store.RevisionPage
	idAt := map[string]string{}
	for i, p := range pages {
		id, path, _ := strings.Cut(p, "=")
		dir, slug := "", path
		if i := strings.LastIndex(path, "/"); i >= 0 {
			dir, slug = path[:i], path[i+1:]
		}
		row := &store.RevisionPage{ID: id, Slug: slug, Position: i, Type: store.PageDocument, Title: slug}
		if dir != "" {
			parent := idAt[dir]
			row.ParentID = &parent
		}
		idAt[path] = id
		rows = append(rows, row)
	}
	return store.NewPageTree(rows)
}

// The automatic redirects of a space after each of its revisions: old paths
// lead to their page wherever it went (chains too), never from a path a page
// holds, never to a page gone.
func TestRecordPageMoves(t *testing.T) {
	db := pgtest.NewDB(t)
	ctx := context.Background()
	if _, err := db.Pool.Exec(ctx, `INSERT INTO organizations (id, title, created_at, updated_at) VALUES ('org', 'Org', now(), now());
		INSERT INTO spaces (id, organization_id, title, revision_id, created_at, updated_at) VALUES ('space', 'org', 'S', 'rev', now(), now())`); err != nil {
		t.Fatal(err)
	}
	// Each step is a revision after the one before, and the redirects
	// (path → page) the space has then.
	steps := []struct {
		name  string
		tree  *store.PageTree
		after map[string]string
	}{
		{"first content", pageTree("a=intro", "b=guides", "c=guides/install", "d=faq"), map[string]string{}},
		{"a rename (new slug)", pageTree("a=welcome", "b=guides", "c=guides/install", "d=faq"),
			map[string]string{"intro": "a"}},
		{"a move: the page and its subtree", pageTree("a=welcome", "b=manual", "c=manual/install", "d=faq"),
			map[string]string{"intro": "a", "guides": "b", "guides/install": "c"}},
		{"a chain: moved again, the first path leads on", pageTree("a=start", "b=manual", "c=manual/install", "d=faq"),
			map[string]string{"intro": "a", "welcome": "a", "guides": "b", "guides/install": "c"}},
		{"a new page where one was: no redirect shadows it", pageTree("a=start", "b=manual", "c=manual/install", "d=faq", "e=intro"),
			map[string]string{"welcome": "a", "guides": "b", "guides/install": "c"}},
		{"a page back where it was: its old path is live again", pageTree("a=welcome", "b=manual", "c=manual/install", "d=faq", "e=intro"),
			map[string]string{"start": "a", "guides": "b", "guides/install": "c"}},
		{"a swap: neither old path redirects", pageTree("a=welcome", "b=manual", "c=manual/install", "d=intro", "e=faq"),
			map[string]string{"start": "a", "guides": "b", "guides/install": "c"}},
		{"a page deleted takes its redirects along", pageTree("a=welcome", "d=intro", "e=faq"),
			map[string]string{"start": "a"}},
	}
	var before *store.PageTree
	for i, step := range steps {
		if err := store.RecordPageMoves(ctx, db, "org", "space", before, step.tree, time.Unix(int64(1000+i), 0)); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		before = step.tree
		if got := pageRedirects(t, db); !maps.Equal(got, step.after) {
			t.Errorf("%s: the redirects are %v, want %v", step.name, got, step.after)
		}
	}
	for path, page := range map[string]string{"start": "a", "guides": ""} {
		r, err := store.PageRedirectAt(ctx, db, "org", "space", path)
		switch {
		case page == "" && !errors.Is(err, store.ErrNotFound):
			t.Errorf("from %s: %+v, %v; want none", path, r, err)
		case page != "" && (err != nil || r.PageID != page):
			t.Errorf("from %s: %+v, %v; want page %s", path, r, err, page)
		}
	}
	if _, err := store.PageRedirectAt(ctx, db, "other", "space", "start"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("another organization's: %v", err)
	}
}

// A space keeps at most store.MaxPageRedirects automatic redirects: the
// newest.
func TestPageRedirectsAreBounded(t *testing.T) {
	db := pgtest.NewDB(t)
	ctx := context.Background()
	if _, err := db.Pool.Exec(ctx, `INSERT INTO organizations (id, title, created_at, updated_at) VALUES ('org', 'Org', now(), now());
		INSERT INTO spaces (id, organization_id, title, revision_id, created_at, updated_at) VALUES ('space', 'org', 'S', 'rev', now(), now())`); err != nil {
		t.Fatal(err)
	}
	n := store.MaxPageRedirects
	// tree is the space's n pages, the first moved of them under the
	// prefix moved, the others under "one".
	tree := func(moved int, prefix string) *store.PageTree {
		pages := make([]string, n)
		for i := range n {
			p := "one"
			if i < moved {
				p = prefix
			}
			pages[i] = fmt.Sprintf("p%d=%s-%d", i, p, i)
		}
		return pageTree(pages...)
	}
	// 100 pages move, then all of them: n+100 old paths, of which the
	// first move's 100 are the oldest.
	revisions := []*store.PageTree{nil, tree(0, ""), tree(100, "two"), tree(n, "three")}
	for i := 1; i < len(revisions); i++ {
		if err := store.RecordPageMoves(ctx, db, "org", "space", revisions[i-1], revisions[i], time.Unix(int64(1000+i), 0)); err != nil {
			t.Fatal(err)
		}
	}
	got := pageRedirects(t, db)
	if len(got) != n {
		t.Errorf("%d redirects, want the bound, %d", len(got), n)
	}
	for i := range 100 {
		if _, kept := got[fmt.Sprintf("one-%d", i)]; kept {
			t.Fatalf("one-%d, of the oldest redirects, is kept past the bound", i)
		}
		if got[fmt.Sprintf("two-%d", i)] != fmt.Sprintf("p%d", i) {
			t.Fatalf("two-%d, a newest redirect, leads to %q", i, got[fmt.Sprintf("two-%d", i)])
		}
	}
	if got[fmt.Sprintf("one-%d", n-1)] != fmt.Sprintf("p%d", n-1) {
		t.Errorf("one-%d, a newest redirect, is not kept", n-1)
	}
}

// pageRedirects are the space's automatic redirects, path → page.
func pageRedirects(t *testing.T, db *store.DB) map[string]string {
	t.Helper()
	rows, err := db.Pool.Query(context.Background(), `SELECT path, page_id FROM page_redirects WHERE organization_id = 'org' AND space_id = 'space'`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var path, page string
		if err := rows.Scan(&path, &page); err != nil {
			t.Fatal(err)
		}
		out[path] = page
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
