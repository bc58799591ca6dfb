package wholeserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docsapi/docsapi/cmd/docsapi/server/servertest"
	"github.com/docsapi/docsapi/graph"
	"github.com/docsapi/docsapi/store"
)

// nodeFixtureIDs names, for every type implementing Node, the id of one
// object of the authorization walk's fixture (its private space's content,
// its organization's sites, integrations, specifications...). A new Node
// type fails TestNodeFindsEveryType until it has a line here.
var nodeFixtureIDs = map[string]func(f *walkFixture) string{
	"Organization":               func(f *walkFixture) string { return f.ids["organizationId"] },
	"Team":                       func(f *walkFixture) string { return f.ids["teamId"] },
	"OrganizationInvite":         func(f *walkFixture) string { return f.ids["inviteId"] },
	"Space":                      func(f *walkFixture) string { return f.ids["spaceId"] },
	"Collection":                 func(f *walkFixture) string { return f.ids["collectionId"] },
	"Revision":                   func(f *walkFixture) string { return f.ids["revisionId"] },
	"ChangeRequest":              func(f *walkFixture) string { return f.ids["changeRequestId"] },
	"Comment":                    func(f *walkFixture) string { return f.ids["commentId"] },
	"CommentReply":               func(f *walkFixture) string { return f.ids["commentReplyId"] },
	"Site":                       func(f *walkFixture) string { return f.ids["siteId"] },
	"SiteSectionGroup":           func(f *walkFixture) string { return f.ids["siteSectionGroupId"] },
	"SiteSection":                func(f *walkFixture) string { return f.ids["siteSectionId"] },
	"SiteSpace":                  func(f *walkFixture) string { return f.ids["siteSpaceId"] },
	"IntegrationInstallation":    func(f *walkFixture) string { return f.ids["installationId"] },
	"IntegrationEvent":           func(f *walkFixture) string { return f.ids["eventId"] },
	"OpenAPISpec":                func(f *walkFixture) string { return f.ids["specId"] },
	"Translation":                func(f *walkFixture) string { return f.ids["translationId"] },
	"ConversationIssue":          func(f *walkFixture) string { return f.ids["issueId"] },
	"ConversationsIssuesCluster": func(f *walkFixture) string { return f.ids["clusterId"] },
	"SAMLProvider":               func(f *walkFixture) string { return f.ids["samlProviderId"] },
}

type nodeAnswer struct {
	Typename string `json:"__typename"`
	ID       string `json:"id"`
}

func nodesOf(t *testing.T, u *servertest.User, ids []string) ([]*nodeAnswer, *servertest.GraphQLResponse) {
	t.Helper()
	out := u.GraphQL(`query($ids: [ID!]!) { nodes(ids: $ids) { __typename id } }`, map[string]any{"ids": ids})
	var data struct{ Nodes []*nodeAnswer }
	if err := json.Unmarshal(out.Data, &data); err != nil {
		t.Fatalf("nodes: %v: %s %+v", err, out.Data, out.Errors)
	}
	return data.Nodes, out
}

// Every type implementing Node is found by node(id:) by who may read it,
// and is null, as an id that names nothing is, for who may not: a reader
// of the organization without access to its private space, and another
// organization's admin. nodes(ids:) answers the same, in order.
func TestNodeFindsEveryType(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Options{Debug: true})
	f := newWalkFixture(t, env)
	spec := f.owner.GraphQL(`query($o: ID!) { organization(id: $o) { openAPISpecs { items { id } } } }`, map[string]any{"o": f.org})
	var specs struct {
		Organization struct {
			OpenAPISpecs struct{ Items []struct{ ID string } }
		}
	}
	if err := json.Unmarshal(spec.Data, &specs); err != nil || len(specs.Organization.OpenAPISpecs.Items) == 0 {
		t.Fatalf("specs: %s %+v", spec.Data, spec.Errors)
	}
	f.ids["specId"] = specs.Organization.OpenAPISpecs.Items[0].ID

	// The schema's implementors of Node, each with an object.
	schema := graph.Schema()
	var types, ids []string
	for _, def := range schema.GetPossibleTypes(schema.Types["Node"]) {
		id := ""
		if of := nodeFixtureIDs[def.Name]; of != nil {
			id = of(f)
		}
		if id == "" {
			t.Errorf("%s implements Node but nodeFixtureIDs has no object of it", def.Name)
			continue
		}
		types, ids = append(types, def.Name), append(ids, id)
	}
	if len(types) < len(nodeFixtureIDs) {
		t.Fatalf("nodeFixtureIDs names types that do not implement Node: %d implementors, %d entries", len(types), len(nodeFixtureIDs))
	}

	// What the reader of the organization may see: what is not of the
	// private space, nor for the organization's admins only (invites too:
	// the fixture's organization takes no invite links).
	readerSees := map[string]bool{"Organization": true, "Team": true, "Site": true,
		"SiteSectionGroup": true, "SiteSection": true, "OpenAPISpec": true, "ConversationIssue": true,
		"ConversationsIssuesCluster": true}
	for i, typ := range types {
		t.Run(typ, func(t *testing.T) {
			for _, c := range []struct {
				who   string
				user  *servertest.User
				found bool
			}{
				{"owner", f.owner, true},
				{"reader", f.reader, readerSees[typ]},
				{"other tenant", f.outsider, false},
			} {
				out := c.user.GraphQL(`query($id: ID!) { node(id: $id) { __typename id } }`, map[string]any{"id": ids[i]})
				want := `{"node":null}`
				if c.found {
					want = fmt.Sprintf(`{"node":{"__typename":%q,"id":%q}}`, typ, ids[i])
				}
				if string(out.Data) != want || len(out.Errors) != 0 {
					t.Errorf("%s: node(%s) = %s %+v, want %s", c.who, ids[i], out.Data, out.Errors, want)
				}
			}
		})
	}

	// nodes: all of them at once, with ids that name nothing, in order.
	mixed := append(slices.Clone(ids), "nothing-has-this-id", ids[0])
	got, out := nodesOf(t, f.owner, mixed)
	if len(out.Errors) != 0 || len(got) != len(mixed) {
		t.Fatalf("owner nodes: %s %+v", out.Data, out.Errors)
	}
	for i, typ := range types {
		if got[i] == nil || got[i].Typename != typ || got[i].ID != ids[i] {
			t.Errorf("owner nodes[%d] = %+v, want %s %s", i, got[i], typ, ids[i])
		}
	}
	if got[len(types)] != nil || got[len(types)+1] == nil || got[len(types)+1].ID != ids[0] {
		t.Errorf("owner nodes: missing id %+v, repeated id %+v", got[len(types)], got[len(types)+1])
	}
	// A reader and another tenant get what they may read, null elsewhere:
	// the same null as for the id that names nothing.
	for _, c := range []struct {
		user *servertest.User
		sees func(typ string) bool
	}{
		{f.reader, func(typ string) bool { return readerSees[typ] }},
		{f.outsider, func(string) bool { return false }},
	} {
		got, out := nodesOf(t, c.user, mixed)
		if len(out.Errors) != 0 || len(got) != len(mixed) {
			t.Fatalf("nodes: %s %+v", out.Data, out.Errors)
		}
		for i, typ := range types {
			if (got[i] != nil) != c.sees(typ) {
				t.Errorf("%s: nodes[%d] (%s) = %+v", c.user.Email, i, typ, got[i])
			}
		}
	}

	// The cost: one query for the ids' types, one per type present, and
	// the read rules' own; as many for 20 spaces as for one.
	var spaces []string
	for i := range 20 {
		spaces = append(spaces, f.owner.Do("POST", "/v1/orgs/"+f.org+"/spaces", map[string]any{"title": fmt.Sprintf("S%d", i)}).Expect(201).String("id"))
	}
	queries := func(ids []string) float64 {
		_, out := nodesOf(t, f.owner, ids)
		stats, _ := out.Extensions["stats"].(map[string]any)
		n, _ := stats["sqlQueries"].(float64)
		if n == 0 {
			t.Fatalf("no query count: %v", out.Extensions)
		}
		return n
	}
	one, twenty, all := queries(spaces[:1]), queries(spaces), queries(mixed)
	if twenty != one {
		t.Errorf("nodes of 20 spaces ran %v queries, of one %v", twenty, one)
	}
	if max := float64(2 + 2*len(types)); all > max {
		t.Errorf("nodes of %d types ran %v queries, more than %v", len(types), all, max)
	}
	t.Logf("queries: one space %v, 20 spaces %v, %d types %v", one, twenty, len(types), all)

	// At most 100 ids.
	many := make([]string, 101)
	for i := range many {
		many[i] = spaces[0]
	}
	if _, out := nodesOf(t, f.owner, many); len(out.Errors) != 1 || out.Errors[0].Extensions["code"] != "BAD_REQUEST" {
		t.Errorf("101 ids: %+v", out.Errors)
	}
	if _, out := nodesOf(t, f.owner, many[:100]); len(out.Errors) != 0 {
		t.Errorf("100 ids: %+v", out.Errors)
	}
}

// A list is a Relay connection: walking it with first/after meets the same
// items, in the same order, as walking it with limit/page, each edge with
// the cursor that continues after it.
func TestConnectionWalk(t *testing.T) {
	t.Parallel()
	env := servertest.New(t)
	alice := env.NewUser("Alice")
	org := alice.NewOrg("Acme")
	// 1,000 spaces, by tens created at the same instant: the keyset's tie
	// on the time is broken by the id.
	ctx := context.Background()
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	inherit := store.DefaultLevelInherit
	for i := range 999 {
		at := base.Add(time.Duration(i/10) * time.Second)
		s := &store.Space{ID: store.NewID(), OrganizationID: org, Title: fmt.Sprintf("Space %d", i), Visibility: store.VisibilityPrivate,
			EditMode: store.EditModeLive, MergeRules: store.MergeRules{Type: store.MergeRulesInherit}, DefaultLevel: &inherit,
			RevisionID: store.NewID(), CreatedBy: &alice.ID, CreatedAt: at, UpdatedAt: at}
		if err := store.CreateSpace(ctx, env.DB, s, store.Content{}); err != nil {
			t.Fatal(err)
		}
	}
	alice.Do("POST", "/v1/orgs/"+org+"/spaces", `{"title":"Last"}`).Expect(201)

	type page struct {
		Items []struct{ ID string }
		Edges []struct {
			Cursor string
			Node   struct{ ID string }
		}
		Next     *struct{ Page string }
		PageInfo struct {
			HasNextPage, HasPreviousPage bool
			StartCursor, EndCursor       *string
		}
	}
	list := func(args string, vars map[string]any) page {
		t.Helper()
		out := alice.GraphQL(`query($o: ID!, $n: Int, $c: String) { organization(id: $o) { spaces(`+args+`) {
			items { id } edges { cursor node { id } } next { page } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } } }`, vars)
		var data struct{ Organization struct{ Spaces page } }
		if err := json.Unmarshal(out.Data, &data); err != nil || len(out.Errors) > 0 {
			t.Fatalf("spaces(%s): %v %+v", args, err, out.Errors)
		}
		return data.Organization.Spaces
	}

	// limit/page, 250 at a time.
	var byLimit []string
	var cursor any
	for {
		p := list("limit: $n, page: $c", map[string]any{"o": org, "n": 250, "c": cursor})
		for _, it := range p.Items {
			byLimit = append(byLimit, it.ID)
		}
		if p.Next == nil {
			break
		}
		cursor = p.Next.Page
	}
	// first/after, 100 at a time, from the edges alone.
	var byFirst []string
	cursor = nil
	for n := 0; ; n++ {
		p := list("first: $n, after: $c", map[string]any{"o": org, "n": 100, "c": cursor})
		if len(p.Edges) != len(p.Items) || p.PageInfo.HasPreviousPage != (n > 0) {
			t.Fatalf("page %d: %d edges, %d items, hasPreviousPage %v", n, len(p.Edges), len(p.Items), p.PageInfo.HasPreviousPage)
		}
		for i, e := range p.Edges {
			if e.Node.ID != p.Items[i].ID {
				t.Fatalf("page %d: edge %d is %s, item %s", n, i, e.Node.ID, p.Items[i].ID)
			}
			byFirst = append(byFirst, e.Node.ID)
			// An edge's cursor continues after it.
			if i == 37 {
				after := list("first: $n, after: $c", map[string]any{"o": org, "n": 1, "c": e.Cursor})
				if len(after.Items) != 1 || after.Items[0].ID != p.Items[i+1].ID {
					t.Fatalf("page %d: after edge %d: %+v", n, i, after.Items)
				}
			}
		}
		if len(p.Edges) > 0 && (*p.PageInfo.StartCursor != p.Edges[0].Cursor || *p.PageInfo.EndCursor != p.Edges[len(p.Edges)-1].Cursor) {
			t.Fatalf("page %d: start/end cursors %v %v", n, *p.PageInfo.StartCursor, *p.PageInfo.EndCursor)
		}
		if !p.PageInfo.HasNextPage {
			break
		}
		cursor = *p.PageInfo.EndCursor
	}
	if len(byLimit) != 1000 || !slices.Equal(byFirst, byLimit) {
		t.Fatalf("first/after walked %d spaces, limit/page %d, equal: %v", len(byFirst), len(byLimit), slices.Equal(byFirst, byLimit))
	}
	seen := map[string]bool{}
	for _, id := range byFirst {
		seen[id] = true
	}
	if len(seen) != 1000 {
		t.Fatalf("%d distinct spaces of 1000", len(seen))
	}

	// Both names of one argument: the same value is fine, different ones
	// are a bad request.
	same := alice.GraphQL(`query($o: ID!) { organization(id: $o) { spaces(first: 3, limit: 3) { count totalCount } } }`, map[string]any{"o": org})
	if string(same.Data) != `{"organization":{"spaces":{"count":3,"totalCount":1000}}}` || len(same.Errors) > 0 {
		t.Fatalf("first = limit = 3: %s %+v", same.Data, same.Errors)
	}
	for _, q := range []string{
		`query($o: ID!) { organization(id: $o) { spaces(first: 3, limit: 4) { count } } }`,
		`query($o: ID!) { organization(id: $o) { spaces(after: "a", page: "b") { count } } }`,
	} {
		out := alice.GraphQL(q, map[string]any{"o": org})
		if len(out.Errors) != 1 || out.Errors[0].Extensions["code"] != "BAD_REQUEST" || !strings.Contains(out.Errors[0].Message, "two names") {
			t.Errorf("%s: %+v", q, out.Errors)
		}
	}
	// Over REST the list is the same: items and next.
	res := alice.Do("GET", "/v1/orgs/"+org+"/spaces?limit=100", nil).Expect(200).JSON()
	if items, _ := res["items"].([]any); len(items) != 100 || res["next"] == nil || res["edges"] != nil {
		t.Errorf("REST list: %d items, next %v, edges %v", len(items), res["next"], res["edges"])
	}
}

// Edges lose what items lose: a reader of the organization lists its spaces
// without the private ones, by items and by edges alike.
func TestConnectionEdgesAreAuthorized(t *testing.T) {
	t.Parallel()
	env := servertest.New(t)
	alice, bob := env.NewUser("Alice"), env.NewUser("Bob")
	org := alice.NewOrg("Acme")
	bob.Join(org, store.RoleRead)
	open := alice.Do("POST", "/v1/orgs/"+org+"/spaces", `{"title":"Open"}`).Expect(201).String("id")
	private := alice.Do("POST", "/v1/orgs/"+org+"/spaces", `{"title":"Private"}`).Expect(201).String("id")
	alice.Do("PATCH", "/v1/spaces/"+private, `{"defaultLevel":null}`).Expect(200)

	for _, c := range []struct {
		user *servertest.User
		want []string
	}{{alice, []string{open, private}}, {bob, []string{open}}} {
		out := c.user.GraphQL(`query($o: ID!) { organization(id: $o) { spaces { count items { id } edges { node { id } } } } }`, map[string]any{"o": org})
		var data struct {
			Organization struct {
				Spaces struct {
					Count int
					Items []struct{ ID string }
					Edges []struct{ Node struct{ ID string } }
				}
			}
		}
		if err := json.Unmarshal(out.Data, &data); err != nil || len(out.Errors) > 0 {
			t.Fatalf("%v %+v", err, out.Errors)
		}
		s := data.Organization.Spaces
		var items, edges []string
		for _, it := range s.Items {
			items = append(items, it.ID)
		}
		for _, e := range s.Edges {
			edges = append(edges, e.Node.ID)
		}
		// Spaces created in the same instant are ordered by id: compare
		// the sets, and items with edges in order.
		if !slices.Equal(items, edges) || !slices.Equal(slices.Sorted(slices.Values(items)), slices.Sorted(slices.Values(c.want))) || s.Count != len(c.want) {
			t.Errorf("%s: items %v, edges %v, count %d; want %v", c.user.Email, items, edges, s.Count, c.want)
		}
	}
}
