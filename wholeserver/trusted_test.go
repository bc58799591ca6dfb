package wholeserver_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docsapi/docsapi/cmd/docsapi/server/servertest"
	"github.com/docsapi/docsapi/graph/engine"
)

// The documents of a front end's build: GraphQL Code Generator's manifest
// ({sha256: document}) and Relay's ({md5: document}, ids of its own).
const (
	trustedViewer = `query Viewer { viewer { id displayName } }`
	trustedRelay  = `query RelayOrgs { organizations(limit: 5) { items { id title } } }`
	trustedEvents = `subscription Events($s: ID!) { spaceEvents(spaceId: $s) { type spaceId } }`
	relayID       = "4f0a9c1e2d3b"
)

// trustedEnv starts a server running the documents of a manifest directory
// only.
func trustedEnv(t *testing.T) *servertest.Env {
	t.Helper()
	dir := t.TempDir()
	codegen, _ := json.Marshal(map[string]string{engine.DocumentHash(trustedViewer): trustedViewer,
		engine.DocumentHash(trustedEvents): trustedEvents})
	relay, _ := json.Marshal(map[string]string{relayID: trustedRelay})
	for name, body := range map[string][]byte{"persisted-documents.json": codegen, "relay.json": relay} {
		if err := os.WriteFile(filepath.Join(dir, name), body, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return servertest.New(t, servertest.Options{TrustedDocuments: dir})
}

// gqlPost posts a GraphQL request body as token and decodes the answer.
func gqlPost(t *testing.T, env *servertest.Env, token string, body any) *servertest.GraphQLResponse {
	t.Helper()
	res := env.Do("POST", "/graphql", token, body)
	out := &servertest.GraphQLResponse{Status: res.Status}
	res.Decode(out)
	return out
}

// errorCode is the code of the answer's only error ("" when it has none).
func errorCode(t *testing.T, out *servertest.GraphQLResponse) string {
	t.Helper()
	if len(out.Errors) == 0 {
		return ""
	}
	if len(out.Errors) != 1 {
		t.Fatalf("%d errors: %+v", len(out.Errors), out.Errors)
	}
	code, _ := out.Errors[0].Extensions["code"].(string)
	if code != "" && out.Errors[0].Extensions["status"] == nil {
		t.Errorf("error %s carries no extensions.status", code)
	}
	return code
}

func apq(hash string) map[string]any {
	return map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": hash}}
}

func TestTrustedDocuments(t *testing.T) {
	t.Parallel()
	env := trustedEnv(t)
	alice := env.NewUser("Alice")
	org := alice.NewOrg("Acme")
	space := alice.Do("POST", "/v1/orgs/"+org+"/spaces", `{"title":"Docs"}`).Expect(http.StatusCreated).String("id")
	viewerHash := engine.DocumentHash(trustedViewer)
	wantViewer := `"id":"` + alice.ID + `"`

	runs := []struct {
		name string
		body any
		want string // a piece of the data, or the error code
	}{
		{"ad-hoc query", map[string]any{"query": "{ viewer { id } }"}, engine.CodeTrustedDocumentRequired},
		{"a registered document sent in full", map[string]any{"query": trustedViewer}, wantViewer},
		{"a registered document altered", map[string]any{"query": trustedViewer + " "}, engine.CodeTrustedDocumentRequired},
		{"introspection", map[string]any{"query": "{ __schema { queryType { name } } }"}, engine.CodeTrustedDocumentRequired},
		{"apollo persisted query", map[string]any{"extensions": apq(viewerHash)}, wantViewer},
		{"apollo persisted query with its query", map[string]any{"query": trustedViewer, "extensions": apq(viewerHash)}, wantViewer},
		{"documentId with sha256: prefix", map[string]any{"documentId": "sha256:" + viewerHash}, wantViewer},
		{"documentId, bare hash", map[string]any{"documentId": viewerHash}, wantViewer},
		{"relay id", map[string]any{"documentId": relayID}, `"title":"Acme"`},
		{"relay document by its sha256", map[string]any{"extensions": apq(engine.DocumentHash(trustedRelay))}, `"title":"Acme"`},
		{"the registered id with another query", map[string]any{"query": "{ viewer { email } }", "extensions": apq(viewerHash)}, "BAD_REQUEST"},
		{"unknown hash", map[string]any{"extensions": apq(strings.Repeat("ab", 32))}, engine.CodePersistedQueryNotFound},
		{"unknown documentId", map[string]any{"documentId": "sha256:" + strings.Repeat("cd", 32)}, engine.CodePersistedQueryNotFound},
		// Apollo's link, told the hash is unknown, sends the query with it:
		// the query is not registered by that.
		{"unknown hash with its query", map[string]any{"query": "{ viewer { email } }", "extensions": apq(engine.DocumentHash("{ viewer { email } }"))}, engine.CodeTrustedDocumentRequired},
		{"the same hash again", map[string]any{"extensions": apq(engine.DocumentHash("{ viewer { email } }"))}, engine.CodePersistedQueryNotFound},
		{"malformed persistedQuery", map[string]any{"extensions": map[string]any{"persistedQuery": "x"}}, "BAD_REQUEST"},
		// The REST adapter's documents are registered too.
		{"a REST operation by its hash", map[string]any{"documentId": "sha256:" + engine.DocumentHash(restDocument(t, env, "getAuthenticatedUser"))}, wantViewer},
	}
	for _, run := range runs {
		out := gqlPost(t, env, alice.Token, run.body)
		if strings.ToUpper(run.want) == run.want {
			if code := errorCode(t, out); code != run.want {
				t.Errorf("%s: error %q, want %s: %+v %s", run.name, code, run.want, out.Errors, out.Data)
			}
			if len(out.Errors) > 0 && string(out.Data) != "" && string(out.Data) != "null" {
				t.Errorf("%s: data %s beside a request error", run.name, out.Data)
			}
			continue
		}
		if len(out.Errors) > 0 || !strings.Contains(string(out.Data), run.want) {
			t.Errorf("%s: %+v %s, want data with %s", run.name, out.Errors, out.Data, run.want)
		}
	}

	// GET: ?documentId= and ?extensions= name documents as a POST's body does.
	for _, q := range []string{"documentId=" + url.QueryEscape("sha256:"+viewerHash),
		"extensions=" + url.QueryEscape(`{"persistedQuery":{"version":1,"sha256Hash":"`+viewerHash+`"}}`)} {
		res := alice.Do("GET", "/graphql?"+q, nil).Expect(http.StatusOK)
		if !strings.Contains(string(res.Body), wantViewer) {
			t.Errorf("GET ?%s: %s", q, res.Body)
		}
	}
	res := alice.Do("GET", "/graphql?query="+url.QueryEscape("{ viewer { id } }"), nil)
	if !strings.Contains(string(res.Body), engine.CodeTrustedDocumentRequired) {
		t.Errorf("GET ad-hoc query: %d %s", res.Status, res.Body)
	}

	// Anonymous callers are held to registered documents too: no schema.
	if code := errorCode(t, gqlPost(t, env, "", map[string]any{"query": "{ __schema { queryType { name } } }"})); code != engine.CodeTrustedDocumentRequired {
		t.Errorf("anonymous introspection: %s", code)
	}

	// Every REST route keeps working in this mode: TestPermissionMatrix
	// runs the whole table under it; here a read and a write.
	alice.Do("GET", "/v1/spaces/"+space, nil).Expect(http.StatusOK)
	alice.Do("PATCH", "/v1/spaces/"+space, `{"title":"Renamed"}`).Expect(http.StatusOK)

	t.Run("developer token", func(t *testing.T) {
		dev := alice.NewDeveloperToken()
		out := gqlPost(t, env, dev, map[string]any{"query": "{ __schema { queryType { name } } }"})
		if len(out.Errors) > 0 || !strings.Contains(string(out.Data), `"Query"`) {
			t.Fatalf("developer introspection: %+v %s", out.Errors, out.Data)
		}
		out = gqlPost(t, env, dev, map[string]any{"query": "{ viewer { email } }"})
		if len(out.Errors) > 0 || !strings.Contains(string(out.Data), alice.Email) {
			t.Fatalf("developer ad-hoc query: %+v %s", out.Errors, out.Data)
		}
		// A developer's query sent with its hash runs, and registers nothing
		// for anyone, the developer included.
		adhoc := "{ viewer { displayName } }"
		out = gqlPost(t, env, dev, map[string]any{"query": adhoc, "extensions": apq(engine.DocumentHash(adhoc))})
		if len(out.Errors) > 0 {
			t.Fatalf("developer query with its hash: %+v", out.Errors)
		}
		for _, token := range []string{dev, alice.Token} {
			if code := errorCode(t, gqlPost(t, env, token, map[string]any{"extensions": apq(engine.DocumentHash(adhoc))})); code != engine.CodePersistedQueryNotFound {
				t.Errorf("a developer's query was registered: %s", code)
			}
		}
		// The playground's page is served as before (it holds no data; its
		// schema comes with a developer token in its Headers tab).
		pg := env.DoWith("GET", "/graphql", "", nil, http.Header{"Accept": {"text/html"}}).Expect(http.StatusOK)
		if !strings.Contains(pg.Header.Get("Content-Type"), "text/html") {
			t.Errorf("playground: %s", pg.Header.Get("Content-Type"))
		}
	})

	t.Run("websocket", func(t *testing.T) {
		c := connectWS(t, env, alice)
		c.send(map[string]any{"id": "adhoc", "type": "subscribe", "payload": map[string]any{
			"query": spaceEventsQuery, "variables": map[string]any{"s": space}}})
		if msg := c.failure("adhoc"); !strings.Contains(msg, engine.CodeTrustedDocumentRequired) {
			t.Fatalf("ad-hoc subscription: %s", msg)
		}
		c.send(map[string]any{"id": "trusted", "type": "subscribe", "payload": map[string]any{
			"variables": map[string]any{"s": space}, "extensions": apq(engine.DocumentHash(trustedEvents))}})
		waitSubscribers(t, env, 1)
		// A content edit (written with a developer token: the page's
		// mutation is not among the registered documents).
		dev := &servertest.User{Env: env, ID: alice.ID, Email: alice.Email, Token: alice.NewDeveloperToken()}
		createPage(t, dev, space, "Live", "text")
		if ev := c.event("trusted", "spaceEvents"); ev["spaceId"] != space {
			t.Fatalf("event: %v", ev)
		}
		// A developer's connection may subscribe with any document.
		d := connectWS(t, env, dev)
		d.subscribe(env, "dev", spaceEventsQuery, map[string]any{"s": space}, 2)
	})
}

// restDocument is the source of a REST operation as the server registers
// it (the operation and its fragments).
func restDocument(t *testing.T, env *servertest.Env, name string) string {
	t.Helper()
	for _, doc := range env.Server.API.Documents() {
		if strings.Contains(doc, "query "+name+"(") || strings.Contains(doc, "query "+name+" ") || strings.Contains(doc, "query "+name+"{") {
			return doc
		}
	}
	t.Fatalf("no REST document %s", name)
	return ""
}
