package wholeserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docsapi/docsapi/cmd/docsapi/server/servertest"
	"github.com/docsapi/docsapi/store"
)

// listed pages through a GraphQL list as u, 3 items a page, and returns the
// items it listed and the list's totalCount (the same on every page, or
// the test fails). query takes $after and any vars; path leads from data
// to the list.
func listed(t *testing.T, u *servertest.User, query string, vars map[string]any, path ...string) (items, total int) {
	t.Helper()
	total = -1
	var after any
	for pages := 0; ; pages++ {
		if pages > 100 {
			t.Fatalf("more than 100 pages of 3")
		}
		v := map[string]any{"after": after}
		for k, x := range vars {
			v[k] = x
		}
		res := u.GraphQL(query, v)
		if len(res.Errors) > 0 {
			t.Fatalf("%s: %v", strings.Join(path, "."), res.Errors)
		}
		var data any
		if err := json.Unmarshal(res.Data, &data); err != nil {
			t.Fatal(err)
		}
		for _, p := range path {
			data = data.(map[string]any)[p]
		}
		var list struct {
			Count      int
			TotalCount int
			PageInfo   struct {
				HasNextPage bool
				EndCursor   string
			}
		}
		raw, _ := json.Marshal(data)
		if err := json.Unmarshal(raw, &list); err != nil {
			t.Fatal(err)
		}
		if total >= 0 && list.TotalCount != total {
			t.Errorf("%s: totalCount %d on page %d, %d before", strings.Join(path, "."), list.TotalCount, pages+1, total)
		}
		total = list.TotalCount
		items += list.Count
		if !list.PageInfo.HasNextPage {
			return items, total
		}
		after = list.PageInfo.EndCursor
	}
}

const listPage = `count totalCount pageInfo { hasNextPage endCursor }`

// totalsFixture is an organization whose spaces and collections each
// reader sees a different part of, by levels, grants to users and teams,
// and in-collection visibility.
type totalsFixture struct {
	env                *servertest.Env
	org                string
	alice, bob, carol  *servertest.User // admin; read role; guest
	dave               *servertest.User // another tenant's admin
	collections        []string
	team               string
	root, c1, c2, nest []string // spaces at the root, in c1, in c2 and in c3 (nested in c2)
}

func newTotalsFixture(t *testing.T, env *servertest.Env) *totalsFixture {
	f := &totalsFixture{env: env, alice: env.NewUser("Alice"), bob: env.NewUser("Bob"), carol: env.NewUser("Carol"), dave: env.NewUser("Dave")}
	f.org = f.alice.NewOrg("Acme")
	f.dave.NewOrg("Other")
	f.bob.Join(f.org, store.RoleRead)
	f.carol.Join(f.org, "")
	a := f.alice
	collection := func(body map[string]any) string {
		c := a.Do("POST", "/v1/orgs/"+f.org+"/collections", body).Expect(http.StatusCreated).String("id")
		f.collections = append(f.collections, c)
		return c
	}
	space := func(parent string, i int) string {
		body := map[string]any{"title": fmt.Sprint("Space ", i)}
		if parent != "" {
			body["parent"] = parent
		}
		return a.Do("POST", "/v1/orgs/"+f.org+"/spaces", body).Expect(http.StatusCreated).String("id")
	}
	c1 := collection(map[string]any{"title": "C1"})
	c2 := collection(map[string]any{"title": "C2"})
	a.Do("PATCH", "/v1/collections/"+c2, map[string]any{"defaultLevel": nil}).Expect(http.StatusOK)
	c3 := collection(map[string]any{"title": "C3"})
	a.Do("POST", "/v1/collections/"+c3+"/move", map[string]any{"parent": c2}).Expect(http.StatusOK)
	c4 := collection(map[string]any{"title": "C4"})
	a.Do("PATCH", "/v1/collections/"+c4, map[string]any{"defaultLevel": "read"}).Expect(http.StatusOK)
	for i := range 10 {
		f.root = append(f.root, space("", i))
		f.c1 = append(f.c1, space(c1, i))
	}
	for i := range 4 {
		f.c2 = append(f.c2, space(c2, i))
		f.nest = append(f.nest, space(c3, i))
	}
	space(c4, 0) // a level set on the collection: every member reads it, guests too
	// At the root and in c1, half the spaces are guests' (nobody's but
	// the admins' and those granted); one of c1's is in-collection
	// (whoever reads c1 reads it); one at the root is deleted.
	for _, s := range append(f.root[5:], f.c1[5:]...) {
		a.Do("PATCH", "/v1/spaces/"+s, map[string]any{"defaultLevel": nil}).Expect(http.StatusOK)
	}
	a.Do("PATCH", "/v1/spaces/"+f.c1[9], map[string]any{"visibility": "in-collection"}).Expect(http.StatusOK)
	a.Do("DELETE", "/v1/spaces/"+f.root[0], nil).Expect(http.StatusNoContent)
	// Bob: a grant on a guests' space at the root; his team's on c2 (and
	// so on c3 within it) and on a space of c1 he reads anyway.
	a.Do("POST", "/v1/spaces/"+f.root[6]+"/permissions", map[string]any{"role": "read", "users": []string{f.bob.ID}}).Expect(http.StatusNoContent)
	f.team = a.Do("PUT", "/v1/orgs/"+f.org+"/teams", map[string]any{"title": "Writers", "members": []string{f.bob.ID}}).Expect(http.StatusCreated).String("id")
	a.Do("POST", "/v1/collections/"+c2+"/permissions", map[string]any{"role": "edit", "teams": []string{f.team}}).Expect(http.StatusNoContent)
	a.Do("POST", "/v1/spaces/"+f.c1[0]+"/permissions", map[string]any{"role": "edit", "teams": []string{f.team}}).Expect(http.StatusNoContent)
	// Carol, a guest: a grant on c1 (all its spaces) and on one of c3's.
	a.Do("POST", "/v1/collections/"+c1+"/permissions", map[string]any{"role": "read", "users": []string{f.carol.ID}}).Expect(http.StatusNoContent)
	a.Do("POST", "/v1/spaces/"+f.nest[1]+"/permissions", map[string]any{"role": "comment", "users": []string{f.carol.ID}}).Expect(http.StatusNoContent)
	return f
}

// TestTotalCountIsWhatTheCallerCanList: the totalCount of every list of
// spaces and collections is the number of items the caller can list, page
// after page: an admin's every live space, a member's those their role,
// levels, grants (their own and their teams') and in-collection visibility
// open, a guest's those granted. Another tenant reads nothing.
func TestTotalCountIsWhatTheCallerCanList(t *testing.T) {
	t.Parallel()
	f := newTotalsFixture(t, servertest.New(t))
	orgSpaces := `query($org: ID!, $after: String) { organization(id: $org) { spaces(first: 3, after: $after) { ` + listPage + ` } } }`
	collections := `query($org: ID!, $after: String, $nested: Boolean) { organization(id: $org) { collections(first: 3, after: $after, nested: $nested) { ` + listPage + ` } } }`
	collectionSpaces := `query($c: ID!, $after: String) { collection(id: $c) { spaces(first: 3, after: $after) { ` + listPage + ` } } }`
	memberSpaces := `query($org: ID!, $user: ID!, $after: String) { organization(id: $org) { member(userId: $user) { spaces contentPermissions(first: 3, after: $after) { ` + listPage + ` } } } }`

	// What each reader lists, worked out by hand from the fixture.
	want := map[*servertest.User]int{
		// 9 live at the root, 10 in c1, 4 in c2, 4 in c3, 1 in c4.
		f.alice: 28,
		// The root's 4 live spaces of the member level and the one granted;
		// c1's 5 and the in-collection one; c2's and c3's through the
		// team; c4's.
		f.bob: 5 + 6 + 8 + 1,
		// c1's 10 through the grant, one of c3's, c4's.
		f.carol: 12,
	}
	for _, u := range []*servertest.User{f.alice, f.bob, f.carol} {
		t.Run(u.Email, func(t *testing.T) {
			items, total := listed(t, u, orgSpaces, map[string]any{"org": f.org}, "organization", "spaces")
			if items != total || total != want[u] {
				t.Errorf("the organization's spaces: %d listed, totalCount %d, want %d", items, total, want[u])
			}
			for _, nested := range []bool{true, false} {
				items, total := listed(t, u, collections, map[string]any{"org": f.org, "nested": nested}, "organization", "collections")
				if items != total {
					t.Errorf("collections (nested %v): %d listed, totalCount %d", nested, items, total)
				}
			}
			for _, c := range f.collections {
				res := u.GraphQL(`query($c: ID!) { collection(id: $c) { id } }`, map[string]any{"c": c})
				if len(res.Errors) > 0 {
					continue // not the reader's
				}
				items, total := listed(t, u, collectionSpaces, map[string]any{"c": c}, "collection", "spaces")
				if items != total {
					t.Errorf("the spaces of collection %s: %d listed, totalCount %d", c, items, total)
				}
			}
		})
	}
	// A member's spaces, as the admin and as the member see them: those
	// both can read; the member's `spaces` says the same.
	for _, u := range []*servertest.User{f.alice, f.bob} {
		items, total := listed(t, u, memberSpaces, map[string]any{"org": f.org, "user": f.bob.ID}, "organization", "member", "contentPermissions")
		if items != total || total != want[f.bob] {
			t.Errorf("Bob's spaces as %s: %d listed, totalCount %d, want %d", u.Email, items, total, want[f.bob])
		}
		res := u.GraphQL(`query($org: ID!, $user: ID!) { organization(id: $org) { member(userId: $user) { spaces } } }`, map[string]any{"org": f.org, "user": f.bob.ID})
		if !strings.Contains(string(res.Data), fmt.Sprintf(`"spaces":%d`, want[f.bob])) {
			t.Errorf("Bob's spaces as %s: %s %v", u.Email, res.Data, res.Errors)
		}
	}
	// As Bob sees them, Alice's spaces are Bob's.
	if items, total := listed(t, f.bob, memberSpaces, map[string]any{"org": f.org, "user": f.alice.ID}, "organization", "member", "contentPermissions"); items != total || total != want[f.bob] {
		t.Errorf("Alice's spaces as Bob: %d listed, totalCount %d, want %d", items, total, want[f.bob])
	}
	// The team's spaces: c2's and c3's, and c1's one granted to it.
	res := f.alice.GraphQL(`query($org: ID!, $team: ID!) { organization(id: $org) { team(id: $team) { spaces } } }`, map[string]any{"org": f.org, "team": f.team})
	if !strings.Contains(string(res.Data), `"spaces":9`) {
		t.Errorf("the team's spaces: %s %v, want 9", res.Data, res.Errors)
	}
	// Another tenant: the organization and its collections do not exist.
	for _, q := range []struct {
		query string
		vars  map[string]any
	}{
		{`query($org: ID!) { organization(id: $org) { spaces { totalCount } collections { totalCount } } }`, map[string]any{"org": f.org}},
		{`query($c: ID!) { collection(id: $c) { spaces { totalCount } } }`, map[string]any{"c": f.collections[0]}},
	} {
		res := f.dave.GraphQL(q.query, q.vars)
		if len(res.Errors) == 0 || res.Errors[0].Extensions["code"] != "NOT_FOUND" || strings.Contains(string(res.Data), "totalCount") {
			t.Errorf("another tenant's totals: %s %v", res.Data, res.Errors)
		}
	}
}

// TestTotalCountCostsTheSameAtAnySize: a totalCount costs a query or two
// beside its page (the counts, and a member's access snapshot and granted
// spaces), whatever the number of spaces: the same in an organization of 5
// spaces and of 60, for an admin and for a member.
func TestTotalCountCostsTheSameAtAnySize(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Options{Debug: true})
	alice := env.NewUser("Alice")
	bob := env.NewUser("Bob")
	small, large := alice.NewOrg("Small"), alice.NewOrg("Large")
	for org, n := range map[string]int{small: 5, large: 60} {
		bob.Join(org, store.RoleRead)
		c := alice.Do("POST", "/v1/orgs/"+org+"/collections", `{"title":"Guides"}`).Expect(http.StatusCreated).String("id")
		for i := range n {
			body := map[string]any{"title": fmt.Sprint("Space ", i)}
			if i%2 == 0 {
				body["parent"] = c
			}
			s := alice.Do("POST", "/v1/orgs/"+org+"/spaces", body).Expect(http.StatusCreated).String("id")
			if i%3 == 0 {
				alice.Do("PATCH", "/v1/spaces/"+s, map[string]any{"defaultLevel": nil}).Expect(http.StatusOK)
			}
		}
	}
	alice.Do("GET", "/v1/orgs/"+small, nil).Expect(http.StatusOK)
	bob.Do("GET", "/v1/orgs/"+small, nil).Expect(http.StatusOK)
	// The steady state, the fewest of three: a notification of the writes
	// above (Bob's joining, the spaces' access) still on its way empties a
	// cache and costs the request that meets it a query more.
	queries := func(u *servertest.User, org, selection string) int {
		fewest := math.MaxInt
		for range 3 {
			fewest = min(fewest, graphQLQueries(t, u, `query($org: ID!) { organization(id: $org) { spaces(first: 2) { `+selection+` } collections(first: 1) { `+selection+` } } }`,
				map[string]any{"org": org}))
		}
		return fewest
	}
	// What the totals cost is the difference with and without them in the
	// same organization: a reader's page itself may take a query more in one
	// organization than in the other (the spaces it may not read among the
	// first rows decide whether the page is filled from one read).
	totalsCost := func(u *servertest.User, org string) int {
		return queries(u, org, "items { id } totalCount") - queries(u, org, "items { id }")
	}
	for _, u := range []*servertest.User{alice, bob} {
		costSmall, costLarge := totalsCost(u, small), totalsCost(u, large)
		if costSmall > 3 {
			t.Errorf("%s: the totals of two lists cost %d queries", u.Email, costSmall)
		}
		if costSmall != costLarge {
			t.Errorf("%s: totals cost %d queries among 5 spaces, %d among 60", u.Email, costSmall, costLarge)
		}
	}
}

// TestTotalCountCostsOncePerList: totalCount is priced once per list, at a
// query's worth, whatever the list's page size (the complexity the rate
// budget charges, extensions.cost).
func TestTotalCountCostsOncePerList(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Options{RateLimit: 1 << 40, RateWindow: time.Minute})
	alice := env.NewUser("Alice")
	org := alice.NewOrg("Acme")
	cost := func(selection string, first int) float64 {
		res := alice.GraphQL(fmt.Sprintf(`query($org: ID!) { organization(id: $org) { spaces(first: %d) { %s } } }`, first, selection), map[string]any{"org": org})
		if len(res.Errors) > 0 {
			t.Fatal(res.Errors)
		}
		c, _ := res.Extensions["cost"].(map[string]any)
		n, _ := c["requested"].(float64)
		if n == 0 {
			t.Fatalf("no cost in %v", res.Extensions)
		}
		return n
	}
	for _, first := range []int{1, 1000} {
		without, with := cost("items { id }", first), cost("items { id } totalCount", first)
		if with-without != 100 {
			t.Errorf("first %d: totalCount adds %v to the cost, want 100 (a query's worth, once)", first, with-without)
		}
	}
	if alone := cost("totalCount", 1000); alone > 300 {
		t.Errorf("a thousand-item page's totalCount alone costs %v", alone)
	}
}

// TestTotalCountUnderConcurrentWritesAndTransfers: spaces created, moved,
// given another level or visibility, deleted, restored and transferred
// between two organizations, collections created, moved and transferred,
// all at once; then every total of both organizations equals a count from
// scratch, for their admin and for a restricted member, and the counts the
// database keeps equal their rows grouped again.
func TestTotalCountUnderConcurrentWritesAndTransfers(t *testing.T) {
	t.Parallel()
	env := servertest.New(t)
	alice := env.NewUser("Alice")
	orgs := []string{alice.NewOrg("Org A"), alice.NewOrg("Org B")}
	bob := env.NewUser("Bob")
	var mu sync.Mutex
	parents := map[string][]string{} // organization → its collections, "" the root
	var spaces []string
	for _, org := range orgs {
		bob.Join(org, store.RoleRead)
		parents[org] = []string{""}
		for i := range 3 {
			c := alice.Do("POST", "/v1/orgs/"+org+"/collections", map[string]any{"title": fmt.Sprint("C", i)}).Expect(http.StatusCreated).String("id")
			parents[org] = append(parents[org], c)
		}
		for i := range 12 {
			body := map[string]any{"title": fmt.Sprint("Space ", i)}
			if p := parents[org][i%4]; p != "" {
				body["parent"] = p
			}
			spaces = append(spaces, alice.Do("POST", "/v1/orgs/"+org+"/spaces", body).Expect(http.StatusCreated).String("id"))
		}
	}
	levels := []any{nil, "inherit", "read", "edit"}
	visibilities := []string{"private", "in-collection", "public"}
	const workers, rounds = 6, 20
	var wg sync.WaitGroup
	var failures []string
	done := map[string]int{} // operation → writes that succeeded
	ops := []string{"create space", "delete space", "restore space", "move space", "level", "visibility", "transfer space", "create collection", "transfer collection"}
	for w := range workers {
		rng := rand.New(rand.NewPCG(uint64(w), 29))
		wg.Go(func() {
			for range rounds {
				mu.Lock()
				org := orgs[rng.IntN(2)]
				space := spaces[rng.IntN(len(spaces))]
				parent := parents[org][rng.IntN(len(parents[org]))]
				mu.Unlock()
				var res *servertest.Response
				op := rng.IntN(len(ops))
				switch op {
				case 0:
					body := map[string]any{"title": "New"}
					if parent != "" {
						body["parent"] = parent
					}
					res = alice.Do("POST", "/v1/orgs/"+org+"/spaces", body)
					if res.Status == http.StatusCreated {
						mu.Lock()
						spaces = append(spaces, res.String("id"))
						mu.Unlock()
					}
				case 1:
					res = alice.Do("DELETE", "/v1/spaces/"+space, nil)
				case 2:
					res = alice.Do("POST", "/v1/spaces/"+space+"/restore", nil)
				case 3:
					var p any
					if parent != "" {
						p = parent
					}
					res = alice.Do("POST", "/v1/spaces/"+space+"/move", map[string]any{"parent": p})
				case 4:
					res = alice.Do("PATCH", "/v1/spaces/"+space, map[string]any{"defaultLevel": levels[rng.IntN(len(levels))]})
				case 5:
					res = alice.Do("PATCH", "/v1/spaces/"+space, map[string]any{"visibility": visibilities[rng.IntN(len(visibilities))]})
				case 6: // to the organization it is not in, as it was read
					to := orgs[0]
					if alice.Do("GET", "/v1/spaces/"+space, nil).JSON()["organization"] == to {
						to = orgs[1]
					}
					res = alice.Do("POST", "/v1/spaces/"+space+"/transfer", map[string]any{"organization": to})
				case 7:
					res = alice.Do("POST", "/v1/orgs/"+org+"/collections", map[string]any{"title": "New"})
					if res.Status == http.StatusCreated {
						mu.Lock()
						parents[org] = append(parents[org], res.String("id"))
						mu.Unlock()
					}
				case 8:
					if parent == "" {
						continue
					}
					res = alice.Do("POST", "/v1/collections/"+parent+"/transfer", map[string]any{"organization": orgs[0]})
					if res.Status == http.StatusOK {
						// Where it went, with what it held.
						mu.Lock()
						for _, o := range orgs {
							parents[o] = removeString(parents[o], parent)
						}
						parents[orgs[0]] = append(parents[orgs[0]], parent)
						mu.Unlock()
					}
				}
				mu.Lock()
				if res.Status >= 500 {
					failures = append(failures, fmt.Sprintf("%s: %d %s", ops[op], res.Status, res.Body))
				}
				if res.Status < 300 {
					done[ops[op]]++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(failures) > 0 {
		t.Fatalf("%d writes failed on the server's side:\n%s", len(failures), strings.Join(firstN(failures, 5), "\n"))
	}
	t.Logf("writes done: %v", done)
	if done["transfer space"] == 0 || done["move space"] == 0 || done["create space"] == 0 {
		t.Fatalf("too few writes went through to test the counts: %v", done)
	}

	orgSpaces := `query($org: ID!, $after: String) { organization(id: $org) { spaces(first: 3, after: $after) { ` + listPage + ` } } }`
	collections := `query($org: ID!, $after: String) { organization(id: $org) { collections(first: 3, after: $after) { ` + listPage + ` } } }`
	collectionSpaces := `query($c: ID!, $after: String) { collection(id: $c) { spaces(first: 3, after: $after) { ` + listPage + ` } } }`
	ctx := context.Background()
	for _, org := range orgs {
		var live, colls int
		if err := env.DB.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM spaces WHERE organization_id = ? AND deleted_at IS NULL),
			(SELECT count(*) FROM collections WHERE organization_id = ?)`, org, org).Scan(&live, &colls); err != nil {
			t.Fatal(err)
		}
		if _, total := listed(t, alice, orgSpaces, map[string]any{"org": org}, "organization", "spaces"); total != live {
			t.Errorf("%s: totalCount %d, %d live spaces", org, total, live)
		}
		if _, total := listed(t, alice, collections, map[string]any{"org": org}, "organization", "collections"); total != colls {
			t.Errorf("%s: totalCount %d, %d collections", org, total, colls)
		}
		for _, u := range []*servertest.User{alice, bob} {
			if items, total := listed(t, u, orgSpaces, map[string]any{"org": org}, "organization", "spaces"); items != total {
				t.Errorf("%s as %s: %d spaces listed, totalCount %d", org, u.Email, items, total)
			}
			var ids []string
			if err := env.DB.NewRaw(`SELECT id FROM collections WHERE organization_id = ?`, org).Scan(ctx, &ids); err != nil {
				t.Fatal(err)
			}
			for _, c := range ids {
				if items, total := listed(t, u, collectionSpaces, map[string]any{"c": c}, "collection", "spaces"); items != total {
					t.Errorf("collection %s as %s: %d spaces listed, totalCount %d", c, u.Email, items, total)
				}
			}
		}
	}
	drift, err := store.ContentCountsDrift(ctx, env.DB)
	if err != nil {
		t.Fatal(err)
	}
	if len(drift) > 0 {
		t.Errorf("the kept counts differ from the rows:\n%s", strings.Join(drift, "\n"))
	}
}

func removeString(list []string, s string) []string {
	out := list[:0:0]
	for _, x := range list {
		if x != s {
			out = append(out, x)
		}
	}
	return out
}
