package wholeserver_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/docsapi/docsapi/cmd/docsapi/server/servertest"
)

func TestGraphQLEndpoint(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Options{Debug: true})
	alice := env.NewUser("Alice")
	org := alice.NewOrg("Acme")

	// Introspection works without a token (the playground loads the schema
	// before the user pastes one); data does not.
	res := env.Do("POST", "/graphql", "", `{"query":"{ __schema { queryType { name } } }"}`).Expect(http.StatusOK)
	if !strings.Contains(string(res.Body), `"Query"`) {
		t.Fatalf("introspection: %s", res.Body)
	}
	// An operation that needs a caller, without a token or with a bad one:
	// 401 alike (TestGraphQLErrors).
	res = env.Do("POST", "/graphql", "", `{"query":"{ viewer { id } }"}`).Expect(http.StatusUnauthorized)
	if !strings.Contains(string(res.Body), "UNAUTHENTICATED") {
		t.Fatalf("anonymous data query: %s", res.Body)
	}
	env.Do("POST", "/graphql", "bad-token", `{"query":"{ viewer { id } }"}`).Expect(http.StatusUnauthorized)

	out := alice.GraphQL(`query($id: ID!) { organization(id: $id) { id title permissions { admin } } viewer { id } }`, map[string]any{"id": org})
	if len(out.Errors) > 0 || !strings.Contains(string(out.Data), `"title":"Acme"`) {
		t.Fatalf("query: %+v %s", out.Errors, out.Data)
	}
	stats, ok := out.Extensions["stats"].(map[string]any)
	if !ok || stats["sqlQueries"] == nil || stats["durationMs"] == nil {
		t.Fatalf("debug stats missing: %v", out.Extensions)
	}

	// Errors carry a code; another tenant's organization is not found.
	bob := env.NewUser("Bob")
	out = bob.GraphQL(`query($id: ID!) { organization(id: $id) { id } }`, map[string]any{"id": org})
	if len(out.Errors) != 1 || out.Errors[0].Extensions["code"] != "NOT_FOUND" {
		t.Fatalf("cross-tenant read: %+v", out.Errors)
	}

	// Abusive queries are rejected before anything runs.
	var q strings.Builder
	q.WriteString("{")
	for i := range 10 {
		fmt.Fprintf(&q, ` o%d: organizations(limit: 1000) { items { id title permissions { admin view ownTeam createContent createOpenAPISpec ingestConversations viewBilling listMembers listTeams listIntegrations listInstallations installIntegration } mergeRules { type rules { rule users expression } } urls { app location logo } trial { status count } } }`, i)
	}
	q.WriteString(" }")
	out = alice.GraphQL(q.String(), nil)
	if len(out.Errors) != 1 || out.Errors[0].Extensions["code"] != "COMPLEXITY_LIMIT_EXCEEDED" {
		t.Fatalf("complex query: %+v", out.Errors)
	}
	// Too deep: groups within groups, 16 levels of children.
	deep := `{ site(organizationId: "o", id: "s") { structure { structure { ... on SiteSectionGroup { ` +
		strings.Repeat(`children { ... on SiteSectionGroup { `, 16) + `id` + strings.Repeat(` } }`, 16) + ` } } } } }`
	out = alice.GraphQL(deep, nil)
	if len(out.Errors) != 1 || out.Errors[0].Extensions["code"] != "DEPTH_LIMIT_EXCEEDED" {
		t.Fatalf("deep query: %+v", out.Errors)
	}
	// The same field thousands of times: validation would compare every
	// pair of them (minutes of CPU); refused before it runs.
	out = alice.GraphQL("{ "+strings.Repeat("viewer { id } ", 2400)+"}", nil)
	if len(out.Errors) != 1 || out.Errors[0].Extensions["code"] != "COMPLEXITY_LIMIT_EXCEEDED" {
		t.Fatalf("repeated fields: %+v", out.Errors)
	}
	// A kilobyte of fragments each spreading the next twice: 2^40 fields,
	// which the complexity walk would expand one by one for hours.
	q.Reset()
	q.WriteString("{ viewer { ...F0 } }")
	for i := range 39 {
		fmt.Fprintf(&q, " fragment F%d on User { ...F%d ...F%d }", i, i+1, i+1)
	}
	q.WriteString(" fragment F39 on User { id }")
	out = alice.GraphQL(q.String(), nil)
	if len(out.Errors) != 1 || out.Errors[0].Extensions["code"] != "COMPLEXITY_LIMIT_EXCEEDED" {
		t.Fatalf("fragment bomb: %+v", out.Errors)
	}
}

// GraphQL over HTTP POST: the statuses and media types of the GraphQL over
// HTTP specification, a JSON envelope for every failure, and bodies that are
// bounded.
func TestGraphQLPostTransport(t *testing.T) {
	t.Parallel()
	env := servertest.New(t)
	alice := env.NewUser("Alice")
	big := `{"query":"{ viewer { id } }","variables":{"pad":"` + strings.Repeat("x", 2<<20) + `"}}`
	for _, tc := range []struct {
		name, accept, body string
		status             int
		contentType, want  string
	}{
		{"a query", "", `{"query":"{ viewer { id } }"}`, http.StatusOK, "application/json", `{"data":{"viewer":{"id":"`},
		{"a query asking for the GraphQL media type", "application/graphql-response+json", `{"query":"{ viewer { id } }"}`, http.StatusOK, "application/graphql-response+json", `{"data":{"viewer":`},
		{"malformed JSON", "", `{"query":`, http.StatusBadRequest, "application/json", `{"errors":[{"message":"the request body is not a JSON GraphQL request`},
		// A request error of a well-formed request: 200 for application/json,
		// 400 for the GraphQL media type, never a data entry.
		{"an invalid query", "", `{"query":"{ nope }"}`, http.StatusOK, "application/json", `{"errors":[{"message":"Cannot query field`},
		{"an invalid query, GraphQL media type", "application/graphql-response+json", `{"query":"{ nope }"}`, http.StatusBadRequest, "application/graphql-response+json", `{"errors":[`},
		{"the GraphQL media type preferred", "application/graphql-response+json, application/json;q=0.9", `{"query":"{ nope }"}`, http.StatusBadRequest, "application/graphql-response+json", `{"errors":[`},
		{"JSON preferred", "application/graphql-response+json;q=0.5, application/json", `{"query":"{ nope }"}`, http.StatusOK, "application/json", `{"errors":[`},
		{"a body too large", "", big, http.StatusRequestEntityTooLarge, "application/json", `{"errors":[{"message":"the request body is too large"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest("POST", env.URL+"/graphql", strings.NewReader(tc.body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+alice.Token)
			if tc.accept != "" {
				req.Header.Set("Accept", tc.accept)
			}
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			body, _ := io.ReadAll(res.Body)
			if res.StatusCode != tc.status || res.Header.Get("Content-Type") != tc.contentType || !strings.HasPrefix(string(body), tc.want) {
				t.Fatalf("%d %s %s", res.StatusCode, res.Header.Get("Content-Type"), body)
			}
			if !json.Valid(body) {
				t.Fatalf("not JSON: %s", body)
			}
		})
	}
}

// Automatic persisted queries: a client sends a query's hash alone, and the
// query itself only when the server does not know the hash yet.
func TestAutomaticPersistedQueries(t *testing.T) {
	t.Parallel()
	env := servertest.New(t)
	alice := env.NewUser("Alice")
	const query = `{ viewer { id } }`
	sum := sha256.Sum256([]byte(query))
	hash := hex.EncodeToString(sum[:])
	ext := map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": hash}}

	res := alice.Do("POST", "/graphql", map[string]any{"extensions": ext})
	if res.Status != http.StatusOK || !strings.Contains(string(res.Body), "PersistedQueryNotFound") {
		t.Fatalf("unknown hash: %d %s", res.Status, res.Body)
	}
	want := `{"data":{"viewer":{"id":"` + alice.ID + `"}}}`
	if res := alice.Do("POST", "/graphql", map[string]any{"query": query, "extensions": ext}); string(res.Body) != want {
		t.Fatalf("query with its hash: %d %s", res.Status, res.Body)
	}
	if res := alice.Do("POST", "/graphql", map[string]any{"extensions": ext}); string(res.Body) != want {
		t.Fatalf("hash alone, once known: %d %s", res.Status, res.Body)
	}
	wrong := map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": strings.Repeat("0", 64)}}
	res = alice.Do("POST", "/graphql", map[string]any{"query": query, "extensions": wrong})
	// Refused before it is parsed, as a request that is not one (BAD_REQUEST):
	// 400 in both media types.
	if res.Status != http.StatusBadRequest || !strings.Contains(string(res.Body), "provided APQ hash does not match query") || strings.Contains(string(res.Body), alice.ID) {
		t.Fatalf("a hash that is not the query's: %d %s", res.Status, res.Body)
	}
}

// aliasedDocument is a query of outer aliases of parent, each spreading a
// fragment (on type on) of inner aliases of field: outer × inner fields
// from a document of outer + inner, as an attacker multiplies work.
func aliasedDocument(parent, on, field string, outer, inner int) string {
	var b strings.Builder
	b.WriteString("query {")
	for i := range outer {
		fmt.Fprintf(&b, " a%d: %s { ...F }", i, parent)
	}
	fmt.Fprintf(&b, " } fragment F on %s {", on)
	for i := range inner {
		fmt.Fprintf(&b, " s%d: %s", i, field)
	}
	b.WriteString(" }")
	return b.String()
}

type multipliedCase struct {
	name, doc string
	refused   bool
}

// checkMultipliedCosts runs each document as u: a refused one must be
// COMPLEXITY_LIMIT_EXCEEDED before anything runs (no data), the others
// answered with answer in their data.
func checkMultipliedCosts(t *testing.T, u *servertest.User, answer string, cases []multipliedCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out := u.GraphQL(tc.doc, nil)
			switch {
			case tc.refused && (len(out.Errors) != 1 || out.Errors[0].Extensions["code"] != "COMPLEXITY_LIMIT_EXCEEDED" || len(out.Data) > 0):
				t.Fatalf("want COMPLEXITY_LIMIT_EXCEEDED and no data: %+v %.200s", out.Errors, out.Data)
			case !tc.refused && (len(out.Errors) > 0 || !strings.Contains(string(out.Data), answer)):
				t.Fatalf("want an answer with %s: %+v %.200s", answer, out.Errors, out.Data)
			}
		})
	}
}

// A list runs its queries whatever its page's size, so a list costs them
// besides its items (graph.ListQueryCost): aliases of one-item lists
// multiplied by fragment spreads (10,000 member lists with their counts,
// two seconds of database time) are refused before any runs.
func TestListsCostTheirQueries(t *testing.T) {
	t.Parallel()
	env := servertest.New(t)
	alice := env.NewUser("Alice")
	org := alice.NewOrg("Acme")
	ofOrg, members := `organization(id: "`+org+`")`, `members(limit: 1) { count }`
	checkMultipliedCosts(t, alice, `"count":1`, []multipliedCase{
		{"one list", aliasedDocument(ofOrg, "Organization", members, 1, 1), false},
		{"a thousand lists", aliasedDocument(ofOrg, "Organization", members, 10, 100), false},
		{"10,000 lists", aliasedDocument(ofOrg, "Organization", members, 100, 100), true},
	})
}
