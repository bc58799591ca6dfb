package wholeserver_test

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/docsapi/docsapi/cmd/docsapi/server/servertest"
	"github.com/docsapi/docsapi/store"
)

// One error shape over /graphql, for every code: the media type the client
// accepts, extensions.code and extensions.status on each error, and the
// statuses of the GraphQL over HTTP specification (graph/engine/transport.go).
func TestGraphQLErrors(t *testing.T) {
	t.Parallel()
	env := servertest.New(t)
	alice := env.NewUser("Alice")
	org := alice.NewOrg("Acme")
	bob := env.NewUser("Bob")
	bob.Join(org, store.RoleRead)
	carol := env.NewUser("Carol") // of no organization

	deep := `{ site(organizationId: "o", id: "s") { structure { structure { ... on SiteSectionGroup { ` +
		strings.Repeat(`children { ... on SiteSectionGroup { `, 16) + `id` + strings.Repeat(` } }`, 16) + ` } } } } }`
	query := func(q string, vars map[string]any) string {
		b, _ := json.Marshal(map[string]any{"query": q, "variables": vars})
		return string(b)
	}
	get := func(q string) string { return "/graphql?query=" + url.QueryEscape(q) }
	// form is a GraphQL multipart request: operations (none when ""), its
	// map, and a file.
	const boundary = "docsapi-test-boundary"
	const formType = "multipart/form-data; boundary=" + boundary
	form := func(operations, fileMap string) string {
		var b strings.Builder
		w := multipart.NewWriter(&b)
		_ = w.SetBoundary(boundary)
		if operations != "" {
			_ = w.WriteField("operations", operations)
		}
		_ = w.WriteField("map", fileMap)
		part, _ := w.CreateFormFile("0", "a.txt")
		_, _ = part.Write([]byte("hello"))
		_ = w.Close()
		return b.String()
	}
	const (
		jsonMedia    = "application/json"
		graphqlMedia = "application/graphql-response+json"
	)
	type answer struct {
		status   int  // the HTTP status
		withData bool // whether the body has a data entry
	}
	for _, tc := range []struct {
		name                string
		method, path        string
		token, contentType  string
		body                string
		code                string // of the first error
		errStatus           int    // its extensions.status
		asJSON, asGraphQL   answer
		fieldErrorsWithData bool
	}{
		// Requests that are not GraphQL requests: 400 (405) in both types.
		{name: "malformed JSON", method: "POST", token: alice.Token, body: `{"query":`,
			code: "BAD_REQUEST", errStatus: 400, asJSON: answer{400, false}, asGraphQL: answer{400, false}},
		{name: "no query", method: "POST", token: alice.Token, body: `{"qeury":"{ viewer { id } }"}`,
			code: "BAD_REQUEST", errStatus: 400, asJSON: answer{400, false}, asGraphQL: answer{400, false}},
		{name: "a query that is not a string", method: "POST", token: alice.Token, body: `{"query":["{ viewer { id } }"]}`,
			code: "BAD_REQUEST", errStatus: 400, asJSON: answer{400, false}, asGraphQL: answer{400, false}},
		{name: "no body", method: "POST", token: alice.Token,
			code: "BAD_REQUEST", errStatus: 400, asJSON: answer{400, false}, asGraphQL: answer{400, false}},
		{name: "a body that is not JSON", method: "POST", token: alice.Token, contentType: "text/plain", body: `{ viewer { id } }`,
			code: "BAD_REQUEST", errStatus: 400, asJSON: answer{400, false}, asGraphQL: answer{400, false}},
		{name: "variables that are not JSON, by GET", method: "GET", path: get("{ viewer { id } }") + "&variables=%7B", token: alice.Token,
			code: "BAD_REQUEST", errStatus: 400, asJSON: answer{400, false}, asGraphQL: answer{400, false}},
		{name: "a mutation by GET", method: "GET", path: get(`mutation { createOrganization(input: {title: "By GET"}) { id } }`), token: alice.Token,
			code: "METHOD_NOT_ALLOWED", errStatus: 405, asJSON: answer{405, false}, asGraphQL: answer{405, false}},

		// GraphQL request errors: 200 as JSON, 400 as the GraphQL type, no data.
		{name: "a document that does not parse", method: "POST", token: alice.Token, body: query("{ viewer {", nil),
			code: "GRAPHQL_PARSE_FAILED", errStatus: 400, asJSON: answer{200, false}, asGraphQL: answer{400, false}},
		{name: "a document that does not parse, by GET", method: "GET", path: get("{ viewer {"), token: alice.Token,
			code: "GRAPHQL_PARSE_FAILED", errStatus: 400, asJSON: answer{200, false}, asGraphQL: answer{400, false}},
		{name: "an unknown field", method: "POST", token: alice.Token, body: query("{ nope }", nil),
			code: "GRAPHQL_VALIDATION_FAILED", errStatus: 400, asJSON: answer{200, false}, asGraphQL: answer{400, false}},
		{name: "a variable of the wrong type", method: "POST", token: alice.Token,
			body: query(`query($id: ID!) { organization(id: $id) { id } }`, map[string]any{"id": nil}),
			code: "GRAPHQL_VALIDATION_FAILED", errStatus: 400, asJSON: answer{200, false}, asGraphQL: answer{400, false}},
		{name: "an unknown operation name", method: "POST", token: alice.Token, body: `{"query":"query A { viewer { id } }","operationName":"B"}`,
			code: "GRAPHQL_VALIDATION_FAILED", errStatus: 400, asJSON: answer{200, false}, asGraphQL: answer{400, false}},
		{name: "too deep", method: "POST", token: alice.Token, body: query(deep, nil),
			code: "DEPTH_LIMIT_EXCEEDED", errStatus: 400, asJSON: answer{200, false}, asGraphQL: answer{400, false}},
		{name: "too complex", method: "POST", token: alice.Token, body: query("{ "+strings.Repeat("viewer { id } ", 2400)+"}", nil),
			code: "COMPLEXITY_LIMIT_EXCEEDED", errStatus: 400, asJSON: answer{200, false}, asGraphQL: answer{400, false}},
		{name: "an unknown persisted query", method: "POST", token: alice.Token,
			body: `{"extensions":{"persistedQuery":{"version":1,"sha256Hash":"` + strings.Repeat("ab", 32) + `"}}}`,
			code: "PERSISTED_QUERY_NOT_FOUND", errStatus: 400, asJSON: answer{200, false}, asGraphQL: answer{400, false}},

		// Not permitted: 401 in both types, a bad token or none alike.
		{name: "no token", method: "POST", body: query("{ viewer { id } }", nil),
			code: "UNAUTHENTICATED", errStatus: 401, asJSON: answer{401, false}, asGraphQL: answer{401, false}},
		{name: "no token, introspection beside data", method: "POST", body: query("{ __typename viewer { id } }", nil),
			code: "UNAUTHENTICATED", errStatus: 401, asJSON: answer{401, false}, asGraphQL: answer{401, false}},
		{name: "no token, a mutation", method: "POST", body: query(`mutation { createOrganization(input: {title: "Anonymous"}) { id } }`, nil),
			code: "UNAUTHENTICATED", errStatus: 401, asJSON: answer{401, false}, asGraphQL: answer{401, false}},
		{name: "no token, by GET", method: "GET", path: get("{ viewer { id } }"),
			code: "UNAUTHENTICATED", errStatus: 401, asJSON: answer{401, false}, asGraphQL: answer{401, false}},
		{name: "a bad token", method: "POST", token: "nobody", body: query("{ viewer { id } }", nil),
			code: "UNAUTHENTICATED", errStatus: 401, asJSON: answer{401, false}, asGraphQL: answer{401, false}},
		{name: "a bad token, by GET", method: "GET", path: get("{ viewer { id } }"), token: "nobody",
			code: "UNAUTHENTICATED", errStatus: 401, asJSON: answer{401, false}, asGraphQL: answer{401, false}},

		// Uploads (multipart requests) answer alike.
		{name: "a multipart form without operations", method: "POST", token: alice.Token, contentType: formType, body: form("", `{}`),
			code: "BAD_REQUEST", errStatus: 400, asJSON: answer{400, false}, asGraphQL: answer{400, false}},
		{name: "a multipart document that does not parse", method: "POST", token: alice.Token, contentType: formType,
			body: form(query(`mutation($file: Upload!) { uploadFile(spaceId: "s", file: $file) {`, map[string]any{"file": nil}), `{"0": ["variables.file"]}`),
			code: "GRAPHQL_PARSE_FAILED", errStatus: 400, asJSON: answer{200, false}, asGraphQL: answer{400, false}},
		{name: "a multipart upload without a token", method: "POST", contentType: formType,
			body: form(query(`mutation($file: Upload!) { uploadFile(spaceId: "s", file: $file) { id } }`, map[string]any{"file": nil}), `{"0": ["variables.file"]}`),
			code: "UNAUTHENTICATED", errStatus: 401, asJSON: answer{401, false}, asGraphQL: answer{401, false}},
		{name: "a multipart upload to no space", method: "POST", token: alice.Token, contentType: formType,
			body: form(query(`mutation($file: Upload!) { uploadFile(spaceId: "nope", file: $file) { id } }`, map[string]any{"file": nil}), `{"0": ["variables.file"]}`),
			code: "NOT_FOUND", errStatus: 404, asJSON: answer{200, true}, asGraphQL: answer{200, true}},

		// Field errors of an operation that ran: 200 with data in both.
		{name: "not found", method: "POST", token: carol.Token,
			body: query(`query($id: ID!) { organization(id: $id) { id } }`, map[string]any{"id": org}),
			code: "NOT_FOUND", errStatus: 404, asJSON: answer{200, true}, asGraphQL: answer{200, true}},
		{name: "forbidden", method: "POST", token: bob.Token,
			body: query(`mutation($id: ID!) { updateOrganization(id: $id, input: {title: "Mine"}) { id } }`, map[string]any{"id": org}),
			code: "FORBIDDEN", errStatus: 403, asJSON: answer{200, true}, asGraphQL: answer{200, true}},
		{name: "an invalid argument", method: "POST", token: alice.Token,
			body: query(`mutation($id: ID!) { updateOrganization(id: $id, input: {title: "x"}) { id } }`, map[string]any{"id": org}),
			code: "BAD_REQUEST", errStatus: 400, asJSON: answer{200, true}, asGraphQL: answer{200, true}},
	} {
		for _, media := range []string{jsonMedia, graphqlMedia} {
			t.Run(fmt.Sprintf("%s as %s", tc.name, media), func(t *testing.T) {
				want := tc.asJSON
				if media == graphqlMedia {
					want = tc.asGraphQL
				}
				path := cmp.Or(tc.path, "/graphql")
				var body io.Reader
				if tc.body != "" {
					body = strings.NewReader(tc.body)
				}
				req, _ := http.NewRequest(tc.method, env.URL+path, body)
				if tc.method == "POST" {
					req.Header.Set("Content-Type", cmp.Or(tc.contentType, jsonMedia))
				}
				req.Header.Set("Accept", media)
				if tc.token != "" {
					req.Header.Set("Authorization", "Bearer "+tc.token)
				}
				res, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer res.Body.Close()
				raw, _ := io.ReadAll(res.Body)
				if res.StatusCode != want.status || res.Header.Get("Content-Type") != media {
					t.Fatalf("%d %s, want %d %s: %s", res.StatusCode, res.Header.Get("Content-Type"), want.status, media, raw)
				}
				var out map[string]json.RawMessage
				if err := json.Unmarshal(raw, &out); err != nil {
					t.Fatalf("not a JSON object: %s", raw)
				}
				if _, has := out["data"]; has != want.withData {
					t.Errorf("data entry %v, want %v: %s", has, want.withData, raw)
				}
				var errs []servertest.GraphQLError
				if err := json.Unmarshal(out["errors"], &errs); err != nil || len(errs) == 0 {
					t.Fatalf("no errors: %s", raw)
				}
				// Every error carries a code and its status.
				for _, e := range errs {
					if code, _ := e.Extensions["code"].(string); code == "" || e.Extensions["status"] == nil || e.Message == "" {
						t.Errorf("an error without code, status or message: %+v", e)
					}
				}
				if errs[0].Extensions["code"] != tc.code || errs[0].Extensions["status"] != float64(tc.errStatus) {
					t.Errorf("code %v status %v, want %s %d: %s", errs[0].Extensions["code"], errs[0].Extensions["status"], tc.code, tc.errStatus, raw)
				}
				if res.StatusCode == http.StatusUnauthorized && res.Header.Get("WWW-Authenticate") == "" {
					t.Error("a 401 without WWW-Authenticate")
				}
				if res.StatusCode == http.StatusMethodNotAllowed && res.Header.Get("Allow") != "POST" {
					t.Errorf("a 405 with Allow %q", res.Header.Get("Allow"))
				}
			})
		}
	}

	// Nothing the refused requests asked for happened.
	out := alice.GraphQL(`{ organizations(limit: 100) { items { title } } }`, nil)
	if s := string(out.Data); strings.Contains(s, "By GET") || strings.Contains(s, "Anonymous") || strings.Contains(s, "Mine") {
		t.Fatalf("a refused mutation ran: %s", s)
	}
}
