package wholeserver_test

import (
	"bytes"
	"net/http"
	"sync"
	"testing"

	"github.com/docsapi/docsapi/cmd/docsapi/server/servertest"
	"github.com/docsapi/docsapi/store"
)

// The direct writer (graph/direct.go) writes a site's structure itself when
// a query selects only fields it knows. Whatever it writes must be what
// gqlgen writes: each query runs twice on the same server and data, with the
// writer on and off, and the responses must be the same bytes. The debug
// statistics tell which queries the writer took.
func TestDirectWriterMatchesGqlgen(t *testing.T) {
	env := servertest.New(t, servertest.Options{Debug: true})
	alice := env.NewUser("Alice")
	org := alice.NewOrg("Acme")

	// A published site with groups (one nested), sections inside and
	// outside groups, and a section with every optional field set.
	tree := buildSiteTree(t, env, alice, org, 2, 2, 2, 1)
	base := "/v1/orgs/" + org + "/sites/" + tree
	var groups, sections struct{ Items []struct{ ID string } }
	alice.Do("GET", base+"/section-groups", nil).Expect(http.StatusOK).Decode(&groups)
	alice.Do("POST", base+"/section-groups", map[string]any{"title": "Nested \"group\"", "parent": groups.Items[0].ID, "icon": "book"}).Expect(http.StatusCreated)
	alice.Do("GET", base+"/sections", nil).Expect(http.StatusOK).Decode(&sections)
	alice.Do("PATCH", base+"/sections/"+sections.Items[0].ID, map[string]any{
		"description": "Line one\nline \"two\" \\ tab\t<end>", "condition": `visitor.claims.plan == "pro"`, "icon": "rocket",
	}).Expect(http.StatusOK)
	alice.Do("POST", base+"/publish", nil).Expect(http.StatusOK)

	// A site without sections: its structure is its site spaces.
	flat := alice.Do("POST", "/v1/orgs/"+org+"/sites", `{"title":"Flat"}`).Expect(http.StatusCreated).String("id")
	for _, title := range []string{"Flat one", "Flat two é ✓"} {
		space := alice.Do("POST", "/v1/orgs/"+org+"/spaces", map[string]any{"title": title, "emoji": "1f600"}).Expect(http.StatusCreated).String("id")
		alice.Do("POST", "/v1/orgs/"+org+"/sites/"+flat+"/site-spaces", map[string]any{"spaceId": space}).Expect(http.StatusCreated)
	}

	// A site whose only space is deleted: its site space keeps its place
	// but is not shown while the space can be restored.
	gone := alice.Do("POST", "/v1/orgs/"+org+"/sites", `{"title":"Gone"}`).Expect(http.StatusCreated).String("id")
	goneSpace := alice.Do("POST", "/v1/orgs/"+org+"/spaces", map[string]any{"title": "Deleted"}).Expect(http.StatusCreated).String("id")
	alice.Do("POST", "/v1/orgs/"+org+"/sites/"+gone+"/site-spaces", map[string]any{"spaceId": goneSpace}).Expect(http.StatusCreated)
	alice.Do("DELETE", "/v1/spaces/"+goneSpace, nil).Expect(http.StatusNoContent)

	const everyField = `
	  fragment Space on Space { object id title emoji visibility createdAt updatedAt deletedAt organization parent revision editMode language defaultLevel
	    mergeRules { type rules { rule users expression } } urls { location app published public icon } comments changeRequests changeRequestsOpen changeRequestsDraft
	    permissions { view access admin viewInviteLinks edit triggerGitSync comment merge review installIntegration } }
	  fragment SiteSpace on SiteSpace { object id path section space { ...Space } title default condition urls { published } }
	  fragment Section on SiteSection { object id title description default path condition sectionGroup icon urls { published } siteSpaces { ...SiteSpace } }
	  fragment Group on SiteSectionGroup { object id title sectionGroup icon sections { id } }
	  query Q($o: ID!, $s: ID!) { site(organizationId: $o, id: $s) { structure { type structure {
	    __typename
	    ... on SiteSectionGroup { ...Group children { __typename ...Section ... on SiteSectionGroup { ...Group children { ...Section ... on SiteSectionGroup { ...Group } } } } }
	    ...Section
	    ...SiteSpace
	  } } } }`

	cases := []struct {
		name  string
		query string
		vars  map[string]any
		// direct: whether the writer takes it on the site with sections;
		// on the others, which hold only site spaces, it always does.
		direct bool
	}{
		{"the benchmark's tree", siteTreeQuery, nil, true},
		{"every field it knows", everyField, nil, true},
		{"aliases and repeated fields", `query Q($o: ID!, $s: ID!) { site(organizationId: $o, id: $s) { s: structure { kind: type type
		    items: structure { t: __typename ... on SiteSection { name: title title id siteSpaces { a: space { id } b: space { title } space { id } } } ... on SiteSectionGroup { children { __typename } } } } } }`, nil, true},
		{"@skip and @include", `query Q($o: ID!, $s: ID!, $yes: Boolean!, $no: Boolean!) { site(organizationId: $o, id: $s) { structure {
		    type @skip(if: $yes) structure { ... on SiteSection @include(if: $yes) { id siteSpaces { path @include(if: $no) id @skip(if: $no) } } ... on SiteSectionGroup @include(if: $no) { id } } } } }`,
			map[string]any{"yes": true, "no": false}, true},
		// The same document with the opposite variables: plans that depend
		// on variables must not be reused across requests.
		{"@skip and @include, reversed", `query Q($o: ID!, $s: ID!, $yes: Boolean!, $no: Boolean!) { site(organizationId: $o, id: $s) { structure {
		    type @skip(if: $yes) structure { ... on SiteSection @include(if: $yes) { id siteSpaces { path @include(if: $no) id @skip(if: $no) } } ... on SiteSectionGroup @include(if: $no) { id } } } } }`,
			map[string]any{"yes": false, "no": true}, true},
		{"a field it does not know (Space.gitInfo)", `query Q($o: ID!, $s: ID!) { site(organizationId: $o, id: $s) { structure { structure {
		    ... on SiteSection { id siteSpaces { id space { id gitInfo { __typename } } } } } } } }`, nil, false},
		{"a field with arguments (Space.content)", `query Q($o: ID!, $s: ID!) { site(organizationId: $o, id: $s) { structure { structure {
		    ... on SiteSection { siteSpaces { space { content(computed: false) { id } } } } } } } }`, nil, false},
	}
	sites := []struct{ name, id string }{{"sections", tree}, {"site spaces", flat}, {"deleted space", gone}}
	for _, c := range cases {
		for _, site := range sites {
			vars := map[string]any{"o": org, "s": site.id}
			for k, v := range c.vars {
				vars[k] = v
			}
			env.Server.Resolver.GenericExecution = true
			want := alice.GraphQL(c.query, vars)
			env.Server.Resolver.GenericExecution = false
			got := alice.GraphQL(c.query, vars)
			if want.Status != http.StatusOK || got.Status != http.StatusOK {
				t.Fatalf("%s, %s: status %d and %d", c.name, site.name, want.Status, got.Status)
			}
			if !bytes.Equal(got.Data, want.Data) {
				t.Errorf("%s, %s: the direct writer wrote\n%s\ngqlgen wrote\n%s", c.name, site.name, got.Data, want.Data)
			}
			if len(got.Errors) != len(want.Errors) {
				t.Errorf("%s, %s: errors %+v, gqlgen's %+v", c.name, site.name, got.Errors, want.Errors)
			}
			// The fragments on sections select nothing of a site space: a
			// site without sections is written directly whatever they hold.
			direct := c.direct || site.id != tree
			if n := got.Extensions["stats"].(map[string]any)["directWrites"].(float64); (n > 0) != direct {
				t.Errorf("%s, %s: %v direct writes, want direct=%v", c.name, site.name, n, direct)
			}
			if generic := want.Extensions["stats"].(map[string]any)["directWrites"].(float64); generic != 0 {
				t.Errorf("%s, %s: %v direct writes with generic execution", c.name, site.name, generic)
			}
		}
	}
}

// A space read by id, over GraphQL and REST, by callers of every kind: the
// direct writer's answers are gqlgen's, byte for byte.
func TestDirectWriterMatchesGqlgenOnSpaces(t *testing.T) {
	env := servertest.New(t, servertest.Options{Debug: true})
	alice, bob, carol := env.NewUser("Alice"), env.NewUser("Bob"), env.NewUser("Carol")
	org := alice.NewOrg("Acme")
	bob.Join(org, store.RoleComment)
	carol.NewOrg("Other")

	plain := alice.Do("POST", "/v1/orgs/"+org+"/spaces", map[string]any{"title": "Plain"}).Expect(http.StatusCreated).String("id")
	rich := alice.Do("POST", "/v1/orgs/"+org+"/spaces", map[string]any{"title": "Rich \"one\"", "emoji": "1f680"}).Expect(http.StatusCreated).String("id")
	alice.Do("PATCH", "/v1/spaces/"+rich, `{"visibility":"public","language":"fr","icon":"https://acme.com/i.png",
	  "mergeRules":{"type":"rules","rules":[{"rule":"require_at_least_one_review"},{"rule":"allow_bypass","users":["`+alice.ID+`"]}]}}`).Expect(http.StatusOK)
	alice.Do("POST", "/v1/spaces/"+rich+"/change-requests", map[string]any{"subject": "Draft"}).Expect(http.StatusCreated)
	gone := alice.Do("POST", "/v1/orgs/"+org+"/spaces", map[string]any{"title": "Gone"}).Expect(http.StatusCreated).String("id")
	alice.Do("DELETE", "/v1/spaces/"+gone, nil).Expect(http.StatusNoContent)

	const query = `query S($id: ID!) { space(id: $id) {
	  __typename object id title emoji visibility createdAt updatedAt deletedAt editMode
	  mergeRules { type rules { rule users expression } } urls { location app published public icon }
	  organization parent language revision defaultLevel comments changeRequests changeRequestsOpen changeRequestsDraft
	  permissions { view access admin viewInviteLinks edit triggerGitSync comment merge review installIntegration } } }`
	for _, caller := range []*servertest.User{alice, bob, carol} {
		for _, space := range []string{plain, rich, gone} {
			name := caller.Email + " reading " + space
			env.Server.Resolver.GenericExecution = true
			want := caller.GraphQL(query, map[string]any{"id": space})
			wantREST := caller.Do("GET", "/v1/spaces/"+space, nil)
			env.Server.Resolver.GenericExecution = false
			got := caller.GraphQL(query, map[string]any{"id": space})
			gotREST := caller.Do("GET", "/v1/spaces/"+space, nil)
			if !bytes.Equal(got.Data, want.Data) || len(got.Errors) != len(want.Errors) {
				t.Errorf("%s: the direct writer wrote\n%s %v\ngqlgen wrote\n%s %v", name, got.Data, got.Errors, want.Data, want.Errors)
			}
			if gotREST.Status != wantREST.Status || !bytes.Equal(gotREST.Body, wantREST.Body) {
				t.Errorf("%s over REST: %d %s, gqlgen: %d %s", name, gotREST.Status, gotREST.Body, wantREST.Status, wantREST.Body)
			}
			visible := caller != carol && space != gone
			if n := got.Extensions["stats"].(map[string]any)["directWrites"].(float64); (n > 0) != visible {
				t.Errorf("%s: %v direct writes", name, n)
			}
		}
	}
}

// Requests running at once share the writer's cached plans: their answers
// are the same as one at a time (run with -race to check the sharing).
func TestDirectWriterConcurrentRequests(t *testing.T) {
	t.Parallel()
	env := servertest.New(t)
	alice := env.NewUser("Alice")
	org := alice.NewOrg("Acme")
	site := buildSiteTree(t, env, alice, org, 2, 2, 2, 1)
	vars := map[string]any{"o": org, "s": site}
	want := alice.GraphQL(siteTreeQuery, vars)
	if len(want.Errors) > 0 {
		t.Fatal(want.Errors)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 10 {
				if got := alice.GraphQL(siteTreeQuery, vars); !bytes.Equal(got.Data, want.Data) {
					t.Errorf("concurrent answer differs:\n%s\nwant\n%s", got.Data, want.Data)
					return
				}
			}
		})
	}
	wg.Wait()
}
