package store_test

import (
	"context"
	"slices"
	"testing"

	"github.com/docsapi/docsapi/store"
	"github.com/docsapi/docsapi/store/pgtest"
)

// SiteSpacesWithSpaces answers in one statement what SiteSpacesOfSites
// (live) and SpacesOfSites (or SpaceSummariesOfSites) answer in two: the
// same site spaces in the same order, the same spaces, each once; the site
// spaces of a deleted space are left out with it, as are other sites' and
// other organizations'.
func TestSiteSpacesWithSpacesReadsWhatTwoReadsDo(t *testing.T) {
	db := pgtest.NewDB(t)
	ctx := context.Background()
	for _, s := range []string{
		`INSERT INTO organizations (id, title, created_at, updated_at) VALUES ('mine', 'Mine', now(), now()), ('other', 'Other', now(), now())`,
		`INSERT INTO spaces (id, organization_id, title, revision_id, created_at, updated_at)
			SELECT 's' || i, 'mine', 'Space ' || i, 'r' || i, now(), now() FROM generate_series(1, 6) i`,
		`INSERT INTO spaces (id, organization_id, title, revision_id, created_at, updated_at)
			VALUES ('o1', 'other', 'Theirs', 'ro1', now(), now())`,
		`UPDATE spaces SET deleted_at = now() WHERE id = 's4'`,
		`INSERT INTO sites (id, organization_id, title, share_key, created_at, updated_at)
			VALUES ('site1', 'mine', 'One', 'k1', now(), now()), ('site2', 'mine', 'Two', 'k2', now(), now()),
			('osite', 'other', 'Theirs', 'k3', now(), now())`,
		// site1 publishes s1 twice, s2, s3 and the deleted s4, out of
		// position order; site2 publishes s5 and s6; osite o1.
		`INSERT INTO site_spaces (id, organization_id, site_id, space_id, path, position, created_at) VALUES
			('a', 'mine', 'site1', 's3', 'c', 2, now()), ('b', 'mine', 'site1', 's1', 'a', 0, now()),
			('c', 'mine', 'site1', 's1', 'a2', 4, now()), ('d', 'mine', 'site1', 's2', 'b', 1, now()),
			('e', 'mine', 'site1', 's4', 'd', 3, now()), ('f', 'mine', 'site2', 's5', 'e', 0, now()),
			('g', 'mine', 'site2', 's6', 'f', 1, now()), ('h', 'other', 'osite', 'o1', 'g', 0, now())`,
	} {
		if _, err := db.Pool.Exec(ctx, s); err != nil {
			t.Fatalf("%v\n%s", err, s)
		}
	}
	ids := func(spaces []*store.Space) []string {
		out := make([]string, len(spaces))
		for i, s := range spaces {
			out[i] = s.ID
		}
		slices.Sort(out)
		return out
	}
	for _, sites := range [][]string{{"site1"}, {"site2"}, {"site1", "site2"}, {"osite"}, {"none"}} {
		for _, summaries := range []bool{false, true} {
			siteSpaces, spaces, err := store.SiteSpacesWithSpaces(ctx, db, "mine", sites, summaries)
			if err != nil {
				t.Fatal(err)
			}
			wantSiteSpaces, err := store.SiteSpacesOfSites(ctx, db, "mine", sites, true)
			if err != nil {
				t.Fatal(err)
			}
			read := store.SpacesOfSites
			if summaries {
				read = store.SpaceSummariesOfSites
			}
			wantSpaces, err := read(ctx, db, "mine", sites)
			if err != nil {
				t.Fatal(err)
			}
			if len(siteSpaces) != len(wantSiteSpaces) {
				t.Fatalf("sites %v: %d site spaces, want %d", sites, len(siteSpaces), len(wantSiteSpaces))
			}
			for i := range siteSpaces {
				if *siteSpaces[i] != *wantSiteSpaces[i] {
					t.Errorf("sites %v: site space %d is %+v, want %+v", sites, i, *siteSpaces[i], *wantSiteSpaces[i])
				}
			}
			if got, want := ids(spaces), ids(wantSpaces); !slices.Equal(got, want) {
				t.Errorf("sites %v (summaries %v): spaces %v, want %v", sites, summaries, got, want)
			}
			byID := map[string]*store.Space{}
			for _, s := range wantSpaces {
				byID[s.ID] = s
			}
			for _, s := range spaces {
				w := byID[s.ID]
				if w == nil || s.Title != w.Title || s.OrganizationID != w.OrganizationID || s.RevisionID != w.RevisionID ||
					!s.CreatedAt.Equal(w.CreatedAt) || s.Visibility != w.Visibility {
					t.Errorf("sites %v (summaries %v): space %+v, want %+v", sites, summaries, s, w)
				}
			}
		}
	}
}
