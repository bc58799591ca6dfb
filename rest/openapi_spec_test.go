package rest_test

import (
	"context"
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
	spec := u.Do("GET", "/v1/orgs/"+org+"/openapi/petstore", nil).Expect(http.StatusOK).JSON()
	version, _ = spec["lastVersion"].(string)
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
		{Slug: "lost", SourceURL: src.URL + "/swagger.json", ProcessingState: store.OpenAPIPending},
		{Slug: "stuck", SourceURL: src.URL + "/v30/openapi.json", ProcessingState: store.OpenAPIProgress, ProcessingStartedAt: &started},
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
	for _, slug := range []string{"lost", "stuck"} {
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
