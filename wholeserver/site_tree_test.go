package wholeserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/docsapi/docsapi/cmd/docsapi/server/servertest"
	"github.com/docsapi/docsapi/store"
)

const siteTreeQuery = `query Tree($o: ID!, $s: ID!) {
  site(organizationId: $o, id: $s) {
    id title
    structure { type structure {
      __typename
      ... on SiteSectionGroup { id title children { __typename ... on SiteSection { id title siteSpaces { id path space { id title } } } } }
      ... on SiteSection { id title siteSpaces { id path space { id title } } }
      ... on SiteSpace { id path space { id title } }
    } }
  }
}`

// buildSiteTree creates a site of groups × sections × site spaces, plus
// `outside` sections outside any group, through the API.
func buildSiteTree(t testing.TB, env *servertest.Env, u *servertest.User, org string, groups, sections, siteSpaces, outside int) string {
	t.Helper()
	space := func(title string) string {
		return u.Do("POST", "/v1/orgs/"+org+"/spaces", map[string]any{"title": title}).Expect(http.StatusCreated).String("id")
	}
	site := u.Do("POST", "/v1/orgs/"+org+"/sites", `{"title":"Tree"}`).Expect(http.StatusCreated).String("id")
	base := "/v1/orgs/" + org + "/sites/" + site
	addSection := func(name string) string {
		id := u.Do("POST", base+"/sections", map[string]any{"spaceId": space(name + " 0"), "title": name}).Expect(http.StatusCreated).String("id")
		for k := 1; k < siteSpaces; k++ {
			u.Do("POST", base+"/site-spaces", map[string]any{"spaceId": space(fmt.Sprintf("%s %d", name, k)), "sectionId": id}).Expect(http.StatusCreated)
		}
		return id
	}
	for g := range groups {
		var ids []string
		for s := range sections {
			ids = append(ids, addSection(fmt.Sprintf("G%d S%d", g, s)))
		}
		u.Do("POST", base+"/section-groups", map[string]any{"title": fmt.Sprintf("Group %d", g), "sections": ids}).Expect(http.StatusCreated)
	}
	for s := range outside {
		addSection(fmt.Sprintf("Outside %d", s))
	}
	return site
}

// The nested read of a site's whole structure costs one SQL query per level,
// whatever the fan-out: the same count for a small and a larger tree.
func TestSiteTreeQueryCount(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Options{Debug: true})
	alice := env.NewUser("Alice")
	org := alice.NewOrg("Acme")
	small := buildSiteTree(t, env, alice, org, 1, 1, 1, 1)
	large := buildSiteTree(t, env, alice, org, 3, 3, 3, 2)

	counts := map[string]float64{}
	for name, site := range map[string]string{"small": small, "large": large} {
		out := alice.GraphQL(siteTreeQuery, map[string]any{"o": org, "s": site})
		if len(out.Errors) > 0 {
			t.Fatalf("%s: %+v", name, out.Errors)
		}
		var data struct {
			Site struct {
				Structure struct {
					Structure []struct {
						Typename string `json:"__typename"`
						Children []struct {
							SiteSpaces []struct {
								Space struct{ Title string }
							}
						}
						SiteSpaces []struct{ Space struct{ Title string } }
					}
				}
			}
		}
		if err := json.Unmarshal(out.Data, &data); err != nil {
			t.Fatal(err)
		}
		spaces := 0
		for _, item := range data.Site.Structure.Structure {
			spaces += len(item.SiteSpaces)
			for _, c := range item.Children {
				spaces += len(c.SiteSpaces)
			}
		}
		want := map[string]int{"small": 1 + 1, "large": 3*3*3 + 2*3}[name]
		if spaces != want {
			t.Fatalf("%s tree holds %d site spaces, want %d: %s", name, spaces, want, out.Data)
		}
		counts[name] = out.Extensions["stats"].(map[string]any)["sqlQueries"].(float64)

		// The REST read of the published structure is as flat.
		alice.Do("POST", "/v1/orgs/"+org+"/sites/"+site+"/publish", nil).Expect(http.StatusOK)
		res := alice.Do("GET", "/v1/orgs/"+org+"/sites/"+site+"/published", nil).Expect(http.StatusOK)
		counts[name+" REST"] = float64(atoi(t, res.Header.Get("X-SQL-Queries")))
	}
	// The site, its groups, its sections, its site spaces with their spaces
	// (one statement: store.SiteSpacesWithSpaces); the caller's token is
	// answered from the caller cache: no write since it was filled.
	if counts["small"] != counts["large"] || counts["small"] != 4 {
		t.Errorf("GraphQL tree: %v queries for the small tree, %v for the large one (want 4 each)", counts["small"], counts["large"])
	}
	// The same plus the site's site space count (the spaces' counts of
	// change requests and comments are on their rows; alice administers the
	// organization: her role on the spaces needs no query) and its
	// customization (the site's settings and its site spaces' overrides,
	// one query).
	if counts["small REST"] != counts["large REST"] || counts["small REST"] != 6 {
		t.Errorf("REST published site: %v and %v queries (want 6 each)", counts["small REST"], counts["large REST"])
	}
	// A member who is not an admin costs the query that decides their role
	// on the spaces (their permissions objects), whatever the tree's size.
	bob := env.NewUser("Bob")
	bob.Join(org, store.RoleEdit)
	// His token's first use, and any in-flight invalidation of the caller
	// cache after his joining, cost a query more: the steady state is what
	// is asserted.
	n := 0
	for range 50 {
		res := bob.Do("GET", "/v1/orgs/"+org+"/sites/"+large+"/published", nil).Expect(http.StatusOK)
		if n = atoi(t, res.Header.Get("X-SQL-Queries")); n <= 7 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n != 7 {
		t.Errorf("REST published site for an editor: %d queries (want 7)", n)
	}
}

// Many concurrent writers of one site's structure leave a consistent order:
// every create succeeds and no two items share a position.
func TestConcurrentStructureWrites(t *testing.T) {
	t.Parallel()
	env := servertest.New(t)
	alice := env.NewUser("Alice")
	org := alice.NewOrg("Acme")
	const n = 12
	var spaces []string
	for i := range 2 * n {
		spaces = append(spaces, alice.Do("POST", "/v1/orgs/"+org+"/spaces", map[string]any{"title": fmt.Sprintf("S%d", i)}).
			Expect(http.StatusCreated).String("id"))
	}
	site := alice.Do("POST", "/v1/orgs/"+org+"/sites", map[string]any{"title": "Busy", "spaces": spaces[:1]}).Expect(http.StatusCreated).String("id")
	base := "/v1/orgs/" + org + "/sites/" + site
	first := alice.Do("POST", base+"/sections", map[string]any{"spaceId": spaces[1], "title": "First"}).Expect(http.StatusCreated).String("id")

	var wg sync.WaitGroup
	statuses := make(chan int, 2*n)
	for i := 2; i < 2*n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var res *servertest.Response
			if i%2 == 0 {
				res = alice.Do("POST", base+"/sections", map[string]any{"spaceId": spaces[i], "title": fmt.Sprintf("Section %d", i)})
			} else {
				res = alice.Do("POST", base+"/site-spaces", map[string]any{"spaceId": spaces[i], "sectionId": first})
			}
			statuses <- res.Status
		}()
	}
	wg.Wait()
	close(statuses)
	for s := range statuses {
		if s != http.StatusCreated {
			t.Fatalf("a concurrent create answered %d", s)
		}
	}

	// Positions are unique per container, across sections and groups.
	var dups int
	err := env.DB.QueryRowContext(context.Background(), `
		SELECT count(*) FROM (
			SELECT 1 FROM (
				SELECT site_id, group_id, position FROM site_sections
				UNION ALL SELECT site_id, parent_group_id, position FROM site_section_groups
			) p GROUP BY site_id, group_id, position HAVING count(*) > 1
		) d`).Scan(&dups)
	if err != nil || dups > 0 {
		t.Fatalf("%d duplicate section positions (%v)", dups, err)
	}
	err = env.DB.QueryRowContext(context.Background(),
		`SELECT count(*) FROM (SELECT 1 FROM site_spaces GROUP BY site_id, section_id, position HAVING count(*) > 1) d`).Scan(&dups)
	if err != nil || dups > 0 {
		t.Fatalf("%d duplicate site space positions (%v)", dups, err)
	}
	sections := alice.Do("GET", base+"/sections", nil).Expect(http.StatusOK).JSON()
	if sections["count"] != float64(2+(2*n-2)/2) {
		t.Fatalf("%v sections", sections["count"])
	}
	var firstSection map[string]any
	defaults := 0
	for _, it := range sections["items"].([]any) {
		s := it.(map[string]any)
		if s["id"] == first {
			firstSection = s
		}
		if s["default"] == true {
			defaults++
		}
	}
	if defaults != 1 || len(firstSection["siteSpaces"].([]any)) != 1+(2*n-2)/2 {
		t.Fatalf("%d default sections; first section has %d site spaces", defaults, len(firstSection["siteSpaces"].([]any)))
	}
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	var n int
	if _, err := fmt.Sscanf(s, "%d", &n); err != nil {
		t.Fatalf("not a number: %q", s)
	}
	return n
}

// The spaces of a site's tree are read as summaries when the operation asks
// them for nothing more (graph/projection.go). Whatever a query selects of
// them, each must be what a read of that space by id answers.
func TestSiteSpaceSpacesMatchSpaceReads(t *testing.T) {
	t.Parallel()
	env := servertest.New(t)
	alice := env.NewUser("Alice")
	org := alice.NewOrg("Acme")
	site := buildSiteTree(t, env, alice, org, 1, 2, 2, 1)
	// Spaces with every summary field set, and more that is not.
	spaces := alice.Do("GET", "/v1/orgs/"+org+"/spaces", nil).Expect(http.StatusOK).JSON()["items"].([]any)
	for i, s := range spaces {
		id := s.(map[string]any)["id"].(string)
		body := map[string]any{"emoji": "1f4da", "visibility": "public", "editMode": "locked", "language": "fr", "defaultLevel": "read"}
		if i%2 == 1 {
			body = map[string]any{"title": fmt.Sprintf("Space \"%d\" <b>", i)}
		}
		alice.Do("PATCH", "/v1/spaces/"+id, body).Expect(http.StatusOK)
	}

	const summary = "__typename object id title emoji visibility organization parent urls { app location published public icon }"
	const whole = summary + " createdAt updatedAt editMode language defaultLevel revision comments changeRequests mergeRules { type } permissions { view edit admin }"
	for _, tc := range []struct{ name, query string }{
		{"summary fields", `query($o: ID!, $s: ID!) { site(organizationId: $o, id: $s) { structure { structure {
			... on SiteSection { siteSpaces { title space { ` + summary + ` } } }
			... on SiteSectionGroup { children { ... on SiteSection { siteSpaces { title space { ` + summary + ` } } } } } } } } }`},
		{"whole spaces", `query($o: ID!, $s: ID!) { site(organizationId: $o, id: $s) { structure { structure {
			... on SiteSection { siteSpaces { title space { ` + whole + ` } } }
			... on SiteSectionGroup { children { ... on SiteSection { siteSpaces { title space { ` + whole + ` } } } } } } } } }`},
		{"summaries in the tree, more in the list", `query($o: ID!, $s: ID!) { site(organizationId: $o, id: $s) {
			structure { structure { ... on SiteSection { siteSpaces { title space { id title } } } } }
			siteSpaceList { items { title space { ` + whole + ` } } } } }`},
		{"more through a fragment", `query($o: ID!, $s: ID!) { site(organizationId: $o, id: $s) { structure { structure {
			... on SiteSection { siteSpaces { title space { ...S } } }
			... on SiteSectionGroup { children { ... on SiteSection { siteSpaces { title space { id title } } } } } } } } }
			fragment S on Space { ` + whole + ` }`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := alice.GraphQL(tc.query, map[string]any{"o": org, "s": site})
			if len(out.Errors) > 0 {
				t.Fatalf("%+v", out.Errors)
			}
			var data any
			if err := json.Unmarshal(out.Data, &data); err != nil {
				t.Fatal(err)
			}
			found := 0
			var check func(v any)
			check = func(v any) {
				switch v := v.(type) {
				case []any:
					for _, x := range v {
						check(x)
					}
				case map[string]any:
					if space, ok := v["space"].(map[string]any); ok {
						found++
						if v["title"] != space["title"] {
							t.Errorf("site space title %v, its space's %v", v["title"], space["title"])
						}
						byID := alice.GraphQL(`query($id: ID!) { space(id: $id) { `+whole+` } }`, map[string]any{"id": space["id"]})
						var want struct{ Space map[string]any }
						if err := json.Unmarshal(byID.Data, &want); err != nil || len(byID.Errors) > 0 {
							t.Fatalf("space %v: %v %+v", space["id"], err, byID.Errors)
						}
						for k, v := range space {
							if !reflect.DeepEqual(v, want.Space[k]) {
								t.Errorf("space %v: %s is %v in the tree, %v read by id", space["id"], k, v, want.Space[k])
							}
						}
						return
					}
					for _, x := range v {
						check(x)
					}
				}
			}
			check(data)
			if found < 4 {
				t.Fatalf("%d spaces in %s", found, out.Data)
			}
		})
	}
}

// A list of sites selecting their trees, down to the spaces their site
// spaces publish (their summaries, or more), costs as many queries for five
// sites as for one: each level is read once for the whole list
// (primeSites).
func TestSiteListTreesCostTheSameForMoreSites(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Options{Debug: true})
	alice := env.NewUser("Alice")
	org := alice.NewOrg("Acme")
	query := func(space string) string {
		return `query($o: ID!) { organization(id: $o) { sites { items { id structure { structure {
		__typename
		... on SiteSectionGroup { children { ... on SiteSection { siteSpaces { path space { ` + space + ` } } } } }
		... on SiteSection { siteSpaces { path space { ` + space + ` } } }
	} } } } } }`
	}
	spaces := []string{"title", "title editMode"} // the summary, and more
	count := func(space string, sites int) float64 {
		out := alice.GraphQL(query(space), map[string]any{"o": org})
		if len(out.Errors) > 0 {
			t.Fatalf("%+v", out.Errors)
		}
		var data struct {
			Organization struct {
				Sites struct{ Items []struct{ ID string } }
			}
		}
		if err := json.Unmarshal(out.Data, &data); err != nil {
			t.Fatal(err)
		}
		if n := len(data.Organization.Sites.Items); n != sites {
			t.Fatalf("%d sites listed, want %d", n, sites)
		}
		return out.Extensions["stats"].(map[string]any)["sqlQueries"].(float64)
	}
	buildSiteTree(t, env, alice, org, 1, 2, 2, 1)
	one := map[string]float64{}
	for _, space := range spaces {
		one[space] = count(space, 1)
	}
	for range 4 {
		buildSiteTree(t, env, alice, org, 1, 2, 2, 1)
	}
	for _, space := range spaces {
		if five := count(space, 5); five != one[space] {
			t.Errorf("space { %s }: a list of 5 sites' trees costs %v queries, of 1 site's %v", space, five, one[space])
		}
	}
}
