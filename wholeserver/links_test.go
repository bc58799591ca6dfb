package wholeserver_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/docsapi/docsapi/cmd/docsapi/server/servertest"
)

func TestLinks(t *testing.T) {
	t.Parallel()
	e := newCREnv(t)
	file := uploadedFile(t, e.alice, e.space, "", "diagram.txt", []byte("diagram"))
	_ = file
	// Page A links to B (by its file), to the file, outside, into the app,
	// and to a page that does not exist.
	md := "See [B](b.md), [the diagram](.gitbook/assets/diagram.txt), [Go](https://go.dev), " +
		"[app](" + e.env.URL + "/app/s/x), [gone](missing.md) and [again](b.md)."
	e.mustEdit("", e.pageA, md)

	type location struct {
		Kind string
		URL  string
		Page struct{ ID string }
		File struct{ ID string }
	}
	var links struct {
		Count int
		Stats struct {
			Total  int
			Broken struct{ Total int }
		}
		Items []struct {
			Status             string
			Relation           string
			TargetReference    location
			LocationReferences []location
		}
	}
	e.alice.Do("GET", e.spaceBase+"/links", nil).Expect(http.StatusOK).Decode(&links)
	if links.Stats.Total != 6 || links.Stats.Broken.Total != 1 || links.Count != 5 {
		t.Fatalf("links: %+v", links)
	}
	byStatus := map[string][]location{}
	for _, it := range links.Items {
		byStatus[it.Status] = append(byStatus[it.Status], it.TargetReference)
		if it.Relation != "reference" || len(it.LocationReferences) != 1 || it.LocationReferences[0].Page.ID != e.pageA {
			t.Errorf("item: %+v", it)
		}
	}
	if len(byStatus["ok"]) != 3 || len(byStatus["in-app"]) != 1 || len(byStatus["broken"]) != 1 || byStatus["broken"][0].URL != "missing.md" {
		t.Errorf("by status: %+v", byStatus)
	}
	e.alice.Do("GET", e.spaceBase+"/links?status=broken", nil).Expect(http.StatusOK).Decode(&links)
	if links.Count != 1 || links.Stats.Total != 6 {
		t.Errorf("broken only: %+v", links)
	}
	e.alice.Do("GET", e.spaceBase+"/links?status=fine", nil).Expect(http.StatusBadRequest)
	e.alice.Do("GET", e.spaceBase+"/content/page/"+e.pageA+"/links?status=in-app", nil).Expect(http.StatusOK).Decode(&links)
	if links.Count != 1 {
		t.Errorf("page links in-app: %+v", links)
	}

	var back struct{ Items []location }
	e.alice.Do("GET", e.spaceBase+"/content/page/"+e.pageB+"/backlinks", nil).Expect(http.StatusOK).Decode(&back)
	if len(back.Items) != 1 || back.Items[0].Kind != "page" || back.Items[0].Page.ID != e.pageA {
		t.Errorf("backlinks of B: %+v", back)
	}
	e.alice.Do("GET", e.spaceBase+"/content/files/"+file+"/backlinks", nil).Expect(http.StatusOK).Decode(&back)
	if len(back.Items) != 1 || back.Items[0].Page.ID != e.pageA {
		t.Errorf("backlinks of the file: %+v", back)
	}
	// REST leaves the version out (TestBacklinkListSize); GraphQL gives the
	// revision, of which a query selects what it needs.
	if body := e.alice.Do("GET", e.spaceBase+"/content/page/"+e.pageB+"/backlinks", nil).Expect(http.StatusOK).Body; strings.Contains(string(body), "versionContext") {
		t.Errorf("a REST backlink carries its versionContext")
	}
	var versions struct {
		Space struct {
			Content struct {
				ID   string
				Page struct {
					Backlinks struct {
						Items []struct {
							VersionContext struct {
								Type     string
								Revision struct{ ID string }
							}
						}
					}
				}
			}
		}
	}
	gql(t, e.alice, `query($s: ID!, $p: ID!) { space(id: $s) { content { id page(id: $p) { backlinks {
		items { ... on ContentLocationPage { versionContext { type revision { id } } } } } } } } }`,
		map[string]any{"s": e.space, "p": e.pageB}, &versions)
	if items, rev := versions.Space.Content.Page.Backlinks.Items, versions.Space.Content.ID; len(items) != 1 ||
		items[0].VersionContext.Type != "revision" || items[0].VersionContext.Revision.ID != rev {
		t.Errorf("the version of a backlink in GraphQL: %+v, want revision %s", items, rev)
	}

	// A fixed link is ok in the next revision.
	e.mustEdit("", e.pageA, "See [B](b.md).")
	e.alice.Do("GET", e.spaceBase+"/links?status=broken", nil).Expect(http.StatusOK).Decode(&links)
	if links.Count != 0 || links.Stats.Broken.Total != 0 {
		t.Errorf("after the fix: %+v", links)
	}
}

// A backlink list grows with the pages it lists, not with the space they
// are in: each location is its page, its space and its organization, and
// no more. (GitBook's reference lets a location carry its version, a whole
// revision with every page of the space; one in every location made a list
// of 200 pages 15 MB, and a location in a big space cost what the space's
// whole tree costs.) Each of the three backlink lists (a page's, a file's, a
// change request's file's) of the 200 pages linking to their target is within
// twice 200 times the same list of a lone linking page.
func TestBacklinkListSize(t *testing.T) {
	t.Parallel()
	env := servertest.New(t)
	alice := env.NewUser("Alice")
	org := alice.NewOrg("Acme")
	const pages = 200
	const linking = "See [the target](target.md) and [the diagram](.gitbook/assets/diagram.txt)."
	// space makes a space of a target page, a file and n pages linking to
	// both, and a change request opened on it.
	type space struct{ id, target, file, cr string }
	newSpace := func(title string, n int) space {
		s := space{id: alice.Do("POST", "/v1/orgs/"+org+"/spaces", map[string]any{"title": title}).Expect(http.StatusCreated).String("id")}
		s.target, _, _ = createPage(t, alice, s.id, "Target", "The target.")
		s.file = uploadedFile(t, alice, s.id, "", "diagram.txt", []byte("diagram"))
		for i := range n {
			createPage(t, alice, s.id, fmt.Sprintf("Linking page %d", i), linking)
		}
		s.cr = alice.Do("POST", "/v1/spaces/"+s.id+"/change-requests", map[string]any{"subject": "Review"}).Expect(http.StatusCreated).String("id")
		return s
	}
	small, big := newSpace("Small", 1), newSpace("Big", pages)
	lists := []struct {
		name string
		path func(s space) string
	}{
		{"a page's backlinks", func(s space) string { return "/v1/spaces/" + s.id + "/content/page/" + s.target + "/backlinks" }},
		{"a file's backlinks", func(s space) string { return "/v1/spaces/" + s.id + "/content/files/" + s.file + "/backlinks" }},
		{"a change request's file's backlinks", func(s space) string {
			return "/v1/spaces/" + s.id + "/change-requests/" + s.cr + "/content/files/" + s.file + "/backlinks"
		}},
	}
	for _, l := range lists {
		// size reads the list whole, in one answer, and says its bytes.
		size := func(s space, n int) int {
			res := alice.Do("GET", l.path(s)+"?limit=1000", nil).Expect(http.StatusOK)
			var list struct{ Count int }
			res.Decode(&list)
			if list.Count != n {
				t.Fatalf("%s: %d items, want %d", l.name, list.Count, n)
			}
			return len(res.Body)
		}
		one, all := size(small, 1), size(big, pages)
		t.Logf("%s: a list of 1 page is %d bytes; of %d pages, %d bytes (%.0f bytes a page)", l.name, one, pages, all, float64(all)/pages)
		if limit := 2 * pages * one; all > limit {
			t.Errorf("%s: a list of %d is %d bytes, over %d: each location holds more than its page", l.name, pages, all, limit)
		}
	}
}
