package wholeserver_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"testing"

	"github.com/docsapi/docsapi/cmd/docsapi/server/servertest"
	"github.com/docsapi/docsapi/store"
)

// countIsItems checks that a REST answer that is a list says, in `count`,
// the number of items in it: "number of items in this response" (the
// specification, 1.2). Other answers pass. The route-table tests apply it
// to every answer: TestReferenceShapes and TestGitBookClient (through
// answerProblems), and every GET of TestAuthorizationWalk.
func countIsItems(body []byte) error {
	var list struct {
		Count *float64          `json:"count"`
		Items *[]map[string]any `json:"items"`
	}
	if json.Unmarshal(body, &list) != nil || list.Count == nil || list.Items == nil {
		return nil
	}
	if int(*list.Count) != len(*list.Items) {
		return fmt.Errorf("count %v, but %d items in the response", *list.Count, len(*list.Items))
	}
	return nil
}

// TestListCountIsTheItemsOfThePage: a list's `count` is the number of items
// in the response (the specification, 1.2), on every page, over REST and
// GraphQL, whoever reads it; the pages add up to the list.
func TestListCountIsTheItemsOfThePage(t *testing.T) {
	t.Parallel()
	env := servertest.New(t)
	alice := env.NewUser("Alice")
	org := alice.NewOrg("Acme")
	bob := env.NewUser("Bob")
	bob.Join(org, store.RoleRead)

	collection := alice.Do("POST", "/v1/orgs/"+org+"/collections", `{"title":"Guides"}`).Expect(http.StatusCreated).String("id")
	var spaces []string
	for i := range 25 {
		body := map[string]any{"title": fmt.Sprint("Space ", i)}
		if i < 10 {
			body["parent"] = collection
		}
		spaces = append(spaces, alice.Do("POST", "/v1/orgs/"+org+"/spaces", body).Expect(http.StatusCreated).String("id"))
	}
	// Bob (read role) loses 7 of the 10 spaces of the collection and 10 of
	// the 15 others: a guest level gives no one anything.
	for _, s := range append(spaces[3:10:10], spaces[15:]...) {
		alice.Do("PATCH", "/v1/spaces/"+s, map[string]any{"defaultLevel": nil}).Expect(http.StatusOK)
	}
	space := spaces[0]
	for i := range 25 {
		alice.Do("POST", "/v1/spaces/"+space+"/comments", map[string]any{"body": map[string]any{"markdown": fmt.Sprint("Comment ", i)}}).Expect(http.StatusOK)
	}
	for i := range 12 {
		alice.Do("POST", "/v1/spaces/"+space+"/change-requests", map[string]any{"subject": fmt.Sprint("Change ", i)}).Expect(http.StatusCreated)
	}

	tests := []struct {
		name, list string
		reader     *servertest.User
		items      int // over all the pages
	}{
		{"spaces of an organization", "/v1/orgs/" + org + "/spaces", alice, 25},
		{"spaces of an organization, restricted", "/v1/orgs/" + org + "/spaces", bob, 8},
		{"spaces of a collection", "/v1/collections/" + collection + "/spaces", alice, 10},
		{"spaces of a collection, restricted", "/v1/collections/" + collection + "/spaces", bob, 3},
		{"a member's spaces", "/v1/orgs/" + org + "/members/" + bob.ID + "/spaces", alice, 8},
		{"comments of a space", "/v1/spaces/" + space + "/comments", bob, 25},
		{"change requests, by status", "/v1/spaces/" + space + "/change-requests?status=open", alice, 12},
		{"change requests, by another status", "/v1/spaces/" + space + "/change-requests?status=merged", alice, 0},
		{"members", "/v1/orgs/" + org + "/members", alice, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seen, query := 0, "limit=10"
			for pages := 0; ; pages++ {
				if pages > 5 {
					t.Fatalf("more pages than items")
				}
				sep := "?"
				if u, _ := url.Parse(tt.list); u.RawQuery != "" {
					sep = "&"
				}
				res := tt.reader.Do("GET", tt.list+sep+query, nil).Expect(http.StatusOK)
				if err := countIsItems(res.Body); err != nil {
					t.Errorf("page %d: %v", pages+1, err)
				}
				page := res.JSON()
				items := len(page["items"].([]any))
				if page["count"] != float64(items) {
					t.Errorf("page %d: count %v, %d items", pages+1, page["count"], items)
				}
				seen += items
				next, _ := page["next"].(map[string]any)
				if next == nil {
					break
				}
				query = "limit=10&page=" + url.QueryEscape(next["page"].(string))
			}
			if seen != tt.items {
				t.Errorf("%d items over the pages, want %d", seen, tt.items)
			}
		})
	}

	// GraphQL: count is the page's items, its edges alike.
	for _, reader := range []*servertest.User{alice, bob} {
		t.Run("GraphQL spaces, "+reader.Email, func(t *testing.T) {
			var after any
			for pages := 0; pages < 4; pages++ {
				res := reader.GraphQL(`query($org: ID!, $after: String) { organization(id: $org) {
					spaces(first: 10, after: $after) { count items { id } pageInfo { hasNextPage endCursor } edges { node { id } } } } }`,
					map[string]any{"org": org, "after": after})
				if len(res.Errors) > 0 {
					t.Fatal(res.Errors)
				}
				var data struct {
					Organization struct {
						Spaces struct {
							Count    int
							Items    []struct{ ID string }
							Edges    []struct{ Node struct{ ID string } }
							PageInfo struct {
								HasNextPage bool
								EndCursor   string
							}
						}
					}
				}
				if err := json.Unmarshal(res.Data, &data); err != nil {
					t.Fatal(err)
				}
				list := data.Organization.Spaces
				if list.Count != len(list.Items) || list.Count != len(list.Edges) {
					t.Errorf("page %d: count %d, %d items, %d edges", pages+1, list.Count, len(list.Items), len(list.Edges))
				}
				if !list.PageInfo.HasNextPage {
					break
				}
				after = list.PageInfo.EndCursor
			}
		})
	}
}

// TestListPageRunsNoCountQuery: a list's `count` costs no query. A REST
// list page (whose documents select count) runs the queries of the same
// GraphQL page without it, and a page costs the same in an organization of
// 5 spaces and of 40, for an admin and for a member whose spaces are
// checked one by one.
func TestListPageRunsNoCountQuery(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Options{Debug: true})
	alice := env.NewUser("Alice")
	small, large := alice.NewOrg("Small"), alice.NewOrg("Large")
	bob := env.NewUser("Bob")
	for org, n := range map[string]int{small: 5, large: 40} {
		bob.Join(org, store.RoleRead)
		for i := range n {
			alice.Do("POST", "/v1/orgs/"+org+"/spaces", map[string]any{"title": fmt.Sprint("Space ", i)}).Expect(http.StatusCreated)
		}
	}
	// Each reader's first request fills the caller cache: not measured.
	alice.Do("GET", "/v1/orgs/"+small, nil).Expect(http.StatusOK)
	bob.Do("GET", "/v1/orgs/"+small, nil).Expect(http.StatusOK)

	// The fewer of two reads: a cache (the caller's) may be emptied between
	// requests by a late notification of the set-up's writes.
	rest := func(u *servertest.User, org string) int {
		q := func() int {
			return atoi(t, u.Do("GET", "/v1/orgs/"+org+"/spaces?limit=2", nil).Expect(http.StatusOK).Header.Get("X-SQL-Queries"))
		}
		return min(q(), q())
	}
	graphQL := func(u *servertest.User, org, selection string) int {
		return graphQLQueries(t, u, `query($org: ID!) { organization(id: $org) { spaces(limit: 2) { `+selection+` } } }`, map[string]any{"org": org})
	}
	for _, reader := range []*servertest.User{alice, bob} {
		without := graphQL(reader, small, "items { id }")
		if with := graphQL(reader, small, "items { id } count"); with != without {
			t.Errorf("%s: %d queries without count, %d with it", reader.Email, without, with)
		}
		if r := rest(reader, small); r != without {
			t.Errorf("%s: a REST page costs %d queries, the GraphQL page without count %d", reader.Email, r, without)
		}
		if s, l := rest(reader, small), rest(reader, large); s != l {
			t.Errorf("%s: a REST page costs %d queries among 5 spaces, %d among 40", reader.Email, s, l)
		}
	}
}

// graphQLQueries is the number of SQL queries a GraphQL operation costs u:
// the fewer of two runs (a cache, the caller's, may be emptied between
// requests by a late notification of a test's set-up).
func graphQLQueries(t *testing.T, u *servertest.User, query string, vars map[string]any) int {
	t.Helper()
	q := func() int {
		res := u.DoWith("POST", "/graphql", map[string]any{"query": query, "variables": vars}, nil).Expect(http.StatusOK)
		if errs := res.JSON()["errors"]; errs != nil {
			t.Fatalf("%s: %v", query, errs)
		}
		return atoi(t, res.Header.Get("X-SQL-Queries"))
	}
	return min(q(), q())
}
