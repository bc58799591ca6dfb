package wholeserver_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docsapi/docsapi/cmd/docsapi/server/servertest"
	"github.com/docsapi/docsapi/graph/jobs"
	"github.com/docsapi/docsapi/store"
)

// Tests of OpenAPI specifications (graph/openapi_spec.go). Not to
// be confused with openapi_test.go, about this server's own OpenAPI document.

const petstore30 = `{
  "openapi": "3.0.3",
  "info": {"title": "Petstore", "version": "1.0.0"},
  "paths": {
    "/pets": {
      "get": {
        "operationId": "listPets",
        "responses": {"200": {"description": "The pets", "content": {"application/json": {"schema": {"type": "array", "items": {"$ref": "#/components/schemas/Pet"}}}}}}
      }
    }
  },
  "components": {"schemas": {"Pet": {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}}}}}
}`

const zoo31 = `openapi: 3.1.0
info:
  title: Zoo
  version: 2.0.0
paths:
  /animals:
    get:
      operationId: listAnimals
      responses:
        '200':
          description: The animals
          content:
            application/json:
              schema:
                $ref: './schemas/animal.yaml'
`

const animalSchema = `type: object
required: [species]
properties:
  species:
    type: string
    description: The animal's zoological species
`

// zoo31Inline is zoo31 with its schema inline: a text has no address its
// relative $refs could be resolved against.
const zoo31Inline = `openapi: 3.1.0
info:
  title: Zoo
  version: 2.0.0
paths:
  /animals:
    get:
      operationId: listAnimals
      responses:
        '200':
          description: The animals
          content:
            application/json:
              schema:
                type: object
                properties:
                  species:
                    type: string
`

const swagger20 = `{
  "swagger": "2.0",
  "info": {"title": "Legacy", "version": "1.0"},
  "paths": {"/things": {"get": {"responses": {"200": {"description": "The things"}}}}}
}`

// specSource is a loopback server of OpenAPI documents whose content tests
// change as they go. /slow never answers before the client gives up.
type specSource struct {
	*httptest.Server
	mu    sync.Mutex
	files map[string]string
}

func newSpecSource(t *testing.T) *specSource {
	t.Helper()
	s := &specSource{files: map[string]string{
		"/v30/openapi.json":            petstore30,
		"/v31/openapi.yaml":            zoo31,
		"/v31/schemas/animal.yaml":     animalSchema,
		"/swagger.json":                swagger20,
		"/garbage.txt":                 "<html><body>This is not an API description.</body></html>",
		"/not-openapi.json":            `{"name": "a package.json, perhaps", "version": "1.0.0"}`,
		"/invalid.yaml":                "openapi: 3.0.3\ninfo:\n  title: No version\npaths:\n  /x:\n    get:\n      responses: 12\n",
		"/big.yaml":                    "openapi: 3.0.3\n# " + strings.Repeat("x", 256<<10) + "\n",
		"/mutable/openapi.yaml":        zoo31,
		"/mutable/schemas/animal.yaml": animalSchema,
	}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			<-r.Context().Done() // until the client gives up
			return
		}
		s.mu.Lock()
		body, ok := s.files[r.URL.Path]
		s.mu.Unlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *specSource) set(path, body string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.files[path] = body
}

// waitProcessed polls the spec until its processing is complete.
func waitProcessed(t *testing.T, u *servertest.User, org, slug string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		spec := u.Do("GET", "/v1/orgs/"+org+"/openapi/"+slug, nil).Expect(http.StatusOK).JSON()
		if spec["processingState"] == "complete" {
			return spec
		}
		if time.Now().After(deadline) {
			t.Fatalf("spec %s not processed in time: %v", slug, spec)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func newOpenAPIEnv(t *testing.T) (*servertest.Env, *servertest.User, string, *specSource) {
	t.Helper()
	env := servertest.New(t, servertest.Options{Jobs: true, OutboundTimeout: 2 * time.Second, OutboundMaxBytes: 64 << 10})
	owner := env.NewUser("Owner")
	return env, owner, owner.NewOrg("Acme"), newSpecSource(t)
}

func TestOpenAPISpecLifecycle(t *testing.T) {
	t.Parallel()
	env, owner, org, src := newOpenAPIEnv(t)
	base := "/v1/orgs/" + org + "/openapi"

	// Created pending; processed in the background into one version.
	created := owner.Do("POST", base, map[string]any{"slug": "zoo", "source": map[string]any{"url": src.URL + "/mutable/openapi.yaml"}}).
		Expect(http.StatusCreated).JSON()
	if created["processingState"] != "pending" || created["object"] != "openapi-spec" || created["visibility"] != "private" {
		t.Fatalf("created: %v", created)
	}
	if created["lastVersion"] != nil || created["lastProcessedAt"] != nil {
		t.Fatalf("a new spec has no version yet: %v", created)
	}
	spec := waitProcessed(t, owner, org, "zoo")
	if spec["lastProcessErrorCode"] != nil || len(spec["lastProcessedErrors"].([]any)) != 0 || spec["lastProcessedAt"] == nil {
		t.Fatalf("processed: %v", spec)
	}
	first, _ := spec["lastVersion"].(string)
	if first == "" {
		t.Fatalf("no version: %v", spec)
	}
	perms := spec["permissions"].(map[string]any)
	if perms["view"] != true || perms["edit"] != true {
		t.Fatalf("owner's permissions: %v", perms)
	}
	reader := env.NewUser("Reader")
	reader.Join(org, store.RoleRead)
	if p := reader.Do("GET", base+"/zoo", nil).Expect(http.StatusOK).JSON()["permissions"].(map[string]any); p["view"] != true || p["edit"] != false {
		t.Fatalf("a reader's permissions: %v", p)
	}
	if spec["urls"].(map[string]any)["published"] != nil {
		t.Fatalf("a private spec has no published address: %v", spec["urls"])
	}

	// The version, by id and as latest; its content: the files fetched and
	// the bundled document, which inlines the external $ref.
	latest := owner.Do("GET", base+"/zoo/versions/latest", nil).Expect(http.StatusOK).JSON()
	byID := owner.Do("GET", base+"/zoo/versions/"+first, nil).Expect(http.StatusOK).JSON()
	if latest["id"] != first || byID["id"] != first || latest["object"] != "openapi-spec-version" {
		t.Fatalf("latest %v, by id %v", latest, byID)
	}
	content := owner.Do("GET", base+"/zoo/versions/latest/content", nil).Expect(http.StatusOK).JSON()
	fsys := content["filesystem"].(map[string]any)
	files := fsys["files"].(map[string]any)
	if fsys["entryPoint"] != "openapi.yaml" || files["openapi.yaml"] != zoo31 || files["schemas/animal.yaml"] != animalSchema {
		t.Fatalf("filesystem: %v", fsys)
	}
	raw := getRaw(t, content["url"].(string), http.StatusOK)
	if !strings.Contains(raw, "zoological species") || strings.Contains(raw, "animal.yaml") || !strings.Contains(raw, "openapi: 3.1.0") {
		t.Fatalf("bundled document:\n%s", raw)
	}
	if byIDContent := owner.Do("GET", base+"/zoo/versions/"+first+"/content", nil).Expect(http.StatusOK).JSON(); byIDContent["filesystem"] == nil {
		t.Fatalf("content by id: %v", byIDContent)
	}
	// The digest is the document's ETag: a client that has it gets 304.
	conditional := func(etag string) int {
		t.Helper()
		req, _ := http.NewRequest("GET", content["url"].(string), nil)
		req.Header.Set("If-None-Match", etag)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := conditional(`"another"`); got != http.StatusOK {
		t.Fatalf("another ETag: %d", got)
	}
	head, err := http.Head(content["url"].(string))
	if err != nil {
		t.Fatal(err)
	}
	head.Body.Close()
	if got := conditional(head.Header.Get("ETag")); got != http.StatusNotModified {
		t.Fatalf("the same ETag (%s): %d", head.Header.Get("ETag"), got)
	}
	// The signed address is the only way in without a token.
	getRaw(t, strings.Replace(content["url"].(string), "signature=", "signature=x", 1), http.StatusNotFound)

	// Fetching the same content again records the processing, no version.
	env.Clock.Advance(time.Hour)
	owner.Do("PUT", base+"/zoo", map[string]any{"source": map[string]any{"url": src.URL + "/mutable/openapi.yaml"}}).Expect(http.StatusOK)
	spec = waitProcessed(t, owner, org, "zoo")
	if spec["lastVersion"] != first || spec["lastProcessedAt"] != env.Clock.Now().UTC().Format("2006-01-02T15:04:05.000Z") {
		t.Fatalf("unchanged re-fetch: %v", spec)
	}
	versions := owner.Do("GET", base+"/zoo/versions", nil).Expect(http.StatusOK).JSON()["items"].([]any)
	if len(versions) != 1 {
		t.Fatalf("unchanged content made a version: %v", versions)
	}

	// A change in a referenced file is a change of the bundled document.
	src.set("/mutable/schemas/animal.yaml", strings.Replace(animalSchema, "zoological species", "Latin name", 1))
	env.Clock.Advance(time.Hour)
	owner.Do("PUT", base+"/zoo", map[string]any{"source": map[string]any{"url": src.URL + "/mutable/openapi.yaml"}}).Expect(http.StatusOK)
	spec = waitProcessed(t, owner, org, "zoo")
	second, _ := spec["lastVersion"].(string)
	if second == "" || second == first {
		t.Fatalf("changed content, same version: %v", spec)
	}
	versions = owner.Do("GET", base+"/zoo/versions", nil).Expect(http.StatusOK).JSON()["items"].([]any)
	if len(versions) != 2 || versions[0].(map[string]any)["id"] != second || versions[1].(map[string]any)["id"] != first {
		t.Fatalf("versions, newest first: %v", versions)
	}
	content = owner.Do("GET", base+"/zoo/versions/latest/content", nil).Expect(http.StatusOK).JSON()
	if raw := getRaw(t, content["url"].(string), http.StatusOK); !strings.Contains(raw, "Latin name") {
		t.Fatalf("latest document:\n%s", raw)
	}
	// The first version is kept as it was.
	old := owner.Do("GET", base+"/zoo/versions/"+first+"/content", nil).Expect(http.StatusOK).JSON()
	if raw := getRaw(t, old["url"].(string), http.StatusOK); !strings.Contains(raw, "zoological species") {
		t.Fatalf("first document:\n%s", raw)
	}

	// Public: a published address anyone can read; private again: gone.
	pub := owner.Do("PATCH", base+"/zoo", `{"visibility":"public"}`).Expect(http.StatusOK).JSON()
	published, _ := pub["urls"].(map[string]any)["published"].(string)
	if pub["visibility"] != "public" || published == "" {
		t.Fatalf("public: %v", pub)
	}
	if raw := getRaw(t, published, http.StatusOK); !strings.Contains(raw, "Latin name") {
		t.Fatalf("published document:\n%s", raw)
	}
	owner.Do("PATCH", base+"/zoo", `{"visibility":"private"}`).Expect(http.StatusOK)
	getRaw(t, published, http.StatusNotFound)

	// PUT of a new slug creates it (201); the list has both.
	put := owner.Do("PUT", base+"/petstore", map[string]any{"source": map[string]any{"url": src.URL + "/v30/openapi.json"}}).Expect(http.StatusCreated).JSON()
	if put["slug"] != "petstore" || put["processingState"] != "pending" {
		t.Fatalf("put: %v", put)
	}
	pet := waitProcessed(t, owner, org, "petstore")
	if pet["lastProcessErrorCode"] != nil || pet["lastVersion"] == nil {
		t.Fatalf("3.0 JSON document: %v", pet)
	}
	petContent := owner.Do("GET", base+"/petstore/versions/latest/content", nil).Expect(http.StatusOK).JSON()
	if raw := getRaw(t, petContent["url"].(string), http.StatusOK); !strings.HasPrefix(raw, "{") || !strings.Contains(raw, `"listPets"`) {
		t.Fatalf("a JSON source is served as JSON:\n%s", raw)
	}
	list := owner.Do("GET", base, nil).Expect(http.StatusOK).JSON()["items"].([]any)
	if len(list) != 2 || list[0].(map[string]any)["slug"] != "zoo" || list[1].(map[string]any)["slug"] != "petstore" {
		t.Fatalf("list: %v", list)
	}

	// Delete: 205, then 204; its versions are gone with it.
	owner.Do("DELETE", base+"/zoo", nil).Expect(http.StatusResetContent)
	owner.Do("DELETE", base+"/zoo", nil).Expect(http.StatusNoContent)
	owner.Do("GET", base+"/zoo", nil).Expect(http.StatusNotFound).ErrorMessage()
	owner.Do("GET", base+"/zoo/versions/"+first, nil).Expect(http.StatusNotFound)
	getRaw(t, content["url"].(string), http.StatusNotFound)
}

// A specification published from a text (GitBook's CLI publishing a file
// sends {"source": {"text": ...}}): processed as a fetched one is, its
// version's files are the text; it has no sourceURL; a put of the same text
// processes it again without a new version; a put of a URL or of another
// text replaces its source.
func TestOpenAPISpecFromText(t *testing.T) {
	t.Parallel()
	env, owner, org, src := newOpenAPIEnv(t)
	base := "/v1/orgs/" + org + "/openapi"

	created := owner.Do("POST", base, map[string]any{"slug": "zoo", "source": map[string]any{"text": zoo31Inline}}).Expect(http.StatusCreated).JSON()
	if created["processingState"] != "pending" || created["sourceURL"] != nil {
		t.Fatalf("created from a text: %v", created)
	}
	spec := waitProcessed(t, owner, org, "zoo")
	first, _ := spec["lastVersion"].(string)
	if first == "" || spec["lastProcessErrorCode"] != nil || spec["sourceURL"] != nil {
		t.Fatalf("processed: %v", spec)
	}
	content := owner.Do("GET", base+"/zoo/versions/latest/content", nil).Expect(http.StatusOK).JSON()
	fsys := content["filesystem"].(map[string]any)
	if fsys["entryPoint"] != "openapi.yaml" || len(fsys["files"].(map[string]any)) != 1 || fsys["files"].(map[string]any)["openapi.yaml"] != zoo31Inline {
		t.Fatalf("filesystem: %v", fsys)
	}
	if raw := getRaw(t, content["url"].(string), http.StatusOK); !strings.Contains(raw, "listAnimals") {
		t.Fatalf("document:\n%s", raw)
	}
	// GraphQL says the same: no source URL.
	var gql struct {
		Organization struct{ OpenAPISpec map[string]any }
	}
	if err := json.Unmarshal(owner.GraphQL(`query($o: ID!) { organization(id: $o) { openAPISpec(slug: "zoo") { sourceURL lastVersion } } }`,
		map[string]any{"o": org}).Data, &gql); err != nil {
		t.Fatal(err)
	}
	if got := gql.Organization.OpenAPISpec; got["sourceURL"] != nil || got["lastVersion"] != first {
		t.Fatalf("GraphQL: %v", got)
	}

	// The same text again: processed again, no new version.
	env.Clock.Advance(time.Hour)
	owner.Do("PUT", base+"/zoo", map[string]any{"source": map[string]any{"text": zoo31Inline}}).Expect(http.StatusOK)
	spec = waitProcessed(t, owner, org, "zoo")
	if spec["lastVersion"] != first || spec["lastProcessedAt"] != env.Clock.Now().UTC().Format("2006-01-02T15:04:05.000Z") {
		t.Fatalf("the same text again: %v", spec)
	}
	// A URL replaces the text, and a JSON text the URL.
	owner.Do("PUT", base+"/zoo", map[string]any{"source": map[string]any{"url": src.URL + "/v30/openapi.json"}}).Expect(http.StatusOK)
	spec = waitProcessed(t, owner, org, "zoo")
	if spec["sourceURL"] != src.URL+"/v30/openapi.json" || spec["lastVersion"] == first {
		t.Fatalf("from a URL: %v", spec)
	}
	owner.Do("PUT", base+"/zoo", map[string]any{"source": map[string]any{"text": petstore30}}).Expect(http.StatusOK)
	spec = waitProcessed(t, owner, org, "zoo")
	if spec["sourceURL"] != nil || spec["lastProcessErrorCode"] != nil {
		t.Fatalf("from a JSON text: %v", spec)
	}
	content = owner.Do("GET", base+"/zoo/versions/latest/content", nil).Expect(http.StatusOK).JSON()
	if fsys := content["filesystem"].(map[string]any); fsys["entryPoint"] != "openapi.json" || fsys["files"].(map[string]any)["openapi.json"] != petstore30 {
		t.Fatalf("a JSON text's filesystem: %v", fsys)
	}
	// A PUT of a new slug from a text creates it.
	owner.Do("PUT", base+"/pets", map[string]any{"source": map[string]any{"text": petstore30}}).Expect(http.StatusCreated)

	// Texts that fail: recorded as fetched documents' failures are. A text
	// naming other files (relative or absolute) cannot have them fetched.
	absolute := strings.Replace(zoo31, "./schemas/animal.yaml", src.URL+"/v31/schemas/animal.yaml", 1)
	for _, tc := range []struct{ slug, text, code, message string }{
		{"relative-ref", zoo31, "FETCH_ERROR", `refers to the file "schemas/animal.yaml": a specification given as text must hold its own definitions`},
		{"absolute-ref", absolute, "FETCH_ERROR", `refers to the file "v31/schemas/animal.yaml"`},
		{"not-openapi", "<html>not an API description</html>", "PARSE_ERROR", "not an OpenAPI or Swagger document"},
		{"invalid", "openapi: 3.0.3\ninfo:\n  title: No version\npaths:\n  /x:\n    get:\n      responses: 12\n", "PARSE_ERROR", "$.info: missing property 'version'"},
		// Where each problem is, as a JSONPath, and what it is.
		{"bad-parameter", "openapi: 3.1.0\ninfo:\n  title: Pets\n  version: '1'\npaths:\n  /pets/{id}:\n    get:\n      parameters:\n        - name: id\n          in: body\n      responses:\n        '200':\n          description: A pet\n",
			"PARSE_ERROR", "$.paths['/pets/{id}'].get.parameters[0].in: value must be one of 'query', 'header', 'path', 'cookie'"},
		{"bad-name", "openapi: 3.1.0\ninfo:\n  title: Pets\n  version: '1'\ncomponents:\n  schemas:\n    'bad name!':\n      type: object\npaths: {}\n",
			"PARSE_ERROR", "$.components.schemas['bad name!']: invalid property name: 'bad name!' does not match pattern '^[a-zA-Z0-9._-]+$'"},
	} {
		owner.Do("POST", base, map[string]any{"slug": tc.slug, "source": map[string]any{"text": tc.text}}).Expect(http.StatusCreated)
		spec := waitProcessed(t, owner, org, tc.slug)
		errs, _ := spec["lastProcessedErrors"].([]any)
		if spec["lastProcessErrorCode"] != tc.code || len(errs) == 0 || spec["lastVersion"] != nil ||
			!strings.Contains(errs[0].(map[string]any)["message"].(string), tc.message) {
			t.Fatalf("%s: %v", tc.slug, spec)
		}
	}

	// Refused before anything is stored: both forms, an empty text, a text
	// larger than a fetched document may be (DOCSAPI_OUTBOUND_MAX_BYTES,
	// 64 KiB here).
	before := owner.Do("GET", base, nil).Expect(http.StatusOK).Body
	for _, tc := range []struct {
		name   string
		status int
		body   map[string]any
		want   string
	}{
		{"both", http.StatusBadRequest, map[string]any{"slug": "both", "source": map[string]any{"url": src.URL + "/v30/openapi.json", "text": petstore30}}, "source"},
		{"empty", http.StatusBadRequest, map[string]any{"slug": "empty", "source": map[string]any{"text": ""}}, "source.text"},
		{"text not a string", http.StatusBadRequest, map[string]any{"slug": "number", "source": map[string]any{"text": 42}}, "source.text"},
		{"too large", http.StatusUnprocessableEntity, map[string]any{"slug": "large", "source": map[string]any{"text": "openapi: 3.0.3\n# " + strings.Repeat("x", 64<<10)}},
			"source.text: is larger than the 65536 bytes a specification may have"},
	} {
		msg := owner.Do("POST", base, tc.body).Expect(tc.status).ErrorMessage()
		if !strings.HasPrefix(msg, tc.want) {
			t.Errorf("%s: %q", tc.name, msg)
		}
	}
	owner.Do("PUT", base+"/zoo", map[string]any{"source": map[string]any{"text": ""}}).Expect(http.StatusBadRequest)
	if after := owner.Do("GET", base, nil).Expect(http.StatusOK).Body; string(after) != string(before) {
		t.Fatalf("refused input changed the specs")
	}
}

// Sources that fail end complete, with an error code and messages, and no
// version.
func TestOpenAPISpecFailures(t *testing.T) {
	t.Parallel()
	_, owner, org, src := newOpenAPIEnv(t)
	base := "/v1/orgs/" + org + "/openapi"
	// A $ref to a file the server does not have.
	src.set("/broken/openapi.yaml", strings.Replace(zoo31, "./schemas/animal.yaml", "./schemas/gone.yaml", 1))
	for _, tc := range []struct {
		slug, path, code, message string
	}{
		{"slow", "/slow", "FETCH_TIMEOUT", "within the time limit (2s)"},
		{"garbage", "/garbage.txt", "PARSE_ERROR", "not an OpenAPI or Swagger document"},
		{"not-openapi", "/not-openapi.json", "PARSE_ERROR", "not an OpenAPI or Swagger document"},
		{"invalid", "/invalid.yaml", "PARSE_ERROR", "missing property"},
		{"too-large", "/big.yaml", "FETCH_ERROR", "larger than 65536 bytes"},
		{"missing", "/nowhere.yaml", "FETCH_ERROR", "HTTP 404"},
		{"broken-ref", "/broken/openapi.yaml", "FETCH_ERROR", `"schemas/gone.yaml" answered HTTP 404`},
	} {
		t.Run(tc.slug, func(t *testing.T) {
			owner.Do("POST", base, map[string]any{"slug": tc.slug, "source": map[string]any{"url": src.URL + tc.path}}).Expect(http.StatusCreated)
			spec := waitProcessed(t, owner, org, tc.slug)
			errs, _ := spec["lastProcessedErrors"].([]any)
			if spec["lastProcessErrorCode"] != tc.code || len(errs) == 0 || spec["lastVersion"] != nil || spec["lastProcessedAt"] == nil {
				t.Fatalf("spec: %v", spec)
			}
			first := errs[0].(map[string]any)
			if first["code"] != tc.code || !strings.Contains(first["message"].(string), tc.message) {
				t.Fatalf("errors: %v", errs)
			}
			owner.Do("GET", base+"/"+tc.slug+"/versions/latest", nil).Expect(http.StatusNotFound)
			owner.Do("GET", base+"/"+tc.slug+"/versions/latest/content", nil).Expect(http.StatusNotFound)
			if n := len(owner.Do("GET", base+"/"+tc.slug+"/versions", nil).Expect(http.StatusOK).JSON()["items"].([]any)); n != 0 {
				t.Fatalf("%d versions", n)
			}
		})
	}

	// A failed spec recovers once its source is fixed, and a later failure
	// keeps the last good version.
	src.set("/broken/openapi.yaml", zoo31)
	src.set("/broken/schemas/animal.yaml", animalSchema)
	owner.Do("PUT", base+"/broken-ref", map[string]any{"source": map[string]any{"url": src.URL + "/broken/openapi.yaml"}}).Expect(http.StatusOK)
	spec := waitProcessed(t, owner, org, "broken-ref")
	good, _ := spec["lastVersion"].(string)
	if spec["lastProcessErrorCode"] != nil || good == "" || len(spec["lastProcessedErrors"].([]any)) != 0 {
		t.Fatalf("fixed: %v", spec)
	}
	owner.Do("PUT", base+"/broken-ref", map[string]any{"source": map[string]any{"url": src.URL + "/slow"}}).Expect(http.StatusOK)
	spec = waitProcessed(t, owner, org, "broken-ref")
	if spec["lastProcessErrorCode"] != "FETCH_TIMEOUT" || spec["lastVersion"] != good {
		t.Fatalf("failed after a success: %v", spec)
	}
}

// The outbound guard applies: without DOCSAPI_OUTBOUND_ALLOW_LOOPBACK a
// loopback source is refused, and that is recorded.
func TestOpenAPISpecBlockedAddress(t *testing.T) {
	t.Parallel()
	env := servertest.New(t)
	owner := env.NewUser("Owner")
	org := owner.NewOrg("Acme")
	owner.Do("POST", "/v1/orgs/"+org+"/openapi", `{"slug":"metadata","source":{"url":"http://169.254.169.254/latest/openapi.json"}}`).Expect(http.StatusCreated)
	id := owner.Do("GET", "/v1/orgs/"+org+"/openapi/metadata", nil).Expect(http.StatusOK).String("id")
	if err := env.Server.Resolver.ProcessOpenAPISpec(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	spec := owner.Do("GET", "/v1/orgs/"+org+"/openapi/metadata", nil).Expect(http.StatusOK).JSON()
	errs := spec["lastProcessedErrors"].([]any)
	if spec["processingState"] != "complete" || spec["lastProcessErrorCode"] != "FETCH_ERROR" ||
		!strings.Contains(errs[0].(map[string]any)["message"].(string), "not allowed") {
		t.Fatalf("spec: %v", spec)
	}
}

func TestOpenAPISpecBadInput(t *testing.T) {
	t.Parallel()
	env := servertest.New(t)
	owner := env.NewUser("Owner")
	org := owner.NewOrg("Acme")
	base := "/v1/orgs/" + org + "/openapi"
	owner.Do("POST", base, `{"slug":"api","source":{"url":"https://example.com/openapi.yaml"}}`).Expect(http.StatusCreated)
	before := owner.Do("GET", base, nil).Expect(http.StatusOK).Body

	for _, tc := range []struct{ name, method, path, body string }{
		{"no slug", "POST", base, `{"source":{"url":"https://example.com/a.yaml"}}`},
		{"empty slug", "POST", base, `{"slug":"","source":{"url":"https://example.com/a.yaml"}}`},
		{"slug with a space", "POST", base, `{"slug":"my api","source":{"url":"https://example.com/a.yaml"}}`},
		{"slug with a leading dash", "POST", base, `{"slug":"-api","source":{"url":"https://example.com/a.yaml"}}`},
		{"slug with a double dash", "POST", base, `{"slug":"my--api","source":{"url":"https://example.com/a.yaml"}}`},
		{"slug too long", "POST", base, `{"slug":"` + strings.Repeat("a", 101) + `","source":{"url":"https://example.com/a.yaml"}}`},
		{"no source", "POST", base, `{"slug":"other"}`},
		{"no url", "POST", base, `{"slug":"other","source":{}}`},
		{"url not a string", "POST", base, `{"slug":"other","source":{"url":42}}`},
		{"relative url", "POST", base, `{"slug":"other","source":{"url":"/openapi.yaml"}}`},
		{"ftp url", "POST", base, `{"slug":"other","source":{"url":"ftp://example.com/openapi.yaml"}}`},
		{"not a url", "POST", base, `{"slug":"other","source":{"url":"not a url"}}`},
		{"unknown member", "POST", base, `{"slug":"other","source":{"url":"https://example.com/a.yaml"},"extra":1}`},
		{"put bad slug", "PUT", base + "/my--api", `{"source":{"url":"https://example.com/a.yaml"}}`},
		{"put no source", "PUT", base + "/api", `{}`},
		{"put bad url", "PUT", base + "/api", `{"source":{"url":"javascript:alert(1)"}}`},
		{"patch bad visibility", "PATCH", base + "/api", `{"visibility":"everyone"}`},
		{"patch no visibility", "PATCH", base + "/api", `{}`},
		{"list bad limit", "GET", base + "?limit=5000", ``},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var body any
			if tc.body != "" {
				body = tc.body
			}
			owner.Do(tc.method, tc.path, body).Expect(http.StatusBadRequest).ErrorMessage()
		})
	}
	// A taken slug conflicts.
	owner.Do("POST", base, `{"slug":"api","source":{"url":"https://example.com/b.yaml"}}`).Expect(http.StatusConflict).ErrorMessage()
	if after := owner.Do("GET", base, nil).Expect(http.StatusOK).Body; string(after) != string(before) {
		t.Fatalf("bad input changed the specs:\n%s\n%s", before, after)
	}

	// Unknown slugs and versions are 404.
	for _, p := range []string{base + "/nope", base + "/nope/versions", base + "/nope/versions/latest", base + "/api/versions/latest",
		base + "/api/versions/latest/content", base + "/api/versions/unknown", base + "/api/versions/unknown/content"} {
		owner.Do("GET", p, nil).Expect(http.StatusNotFound).ErrorMessage()
	}
	owner.Do("PATCH", base+"/nope", `{"visibility":"public"}`).Expect(http.StatusNotFound).ErrorMessage()
	owner.Do("DELETE", base+"/nope", nil).Expect(http.StatusNoContent)
}

// getRaw fetches an absolute address without a token.
func getRaw(t *testing.T, url string, status int) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != status {
		t.Fatalf("GET %s: %d, want %d: %s", url, resp.StatusCode, status, b)
	}
	return string(b)
}

// processedSpec creates a spec of org from a valid source and processes it
// at once (what the job does), returning its slug and version id: fixtures
// of the route tables, whose servers run no job runner.
func processedSpec(t *testing.T, env *servertest.Env, u *servertest.User, org, sourceURL string) (slug, version string) {
	t.Helper()
	id := u.Do("POST", "/v1/orgs/"+org+"/openapi", map[string]any{"slug": "petstore", "source": map[string]any{"url": sourceURL}}).
		Expect(http.StatusCreated).String("id")
	if err := env.Server.Resolver.ProcessOpenAPISpec(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	// A server with a job runner (Options.Jobs) may be processing the spec
	// already, in which case the call above leaves it to the job: wait for
	// the job's version then.
	var spec map[string]any
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		spec = u.Do("GET", "/v1/orgs/"+org+"/openapi/petstore", nil).Expect(http.StatusOK).JSON()
		if version, _ = spec["lastVersion"].(string); version != "" || time.Now().After(deadline) {
			break
		}
	}
	if version == "" {
		t.Fatalf("fixture spec not processed: %v", spec)
	}
	return "petstore", version
}

// The sweep enqueues specs whose enqueue was lost (pending for a while) and
// those whose job died (in progress for too long).
func TestOpenAPISpecSweep(t *testing.T) {
	t.Parallel()
	env, owner, org, src := newOpenAPIEnv(t)
	ctx := context.Background()
	now := env.Clock.Now()
	started := now.Add(-11 * time.Minute)
	for _, s := range []*store.OpenAPISpec{
		{Slug: "lost", SourceURL: ptr(src.URL + "/swagger.json"), ProcessingState: store.OpenAPIPending},
		{Slug: "stuck", SourceURL: ptr(src.URL + "/v30/openapi.json"), ProcessingState: store.OpenAPIProgress, ProcessingStartedAt: &started},
		{Slug: "text", SourceText: ptr(zoo31Inline), ProcessingState: store.OpenAPIPending},
	} {
		s.ID, s.OrganizationID, s.Visibility, s.Generation = store.NewID(), org, store.OpenAPIPrivate, 1
		s.LastErrors, s.CreatedAt, s.UpdatedAt = []store.OpenAPIProcessError{}, now.Add(-time.Hour), now.Add(-time.Hour)
		if err := store.CreateOpenAPISpec(ctx, env.DB, s); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := env.Jobs.Insert(ctx, jobs.SweepUnfinished{}, nil); err != nil {
		t.Fatal(err)
	}
	for _, slug := range []string{"lost", "stuck", "text"} {
		spec := waitProcessed(t, owner, org, slug)
		if spec["lastProcessErrorCode"] != nil || spec["lastVersion"] == nil {
			t.Fatalf("%s: %v", slug, spec)
		}
	}
	// Swagger 2.0 is kept as fetched.
	content := owner.Do("GET", "/v1/orgs/"+org+"/openapi/lost/versions/latest/content", nil).Expect(http.StatusOK).JSON()
	if raw := getRaw(t, content["url"].(string), http.StatusOK); raw != swagger20 {
		t.Fatalf("swagger document:\n%s", raw)
	}
}

func ptr[T any](v T) *T { return &v }
