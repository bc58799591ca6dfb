package wholeserver_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/docsapi/docsapi/cmd/docsapi/server/servertest"
	"github.com/docsapi/docsapi/store"
)

// A page of comments costs the same number of SQL queries for 2 comments
// as for 20 (no per-comment read of its space, author, replies or
// reactions), on a space's content and on a change request, for an admin
// and for a member whose role is worked out from the organization's access.
func TestCommentPageQueryCount(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Options{Debug: true})
	alice := env.NewUser("Alice")
	org := alice.NewOrg("Acme")
	bob := env.NewUser("Bob")
	bob.Join(org, store.RoleComment)

	// lists are the comment lists of a space with n comments, on its
	// content and on a change request; every third comment has a reply and
	// a reaction, and the authors alternate.
	lists := func(n int) []string {
		space := alice.Do("POST", "/v1/orgs/"+org+"/spaces", map[string]any{"title": fmt.Sprint(n)}).Expect(http.StatusCreated).String("id")
		cr := alice.Do("POST", "/v1/spaces/"+space+"/change-requests", `{"subject":"Draft"}`).Expect(http.StatusCreated).String("id")
		bases := []string{"/v1/spaces/" + space + "/comments", "/v1/spaces/" + space + "/change-requests/" + cr + "/comments"}
		for _, base := range bases {
			for i := range n {
				author := []*servertest.User{alice, bob}[i%2]
				id := author.Do("POST", base, map[string]any{"body": map[string]any{"markdown": fmt.Sprint("Comment ", i)}}).
					Expect(http.StatusOK).String("id")
				if i%3 == 0 {
					alice.Do("POST", base+"/"+id+"/replies", `{"body":{"markdown":"Reply"}}`).Expect(http.StatusOK)
					bob.Do("PUT", base+"/"+id, `{"addedReactions":["+1"]}`).Expect(http.StatusOK)
				}
			}
		}
		return bases
	}
	few, many := lists(2), lists(20)

	// queries is the steady-state count of a read (the caller cache and
	// access snapshots filled: a write just made may invalidate them once).
	queries := func(u *servertest.User, path string, items int) int {
		t.Helper()
		least := 0
		for range 3 {
			res := u.Do("GET", path, nil).Expect(http.StatusOK)
			if got := len(res.JSON()["items"].([]any)); got != items {
				t.Fatalf("%s: %d items, want %d", path, got, items)
			}
			if n := atoi(t, res.Header.Get("X-SQL-Queries")); least == 0 || n < least {
				least = n
			}
			time.Sleep(5 * time.Millisecond)
		}
		return least
	}
	for _, u := range []*servertest.User{alice, bob} {
		for i, what := range []string{"space content", "change request"} {
			a, b := queries(u, few[i], 2), queries(u, many[i], 20)
			t.Logf("%s, %s: %d queries for 2 comments, %d for 20", u.Email, what, a, b)
			if a != b {
				t.Errorf("%s, comments on the %s: %d queries for 2 comments, %d for 20", u.Email, what, a, b)
			}
		}
	}
}
