package rest_test

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
// whole tree costs.) The list of the 200 pages linking to one page is
// within twice 200 times the location of a lone linking page.
func TestBacklinkListSize(t *testing.T) {
	t.Parallel()
	env := servertest.New(t)
	alice := env.NewUser("Alice")
	org := alice.NewOrg("Acme")
	newSpace := func(title string) string {
		return alice.Do("POST", "/v1/orgs/"+org+"/spaces", map[string]any{"title": title}).Expect(http.StatusCreated).String("id")
	}
	// backlinks lists the pages of space linking to target, in one answer.
	backlinks := func(space, target string, pages int) int {
		res := alice.Do("GET", "/v1/spaces/"+space+"/content/page/"+target+"/backlinks?limit=1000", nil).Expect(http.StatusOK)
		var list struct{ Count int }
		res.Decode(&list)
		if list.Count != pages {
			t.Fatalf("%d backlinks, want %d", list.Count, pages)
		}
		return len(res.Body)
	}
	const pages = 200
	small, big := newSpace("Small"), newSpace("Big")
	smallTarget, _, _ := createPage(t, alice, small, "Target", "The target.")
	createPage(t, alice, small, "Linking page", "See [the target](target.md).")
	one := backlinks(small, smallTarget, 1)

	bigTarget, _, _ := createPage(t, alice, big, "Target", "The target.")
	for i := range pages {
		createPage(t, alice, big, fmt.Sprintf("Linking page %d", i), "See [the target](target.md).")
	}
	all := backlinks(big, bigTarget, pages)
	t.Logf("backlinks: a list of 1 page is %d bytes; of %d pages, %d bytes (%.0f bytes a page)", one, pages, all, float64(all)/pages)
	if limit := 2 * pages * one; all > limit {
		t.Errorf("a list of %d backlinks is %d bytes, over %d: each location holds more than its page", pages, all, limit)
	}
}
