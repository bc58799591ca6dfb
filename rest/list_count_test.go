package rest_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"testing"

	"github.com/docsapi/docsapi/cmd/docsapi/server/servertest"
	"github.com/docsapi/docsapi/store"
)

// TestListCountIsTheTotal: a list's `count` is the number of objects of the
// whole list (GitBook's "Total count of objects in the list"), the same on
// every page, over REST and GraphQL; with the list's filters; and as the
// caller sees the list: a member who can read 3 of 10 spaces counts 3 (a
// count is no oracle for the rest), another tenant gets nothing.
func TestListCountIsTheTotal(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Options{Debug: true})
	alice := env.NewUser("Alice")
	org := alice.NewOrg("Acme")
	bob := env.NewUser("Bob")
	bob.Join(org, store.RoleRead)
	carol := env.NewUser("Carol")
	carol.NewOrg("Other")

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
	for i := range 24 {
		c := alice.Do("POST", "/v1/orgs/"+org+"/collections", map[string]any{"title": fmt.Sprint("Collection ", i)}).Expect(http.StatusCreated).String("id")
		if i < 4 {
			alice.Do("PATCH", "/v1/collections/"+c, map[string]any{"defaultLevel": nil}).Expect(http.StatusOK)
		}
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
		want       int
	}{
		{"spaces of an organization", "/v1/orgs/" + org + "/spaces", alice, 25},
		{"spaces of an organization, restricted", "/v1/orgs/" + org + "/spaces", bob, 8},
		{"spaces of a collection", "/v1/collections/" + collection + "/spaces", alice, 10},
		{"spaces of a collection, restricted", "/v1/collections/" + collection + "/spaces", bob, 3},
		{"a member's spaces", "/v1/orgs/" + org + "/members/" + bob.ID + "/spaces", alice, 8},
		{"collections", "/v1/orgs/" + org + "/collections", alice, 25},
		{"collections, restricted", "/v1/orgs/" + org + "/collections", bob, 21},
		{"comments of a space", "/v1/spaces/" + space + "/comments", alice, 25},
		{"comments of a space, read by a member", "/v1/spaces/" + space + "/comments", bob, 25},
		{"change requests, by status", "/v1/spaces/" + space + "/change-requests?status=open", alice, 12},
		{"change requests, by another status", "/v1/spaces/" + space + "/change-requests?status=merged", alice, 0},
		{"change requests, by creator", "/v1/spaces/" + space + "/change-requests?status=open&creator=" + bob.ID, alice, 0},
		{"members", "/v1/orgs/" + org + "/members", alice, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// REST: limit 10, every page until the last; count is the total on each.
			seen, query := 0, "limit=10"
			for pages := 0; ; pages++ {
				if pages > 5 {
					t.Fatalf("more pages than items")
				}
				sep := "?"
				if u, _ := url.Parse(tt.list); u.RawQuery != "" {
					sep = "&"
				}
				page := tt.reader.Do("GET", tt.list+sep+query, nil).Expect(http.StatusOK).JSON()
				if page["count"] != float64(tt.want) {
					t.Errorf("page %d: count %v, want %d", pages+1, page["count"], tt.want)
				}
				seen += len(page["items"].([]any))
				next, _ := page["next"].(map[string]any)
				if next == nil {
					break
				}
				query = "limit=10&page=" + url.QueryEscape(next["page"].(string))
			}
			if seen != tt.want {
				t.Errorf("%d items over the pages, count says %d", seen, tt.want)
			}
		})
	}

	// GraphQL: the same totals, on every page.
	graphQLTests := []struct {
		name   string
		reader *servertest.User
		want   int
	}{{"admin", alice, 25}, {"restricted member", bob, 8}}
	for _, tt := range graphQLTests {
		t.Run("GraphQL spaces, "+tt.name, func(t *testing.T) {
			var after any
			for pages := 0; pages < 3; pages++ {
				res := tt.reader.GraphQL(`query($org: ID!, $after: String) { organization(id: $org) {
					spaces(first: 10, after: $after) { count pageInfo { hasNextPage endCursor } edges { node { id } } } } }`,
					map[string]any{"org": org, "after": after})
				if len(res.Errors) > 0 {
					t.Fatal(res.Errors)
				}
				var data struct {
					Organization struct {
						Spaces struct {
							Count    int
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
				if list.Count != tt.want {
					t.Errorf("page %d: count %d, want %d", pages+1, list.Count, tt.want)
				}
				if !list.PageInfo.HasNextPage {
					break
				}
				after = list.PageInfo.EndCursor
			}
		})
	}

	// Another tenant counts nothing of the organization: it does not exist
	// for them, and their own lists count their own objects only.
	carol.Do("GET", "/v1/orgs/"+org+"/spaces", nil).Expect(http.StatusNotFound)
	carol.Do("GET", "/v1/collections/"+collection+"/spaces", nil).Expect(http.StatusNotFound)
	carol.Do("GET", "/v1/spaces/"+space+"/comments", nil).Expect(http.StatusNotFound)
	res := carol.GraphQL(`query($org: ID!) { organization(id: $org) { spaces { count } } }`, map[string]any{"org": org})
	if len(res.Errors) == 0 || string(res.Data) != "null" && string(res.Data) != `{"organization":null}` {
		t.Errorf("another tenant's count: %s %v", res.Data, res.Errors)
	}
	if got := carol.Do("GET", "/v1/orgs", nil).Expect(http.StatusOK).JSON()["count"]; got != 1.0 {
		t.Errorf("another tenant's organizations: count %v, want 1", got)
	}
}

// TestListCountCostsAQueryOnlyWhenAsked: a GraphQL list whose count is not
// selected issues no count query; selecting it adds one, for an admin (the
// store's count) and a restricted member (the organization's access rows).
func TestListCountCostsAQueryOnlyWhenAsked(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Options{Debug: true})
	alice := env.NewUser("Alice")
	org := alice.NewOrg("Acme")
	bob := env.NewUser("Bob")
	bob.Join(org, store.RoleRead)
	for i := range 5 {
		alice.Do("POST", "/v1/orgs/"+org+"/spaces", map[string]any{"title": fmt.Sprint("Space ", i)}).Expect(http.StatusCreated)
	}
	// Each reader's first request fills the caller cache: not measured.
	alice.Do("GET", "/v1/orgs/"+org, nil).Expect(http.StatusOK)
	bob.Do("GET", "/v1/orgs/"+org, nil).Expect(http.StatusOK)

	queries := func(u *servertest.User, selection string) int {
		t.Helper()
		res := u.DoWith("POST", "/graphql", map[string]any{
			"query":     `query($org: ID!) { organization(id: $org) { spaces(limit: 2) { ` + selection + ` } } }`,
			"variables": map[string]any{"org": org},
		}, nil).Expect(http.StatusOK)
		if errs, _ := res.JSON()["errors"]; errs != nil {
			t.Fatalf("%s: %v", selection, errs)
		}
		return atoi(t, res.Header.Get("X-SQL-Queries"))
	}
	for _, reader := range []*servertest.User{alice, bob} {
		without := queries(reader, "items { id }")
		with := queries(reader, "items { id } count")
		countOnly := queries(reader, "count")
		if with != without+1 {
			t.Errorf("%s: %d queries without count, %d with it (want one more)", reader.Email, without, with)
		}
		if countOnly > with {
			t.Errorf("%s: %d queries for the count alone, %d with the items", reader.Email, countOnly, with)
		}
	}
}
