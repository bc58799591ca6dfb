package wholeserver_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/docsapi/docsapi/cmd/docsapi/server/servertest"
	"github.com/docsapi/docsapi/graph/playground"
)

const browserAccept = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"

func get(t *testing.T, rawURL string, header map[string]string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest("GET", rawURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, string(b)
}

// Browsers get GraphiQL at /graphql, without a token; GraphQL clients get
// GraphQL there as before.
func TestPlayground(t *testing.T) {
	t.Parallel()
	env := servertest.New(t)

	res, page := get(t, env.URL+"/graphql", map[string]string{"Accept": browserAccept})
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "text/html; charset=utf-8" ||
		!strings.Contains(page, "graphql/playground/graphiql.min.js?v=") || !strings.Contains(page, `id="graphiql-config"`) {
		t.Fatalf("page: status %d, Content-Type %q:\n%s", res.StatusCode, res.Header.Get("Content-Type"), page)
	}
	if res.Header.Get("Content-Security-Policy") == "" {
		t.Error("no Content-Security-Policy on the page")
	}

	res, js := get(t, env.URL+"/graphql/playground/graphiql.min.js", nil)
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "text/javascript; charset=utf-8" || len(js) < 100_000 {
		t.Fatalf("graphiql.min.js: status %d, Content-Type %q, %d bytes", res.StatusCode, res.Header.Get("Content-Type"), len(js))
	}
	// Assets need no token, and ignore a bad one.
	res, _ = get(t, env.URL+"/graphql/playground/boot.js", map[string]string{"Authorization": "Bearer nope"})
	if res.StatusCode != http.StatusOK {
		t.Fatalf("boot.js with a bad token: %d", res.StatusCode)
	}
	res, _ = get(t, env.URL+"/graphql/playground/nothing.js", nil)
	if res.StatusCode != http.StatusNotFound {
		t.Fatalf("unknown asset: %d", res.StatusCode)
	}

	// POST is GraphQL.
	alice := env.NewUser("Alice")
	out := alice.GraphQL(`{ viewer { id } }`, nil)
	if len(out.Errors) > 0 || !strings.Contains(string(out.Data), alice.ID) {
		t.Fatalf("POST /graphql: %+v %s", out.Errors, out.Data)
	}
	// So is a GET with ?query=, even from a browser, and a GET without a
	// preference for HTML.
	for _, accept := range []string{browserAccept, "application/json", ""} {
		res, body := get(t, env.URL+"/graphql?query="+url.QueryEscape("{ viewer { id } }"),
			map[string]string{"Accept": accept, "Authorization": "Bearer " + alice.Token})
		if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "application/") ||
			!strings.Contains(body, alice.ID) {
			t.Fatalf("GET ?query= with Accept %q: status %d, Content-Type %q: %s", accept, res.StatusCode, res.Header.Get("Content-Type"), body)
		}
	}
	res, body := get(t, env.URL+"/graphql", map[string]string{"Accept": "application/json"})
	if strings.Contains(body, "<html") || !strings.HasPrefix(res.Header.Get("Content-Type"), "application/") {
		t.Fatalf("GET /graphql for JSON: %s", body)
	}
}

// The playground's example tabs run against the schema, with the variables
// filled in, and return data.
func TestPlaygroundExamples(t *testing.T) {
	t.Parallel()
	env := servertest.New(t)
	alice := env.NewUser("Alice")
	org := alice.NewOrg("Acme")
	site := buildSiteTree(t, env, alice, org, 1, 1, 1, 1)
	ids := map[string]string{playground.OrganizationPlaceholder: org, playground.SitePlaceholder: site}

	// The query the page runs with a new token finds these ids.
	out := alice.GraphQL(playground.IDsQuery, nil)
	if out.Status != http.StatusOK || len(out.Errors) > 0 {
		t.Fatalf("IDsQuery: status %d, errors %+v", out.Status, out.Errors)
	}
	mustContain(t, "IDsQuery", out.Data, `"displayName":"Alice"`, `"id":"`+org+`"`, `"id":"`+site+`"`)

	for _, e := range playground.Examples {
		query, err := e.Query()
		if err != nil {
			t.Fatal(err)
		}
		vars := map[string]any{}
		if e.Variables != "" {
			var placeholders map[string]string
			if err := json.Unmarshal([]byte(e.Variables), &placeholders); err != nil {
				t.Fatalf("%s: variables: %v", e.File, err)
			}
			for k, v := range placeholders {
				id, ok := ids[v]
				if !ok {
					t.Fatalf("%s: variable %s: unknown placeholder %q", e.File, k, v)
				}
				vars[k] = id
			}
		}
		out := alice.GraphQL(query, vars)
		if out.Status != http.StatusOK || len(out.Errors) > 0 {
			t.Fatalf("%s: status %d, errors %+v", e.File, out.Status, out.Errors)
		}
		switch e.File {
		case "viewer.graphql":
			mustContain(t, e.File, out.Data, `"title":"Acme"`, alice.ID)
		case "site-tree.graphql":
			mustContain(t, e.File, out.Data, `"title":"Group 0"`, `"title":"G0 S0"`, `"title":"Outside 0 0"`)
		case "spaces.graphql":
			mustContain(t, e.File, out.Data, `"title":"G0 S0 0"`, `"title":"Outside 0 0"`)
		default:
			t.Errorf("%s: no expectation", e.File)
		}
	}
}

func mustContain(t *testing.T, name string, data json.RawMessage, subs ...string) {
	t.Helper()
	for _, s := range subs {
		if !strings.Contains(string(data), s) {
			t.Fatalf("%s: no %s in %s", name, s, data)
		}
	}
}
