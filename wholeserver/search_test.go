package wholeserver_test

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docsapi/docsapi/cmd/docsapi/server/servertest"
	"github.com/docsapi/docsapi/store"
)

type searchPage struct {
	ID, Title, Path string
	Sections        []struct{ ID, Title, Body string }
	Ancestors       []struct{ Title string }
	Urls            struct{ App string }
}

func searchSpace(t *testing.T, u *servertest.User, space, query string) []searchPage {
	t.Helper()
	var out struct{ Items []searchPage }
	u.Do("GET", "/v1/spaces/"+space+"/search?query="+url.QueryEscape(query), nil).Expect(http.StatusOK).Decode(&out)
	return out.Items
}

func TestSearch(t *testing.T) {
	t.Parallel()
	env := servertest.New(t)
	alice := env.NewUser("Alice")
	org := alice.NewOrg("Acme")
	docs := alice.Do("POST", "/v1/orgs/"+org+"/spaces", `{"title":"Docs"}`).Expect(http.StatusCreated).String("id")
	guides, _, _ := createPage(t, alice, docs, "Guides", "Start here.")
	var in struct{ CreatePage struct{ ID string } }
	gql(t, alice, createPageQuery, map[string]any{"s": docs, "in": map[string]any{"title": "Install", "parent": guides,
		"markdown": "Intro text.\n\n## Requirements\n\nYou need PostgreSQL 15 and a kettle.\n\n```\n# not a heading\n```\n\n## Steps\n\nRun the installer."}}, &in)
	install := in.CreatePage.ID
	createPage(t, alice, docs, "FAQ", "Why a kettle? Tea.")

	hits := searchSpace(t, alice, docs, "PostgreSQL")
	if len(hits) != 1 || hits[0].ID != install || hits[0].Path != "guides/install" || len(hits[0].Sections) != 1 ||
		hits[0].Sections[0].ID != "requirements" || !strings.Contains(hits[0].Sections[0].Body, "PostgreSQL 15") ||
		len(hits[0].Ancestors) != 1 || hits[0].Ancestors[0].Title != "Guides" || !strings.HasSuffix(hits[0].Sections[0].Title, "Requirements") {
		t.Fatalf("hits for PostgreSQL: %+v", hits)
	}
	// Stemming, several pages, the title first.
	hits = searchSpace(t, alice, docs, "kettles")
	if len(hits) != 2 {
		t.Errorf("hits for kettles: %+v", hits)
	}
	hits = searchSpace(t, alice, docs, "installing")
	if len(hits) == 0 || hits[0].ID != install {
		t.Errorf("hits for installing: %+v", hits)
	}
	if hits := searchSpace(t, alice, docs, `"not a heading"`); len(hits) != 1 {
		t.Errorf("code blocks are text: %+v", hits)
	}

	// Only the current content is searched.
	gql(t, alice, updatePageQuery, map[string]any{"s": docs, "p": install, "in": map[string]any{"markdown": "Nothing to see."}}, nil)
	if hits := searchSpace(t, alice, docs, "PostgreSQL"); len(hits) != 0 {
		t.Errorf("the old revision was searched: %+v", hits)
	}

	for _, q := range []string{"", "?query=", "?query=%20%20", "?query=" + strings.Repeat("x", 513)} {
		alice.Do("GET", "/v1/spaces/"+docs+"/search"+q, nil).Expect(http.StatusBadRequest).ErrorMessage()
	}

	// Across the organization: only what the caller can read.
	hidden := alice.Do("POST", "/v1/orgs/"+org+"/spaces", `{"title":"Secret"}`).Expect(http.StatusCreated).String("id")
	createPage(t, alice, hidden, "Kettle policy", "The secret kettle.")
	alice.Do("PATCH", "/v1/spaces/"+hidden, `{"defaultLevel":null}`).Expect(http.StatusOK)
	other := env.NewUser("Other")
	otherOrg := other.NewOrg("Elsewhere")
	otherSpace := other.Do("POST", "/v1/orgs/"+otherOrg+"/spaces", `{"title":"Theirs"}`).Expect(http.StatusCreated).String("id")
	createPage(t, other, otherSpace, "Kettles", "Their kettle.")
	reader := env.NewUser("Reader")
	reader.Join(org, store.RoleRead)

	spacesFound := func(u *servertest.User) map[string]int {
		var out struct {
			Items []struct {
				ID    string
				Pages []searchPage
			}
		}
		u.Do("GET", "/v1/orgs/"+org+"/search?query=kettle", nil).Expect(http.StatusOK).Decode(&out)
		found := map[string]int{}
		for _, s := range out.Items {
			found[s.ID] = len(s.Pages)
		}
		return found
	}
	if got := spacesFound(alice); len(got) != 2 || got[docs] != 1 || got[hidden] != 1 {
		t.Errorf("the admin's results: %v", got)
	}
	if got := spacesFound(reader); len(got) != 1 || got[docs] != 1 {
		t.Errorf("the reader's results: %v", got)
	}
	other.Do("GET", "/v1/orgs/"+org+"/search?query=kettle", nil).Expect(http.StatusNotFound)
	reader.Do("GET", "/v1/spaces/"+hidden+"/search?query=kettle", nil).Expect(http.StatusNotFound)
}

// orgSearch returns the spaces of org in which u's search for query finds
// pages, sorted.
func orgSearch(t *testing.T, u *servertest.User, org, query string) []string {
	t.Helper()
	var out struct{ Items []struct{ ID string } }
	u.Do("GET", "/v1/orgs/"+org+"/search?query="+url.QueryEscape(query), nil).Expect(http.StatusOK).Decode(&out)
	var spaces []string
	for _, s := range out.Items {
		spaces = append(spaces, s.ID)
	}
	slices.Sort(spaces)
	return spaces
}

// checkShownBodies fails unless what search reads of current content
// (migration 0039, kept by triggers) is what a count from scratch gives:
// every body's number of pages in live spaces' current revisions, its
// sections shown when there is one, and those pages by space.
func checkShownBodies(t *testing.T, db *store.DB, step string) {
	t.Helper()
	var wrongBodies, wrongSections, wrongPages int
	err := db.Pool.QueryRow(context.Background(), `WITH counts AS (
			SELECT s.organization_id, rp.body_sha256, count(*) AS n
			FROM spaces s JOIN revision_pages rp ON rp.organization_id = s.organization_id AND rp.revision_id = s.revision_id
			WHERE s.deleted_at IS NULL AND rp.body_sha256 IS NOT NULL
			GROUP BY s.organization_id, rp.body_sha256)
		SELECT (SELECT count(*) FROM counts c
				FULL JOIN shown_bodies b ON b.organization_id = c.organization_id AND b.body_sha256 = c.body_sha256
				WHERE b.pages IS DISTINCT FROM c.n),
			(SELECT count(*) FROM body_sections s
				WHERE s.shown <> EXISTS (SELECT 1 FROM counts c WHERE c.organization_id = s.organization_id AND c.body_sha256 = s.body_sha256)),
			(SELECT count(*) FROM (
				SELECT s.id, rp.page_id, s.organization_id, rp.body_sha256
				FROM spaces s JOIN revision_pages rp ON rp.organization_id = s.organization_id AND rp.revision_id = s.revision_id
				WHERE s.deleted_at IS NULL AND rp.body_sha256 IS NOT NULL) cur
				FULL JOIN current_pages cp ON cp.organization_id = cur.organization_id AND cp.space_id = cur.id AND cp.page_id = cur.page_id
				WHERE (cp.organization_id, cp.body_sha256) IS DISTINCT FROM (cur.organization_id, cur.body_sha256))`).
		Scan(&wrongBodies, &wrongSections, &wrongPages)
	if err != nil {
		t.Fatal(err)
	}
	if wrongBodies+wrongSections+wrongPages > 0 {
		t.Errorf("%s: %d bodies counted wrong, %d sections flagged wrong, %d current pages wrong", step, wrongBodies, wrongSections, wrongPages)
	}
}

// Search finds what the spaces show now, whatever changed it: not the words
// of an open change request, the words of a merged one and no longer those
// it replaced, a body as long as one live space shows it, a restored
// space's words again, a transferred space's in its new organization only;
// another organization's copy of the same text is its own.
func TestSearchFollowsCurrentContent(t *testing.T) {
	t.Parallel()
	env := servertest.New(t)
	alice := env.NewUser("Alice")
	org := alice.NewOrg("Acme")
	elsewhere := alice.NewOrg("Elsewhere")
	docs := alice.Do("POST", "/v1/orgs/"+org+"/spaces", `{"title":"Docs"}`).Expect(http.StatusCreated).String("id")
	guide, _, _ := createPage(t, alice, docs, "Guide", "Brew with a kettle.")
	createPage(t, alice, docs, "Other", "Nothing hot here.")
	bob := env.NewUser("Bob")
	bobOrg := bob.NewOrg("Bob's")
	theirs := bob.Do("POST", "/v1/orgs/"+bobOrg+"/spaces", `{"title":"Theirs"}`).Expect(http.StatusCreated).String("id")
	createPage(t, bob, theirs, "Guide", "Brew with a samovar.")

	var cr, dup string
	steps := []struct {
		name string
		do   func()
		// want: query -> spaces found, in org (alice's) and elsewhere.
		want, wantElsewhere map[string][]string
	}{
		{"created", func() {}, map[string][]string{"kettle": {docs}, "samovar": nil}, nil},
		{"edited in an open change request", func() {
			cr = alice.Do("POST", "/v1/spaces/"+docs+"/change-requests", `{"subject":"Samovar"}`).Expect(http.StatusCreated).String("id")
			gql(t, alice, `mutation($s: ID!, $cr: ID, $p: ID!, $in: UpdatePageInput!) { updatePage(spaceId: $s, changeRequestId: $cr, pageId: $p, input: $in) { id } }`,
				map[string]any{"s": docs, "cr": cr, "p": guide, "in": map[string]any{"markdown": "Brew with a samovar."}}, nil)
		}, map[string][]string{"kettle": {docs}, "samovar": nil}, nil},
		{"merged", func() {
			alice.Do("POST", "/v1/spaces/"+docs+"/change-requests/"+cr+"/merge", nil).Expect(http.StatusOK)
		}, map[string][]string{"kettle": nil, "samovar": {docs}}, nil},
		{"duplicated", func() {
			dup = alice.Do("POST", "/v1/spaces/"+docs+"/duplicate", nil).Expect(http.StatusCreated).String("id")
		}, map[string][]string{"samovar": {docs, "dup"}}, nil},
		{"the original deleted, the duplicate showing the same body", func() {
			alice.Do("DELETE", "/v1/spaces/"+docs, nil).Expect(http.StatusNoContent)
		}, map[string][]string{"samovar": {"dup"}, "hot": {"dup"}}, nil},
		{"both deleted", func() {
			alice.Do("DELETE", "/v1/spaces/"+dup, nil).Expect(http.StatusNoContent)
		}, map[string][]string{"samovar": nil, "hot": nil}, nil},
		{"the original restored", func() {
			alice.Do("POST", "/v1/spaces/"+docs+"/restore", nil).Expect(http.StatusOK)
		}, map[string][]string{"samovar": {docs}, "hot": {docs}, "kettle": nil}, nil},
		{"edited directly", func() {
			gql(t, alice, updatePageQuery, map[string]any{"s": docs, "p": guide, "in": map[string]any{"markdown": "Brew with a kettle again."}}, nil)
		}, map[string][]string{"samovar": nil, "kettle": {docs}}, nil},
		{"transferred", func() {
			alice.Do("POST", "/v1/spaces/"+docs+"/transfer", `{"organization":"`+elsewhere+`"}`).Expect(http.StatusOK)
		}, map[string][]string{"kettle": nil, "hot": nil}, map[string][]string{"kettle": {docs}, "hot": {docs}}},
		// Rows deleted for good: the deleted duplicate by the retention
		// job's purge, the live space as a cascade would.
		{"the deleted duplicate purged", func() {
			if _, err := store.PurgeSpacesDeletedBefore(context.Background(), env.DB, env.Clock.Now().Add(time.Hour)); err != nil {
				t.Fatal(err)
			}
		}, nil, map[string][]string{"kettle": {docs}}},
		{"a live space removed for good", func() {
			if _, err := env.DB.Pool.Exec(context.Background(), "DELETE FROM spaces WHERE id = $1", docs); err != nil {
				t.Fatal(err)
			}
		}, nil, nil},
	}
	for _, s := range steps {
		s.do()
		for orgID, want := range map[string]map[string][]string{org: s.want, elsewhere: s.wantElsewhere} {
			for query, spaces := range want {
				spaces = slices.Clone(spaces)
				for i, id := range spaces {
					if id == "dup" {
						spaces[i] = dup
					}
				}
				slices.Sort(spaces)
				if got := orgSearch(t, alice, orgID, query); !slices.Equal(got, spaces) {
					t.Errorf("%s: %q found in %v, want %v", s.name, query, got, spaces)
				}
			}
		}
		// Bob's copy of the text is his organization's, whatever Alice does.
		if got := orgSearch(t, bob, bobOrg, "samovar"); !slices.Equal(got, []string{theirs}) {
			t.Errorf("%s: Bob's samovar found in %v", s.name, got)
		}
		checkShownBodies(t, env.DB, s.name)
	}
}

// A search ranks the same candidates whatever page of results it answers,
// so its cost is that work, not its page size: a small document of aliased
// searches multiplied by fragment spreads (10,000 full-text searches of the
// whole organization from some 2,000 tokens, seconds of database time on a
// handful of pages) is refused before any of them runs, as a list of that
// many rows is.
func TestSearchCostsWhatItRanks(t *testing.T) {
	t.Parallel()
	env := servertest.New(t)
	alice := env.NewUser("Alice")
	org := alice.NewOrg("Acme")
	space := alice.Do("POST", "/v1/orgs/"+org+"/spaces", `{"title":"Docs"}`).Expect(http.StatusCreated).String("id")
	createPage(t, alice, space, "Install", "You need a kettle.")
	const inOrg, inSpace = `search(query: "kettle", limit: 1) { count }`, `search(query: "kettle", first: 1) { count }`
	ofOrg, ofSpace := `organization(id: "`+org+`")`, `space(id: "`+space+`")`
	checkMultipliedCosts(t, alice, `"count":1`, []multipliedCase{
		{"one search of the organization", aliasedDocument(ofOrg, "Organization", inOrg, 1, 1), false},
		{"one search of a space", aliasedDocument(ofSpace, "Space", inSpace, 1, 1), false},
		{"a hundred searches", aliasedDocument(ofOrg, "Organization", inOrg, 10, 10), false},
		{"10,000 searches of the organization", aliasedDocument(ofOrg, "Organization", inOrg, 100, 100), true},
		{"10,000 searches of a space", aliasedDocument(ofSpace, "Space", inSpace, 100, 100), true},
	})
}
