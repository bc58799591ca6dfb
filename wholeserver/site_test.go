package wholeserver_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/docsapi/docsapi/cmd/docsapi/server/servertest"
	"github.com/docsapi/docsapi/store"
)

// siteFixture is an organization with spaces, for site tests.
type siteFixture struct {
	env    *servertest.Env
	admin  *servertest.User
	org    string
	spaces []string
}

func newSiteFixture(t *testing.T, spaces int, opts ...servertest.Options) *siteFixture {
	env := servertest.New(t, opts...)
	f := &siteFixture{env: env, admin: env.NewUser("Alice")}
	f.org = f.admin.NewOrg("Acme")
	for i := range spaces {
		f.spaces = append(f.spaces, f.admin.Do("POST", "/v1/orgs/"+f.org+"/spaces", map[string]any{"title": fmt.Sprintf("Space %d", i)}).
			Expect(http.StatusCreated).String("id"))
	}
	return f
}

func (f *siteFixture) site(body any) string {
	return f.admin.Do("POST", "/v1/orgs/"+f.org+"/sites", body).Expect(http.StatusCreated).String("id")
}

func (f *siteFixture) path(site string, rest ...string) string {
	return "/v1/orgs/" + f.org + "/sites/" + site + strings.Join(rest, "")
}

// sitesWith lists the organization's sites in GraphQL, selecting fields of
// each, on a server in debug (which counts its queries): the items, and
// the fewer queries of two runs (a cache may be emptied between requests).
func (f *siteFixture) sitesWith(t *testing.T, fields string) (queries int, items []map[string]any) {
	t.Helper()
	for range 2 {
		res := f.admin.Do("POST", "/graphql", map[string]any{"query": `query($o: ID!) { organization(id: $o) {
			sites { items { ` + fields + ` } } } }`, "variables": map[string]any{"o": f.org}}).Expect(http.StatusOK)
		var out struct {
			Data struct {
				Organization struct {
					Sites struct{ Items []map[string]any }
				}
			}
		}
		res.Decode(&out)
		items = out.Data.Organization.Sites.Items
		if n := atoi(t, res.Header.Get("X-SQL-Queries")); queries == 0 || n < queries {
			queries = n
		}
	}
	return queries, items
}

func TestSiteLifecycle(t *testing.T) {
	t.Parallel()
	f := newSiteFixture(t, 2)
	alice := f.admin

	res := alice.Do("POST", "/v1/orgs/"+f.org+"/sites", map[string]any{"title": "Docs", "visibility": "share-link", "spaces": f.spaces}).
		Expect(http.StatusCreated)
	site := res.JSON()
	id := site["id"].(string)
	if res.Header.Get("Location") != f.env.URL+f.path(id) {
		t.Errorf("Location = %q", res.Header.Get("Location"))
	}
	for key, want := range map[string]any{"object": "site", "title": "Docs", "type": "basic", "visibility": "share-link",
		"published": false, "siteSpaces": 2.0, "agentsContext": "included"} {
		if site[key] != want {
			t.Errorf("%s = %v, want %v", key, site[key], want)
		}
	}
	if fmt.Sprint(site["features"]) != "[]" || fmt.Sprint(site["adaptiveContent"]) != "map[enabled:false]" {
		t.Errorf("site = %v", site)
	}
	if _, ok := site["urls"].(map[string]any)["published"]; ok {
		t.Errorf("an unpublished site has a published address: %v", site["urls"])
	}
	defaults := alice.Do("POST", "/v1/orgs/"+f.org+"/sites", nil).Expect(http.StatusCreated).JSON()
	if defaults["title"] != "Untitled site" || defaults["visibility"] != "public" || defaults["siteSpaces"] != 0.0 {
		t.Errorf("defaults = %v", defaults)
	}

	bad := []struct{ body, field string }{
		{`{"title":"D"}`, "title"},
		{`{"title":"` + strings.Repeat("d", 129) + `"}`, "title"},
		{`{"visibility":"private"}`, "visibility"},
		{`{"type":"mega"}`, "type"},
		{`{"spaces":["nope"]}`, "spaces[0]"},
		{`{"spaces":"` + f.spaces[0] + `"}`, "spaces"},
		{`{"title":`, ""},
	}
	for _, tc := range bad {
		msg := alice.Do("POST", "/v1/orgs/"+f.org+"/sites", tc.body).Expect(http.StatusBadRequest).ErrorMessage()
		if !strings.Contains(msg, tc.field) {
			t.Errorf("%s: %q does not name %s", tc.body, msg, tc.field)
		}
	}
	if list := alice.Do("GET", "/v1/orgs/"+f.org+"/sites", nil).JSON(); list["count"] != 2.0 {
		t.Fatalf("rejected creates created sites: %v", list["count"])
	}

	// Update, with every limit.
	before := alice.Do("GET", f.path(id), nil).Expect(http.StatusOK).Body
	for _, tc := range []struct{ body, field string }{
		{`{"title":"X"}`, "title"},
		{`{"title":null}`, "title"},
		{`{"visibility":"in-collection"}`, "visibility"},
		{`{"basename":""}`, "basename"},
		{`{"basename":"` + strings.Repeat("b", 101) + `"}`, "basename"},
		{`{"basename":"a/b"}`, "basename"},
		{`{"hostname":"localhost"}`, "hostname"},
		{`{"hostname":"Docs.Example.com"}`, "hostname"},
		{`{"hostname":"` + strings.Repeat("a.", 256) + `com"}`, "hostname"},
		{`{"proxy":"example.com"}`, "proxy"},
		{`{"proxy":"https://example.com/docs"}`, "proxy"},
		{`{"proxy":"example.com/` + strings.Repeat("p", 512) + `"}`, "proxy"},
		{`{"adaptiveContent":{}}`, "adaptiveContent.enabled"},
		{`{"adaptiveContent":true}`, "adaptiveContent"},
		{`{"agentsContext":"all"}`, "agentsContext"},
		{`{"defaultSiteSpace":"nope"}`, "defaultSiteSpace"},
		{`{"defaultSiteSection":"nope"}`, "defaultSiteSection"},
		{`{"published":true}`, "published"},
	} {
		msg := alice.Do("PATCH", f.path(id), tc.body).Expect(http.StatusBadRequest).ErrorMessage()
		if !strings.Contains(msg, tc.field) {
			t.Errorf("%s: %q does not name %s", tc.body, msg, tc.field)
		}
	}
	if after := alice.Do("GET", f.path(id), nil).Body; string(after) != string(before) {
		t.Fatalf("rejected updates changed the site:\n%s\n%s", before, after)
	}
	updated := alice.Do("PATCH", f.path(id), `{"title":"Docs v2","visibility":"public","basename":"docs","hostname":"docs.acme.com",
		"adaptiveContent":{"enabled":true},"agentsContext":"excluded","proxy":"acme.com/help/center"}`).Expect(http.StatusOK).JSON()
	got := alice.Do("GET", f.path(id), nil).Expect(http.StatusOK).JSON()
	for _, s := range []map[string]any{updated, got} {
		for key, want := range map[string]string{"title": "Docs v2", "visibility": "public", "basename": "docs", "hostname": "docs.acme.com",
			"adaptiveContent": "map[enabled:true]", "agentsContext": "excluded", "proxy": "map[origin:acme.com/help/center target:https://docs.acme.com]"} {
			if fmt.Sprint(s[key]) != want {
				t.Errorf("%s = %v, want %v", key, s[key], want)
			}
		}
	}
	cleared := alice.Do("PATCH", f.path(id), `{"proxy":null,"hostname":null,"basename":null}`).Expect(http.StatusOK).JSON()
	for _, key := range []string{"proxy", "hostname", "basename"} {
		if _, ok := cleared[key]; ok {
			t.Errorf("%s not cleared: %v", key, cleared[key])
		}
	}
	// Hostnames are unique across sites, basenames within an organization.
	alice.Do("PATCH", f.path(id), `{"hostname":"docs.acme.com","basename":"docs"}`).Expect(http.StatusOK)
	other := defaults["id"].(string)
	alice.Do("PATCH", f.path(other), `{"hostname":"docs.acme.com"}`).Expect(http.StatusConflict).ErrorMessage()
	alice.Do("PATCH", f.path(other), `{"basename":"docs"}`).Expect(http.StatusConflict).ErrorMessage()

	// Filters of the list.
	for query, want := range map[string]int{"": 2, "?title=docs": 1, "?title=UNTITLED": 1, "?space=" + f.spaces[0]: 1,
		"?published=false": 2, "?published=true": 0, "?type=basic": 2, "?type=premium,ultimate": 0, "?title=%25": 0} {
		list := alice.Do("GET", "/v1/orgs/"+f.org+"/sites"+query, nil).Expect(http.StatusOK).JSON()
		if int(list["count"].(float64)) != want {
			t.Errorf("sites%s: %v items, want %d", query, list["count"], want)
		}
	}
	alice.Do("GET", "/v1/orgs/"+f.org+"/sites?published=maybe", nil).Expect(http.StatusBadRequest)
	alice.Do("GET", "/v1/orgs/"+f.org+"/sites?type=mega", nil).Expect(http.StatusBadRequest)

	// Delete.
	alice.Do("DELETE", f.path(other), nil).Expect(http.StatusNoContent)
	alice.Do("GET", f.path(other), nil).Expect(http.StatusNotFound).ErrorMessage()
	alice.Do("DELETE", f.path(other), nil).Expect(http.StatusNoContent)
	alice.Do("GET", f.path("nope"), nil).Expect(http.StatusNotFound)
	alice.Do("PATCH", f.path("nope"), `{"title":"Nope"}`).Expect(http.StatusNotFound)
}

func TestPublishedSiteAndShareKeys(t *testing.T) {
	t.Parallel()
	f := newSiteFixture(t, 2)
	alice := f.admin
	id := f.site(map[string]any{"title": "Docs", "spaces": f.spaces})

	alice.Do("GET", f.path(id, "/published"), nil).Expect(http.StatusNotFound).ErrorMessage()
	published := alice.Do("POST", f.path(id, "/publish"), nil).Expect(http.StatusOK).JSON()
	siteURL, ok := published["urls"].(map[string]any)["published"].(string)
	if published["published"] != true || !ok {
		t.Fatalf("published = %v", published)
	}
	profile := alice.Do("GET", f.path(id, "/published"), nil).Expect(http.StatusOK).JSON()
	structure := profile["structure"].(map[string]any)
	items := structure["structure"].([]any)
	if profile["object"] != "published-content-site" || structure["type"] != "siteSpaces" || len(items) != 2 {
		t.Fatalf("profile = %v", profile)
	}
	first := items[0].(map[string]any)
	if first["object"] != "site-space" || first["default"] != true || first["urls"].(map[string]any)["published"] != siteURL+"/space-0" {
		t.Errorf("first site space = %v", first)
	}

	// A share-link site resolves published addresses only with its share key.
	alice.Do("PATCH", f.path(id), `{"visibility":"share-link"}`).Expect(http.StatusOK)
	out := alice.GraphQL(`query($o: ID!, $s: ID!) { site(organizationId: $o, id: $s) { shareKey } }`, map[string]any{"o": f.org, "s": id})
	var key struct {
		Site struct{ ShareKey string } `json:"site"`
	}
	if err := jsonUnmarshal(out.Data, &key); err != nil || key.Site.ShareKey == "" {
		t.Fatalf("shareKey: %v %s %+v", err, out.Data, out.Errors)
	}
	without := alice.Do("GET", f.path(id, "/published"), nil).Expect(http.StatusOK).JSON()
	if _, ok := without["site"].(map[string]any)["urls"].(map[string]any)["published"]; ok {
		t.Errorf("share-link site resolved without its key: %v", without["site"])
	}
	wrong := alice.Do("GET", f.path(id, "/published?shareKey=wrong"), nil).Expect(http.StatusOK).JSON()
	if _, ok := wrong["site"].(map[string]any)["urls"].(map[string]any)["published"]; ok {
		t.Errorf("share-link site resolved with a wrong key")
	}
	with := alice.Do("GET", f.path(id, "/published?shareKey="+key.Site.ShareKey), nil).Expect(http.StatusOK).JSON()
	u, _ := with["site"].(map[string]any)["urls"].(map[string]any)["published"].(string)
	if !strings.HasSuffix(u, "?share="+key.Site.ShareKey) {
		t.Errorf("with the key: %q", u)
	}
	spaces := alice.Do("GET", f.path(id, "/site-spaces?shareKey="+key.Site.ShareKey), nil).Expect(http.StatusOK).JSON()
	if u, _ := spaces["items"].([]any)[0].(map[string]any)["urls"].(map[string]any)["published"].(string); !strings.Contains(u, "/space-0?share=") {
		t.Errorf("site space address with the key: %q", u)
	}

	// A reader cannot see the share key.
	reader := f.env.NewUser("Reader")
	reader.Join(f.org, store.RoleRead)
	out = reader.GraphQL(`query($o: ID!, $s: ID!) { site(organizationId: $o, id: $s) { shareKey } }`, map[string]any{"o": f.org, "s": id})
	if strings.Contains(string(out.Data), key.Site.ShareKey) {
		t.Errorf("a reader sees the share key: %s", out.Data)
	}
	reader.Do("POST", f.path(id, "/unpublish"), nil).Expect(http.StatusForbidden)

	alice.Do("POST", f.path(id, "/unpublish"), nil).Expect(http.StatusOK)
	alice.Do("GET", f.path(id, "/published"), nil).Expect(http.StatusNotFound)
}

func TestAdaptiveSchema(t *testing.T) {
	t.Parallel()
	f := newSiteFixture(t, 0)
	alice := f.admin
	id := f.site(map[string]any{"title": "Docs"})
	path := f.path(id, "/adaptive-schema")

	alice.Do("GET", path, nil).Expect(http.StatusNotFound).ErrorMessage()
	conds := alice.Do("GET", path+"/template-conditions", nil).Expect(http.StatusOK).JSON()
	if fmt.Sprint(conds["items"]) != "[]" {
		t.Errorf("conditions without a schema = %v", conds)
	}
	schema := `{"jsonSchema":{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","additionalProperties":false,"properties":{
		"isBetaUser":{"type":"boolean","description":"Whether the visitor is a Beta user."},
		"language":{"type":"string","enum":["en","fr"],"description":"Language"},
		"account":{"type":"object","description":"Account","additionalProperties":false,"properties":{"isAdmin":{"type":"boolean","description":"Account admin"}}},
		"unsigned":{"type":"object","description":"Unsigned claims of the site visitor.","additionalProperties":false,"properties":{
			"wantsDarkMode":{"type":"boolean","description":"Prefers dark mode"},"beta-tester":{"type":"boolean","description":"Tests betas"}}}}}}`
	put := alice.Do("PUT", path, schema).Expect(http.StatusOK).JSON()
	got := alice.Do("GET", path, nil).Expect(http.StatusOK).JSON()
	if put["object"] != "site-adaptive-schema" || fmt.Sprint(got) != fmt.Sprint(put) ||
		got["jsonSchema"].(map[string]any)["properties"].(map[string]any)["isBetaUser"] == nil {
		t.Fatalf("schema = %v", got)
	}
	conds = alice.Do("GET", path+"/template-conditions", nil).Expect(http.StatusOK).JSON()
	want := `[map[condition:visitor.claims.account.isAdmin == true description:Account admin] ` +
		`map[condition:visitor.claims.isBetaUser == true description:Whether the visitor is a Beta user.] ` +
		`map[condition:visitor.claims.unsigned["beta-tester"] == true description:Tests betas] ` +
		`map[condition:visitor.claims.unsigned.wantsDarkMode == true description:Prefers dark mode]]`
	if fmt.Sprint(conds["items"]) != want {
		t.Errorf("conditions =\n%v\nwant\n%v", conds["items"], want)
	}

	for _, body := range []string{
		`{}`,
		`{"jsonSchema":"object"}`,
		`{"jsonSchema":{"type":"array","properties":{},"additionalProperties":false}}`,
		`{"jsonSchema":{"type":"object","properties":{}}}`,
		`{"jsonSchema":{"type":"object","properties":{"x":{"type":"boolean"}},"additionalProperties":false}}`,
		`{"jsonSchema":{"type":"object","properties":{"x":{"type":"date","description":"d"}},"additionalProperties":false}}`,
		`{"jsonSchema":{"type":"object","properties":{},"additionalProperties":false,"$schema":"https://json-schema.org/draft/2020-12/schema"}}`,
		`{"jsonSchema":{"type":"object","properties":{"x":{"type":"string","description":"d","enum":"a"}},"additionalProperties":false}}`,
	} {
		msg := alice.Do("PUT", path, body).Expect(http.StatusBadRequest).ErrorMessage()
		if !strings.Contains(msg, "jsonSchema") {
			t.Errorf("%s: %q does not name jsonSchema", body, msg)
		}
	}
	if again := alice.Do("GET", path, nil).Expect(http.StatusOK).JSON(); fmt.Sprint(again) != fmt.Sprint(got) {
		t.Errorf("rejected schemas changed the schema")
	}
}
