package wholeserver_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"

	"github.com/docsapi/docsapi/cmd/docsapi/server/servertest"
	"github.com/docsapi/docsapi/graph"
	"github.com/docsapi/docsapi/rest"
)

// fetchOpenAPI gets the served document, without a token.
func fetchOpenAPI(t *testing.T, env *servertest.Env) []byte {
	t.Helper()
	res := env.Do("GET", rest.OpenAPIPath, "", nil).Expect(http.StatusOK)
	if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("Content-Type = %q", ct)
	}
	return res.Body
}

// newValidator parses doc with libopenapi and checks it against the
// OpenAPI 3.1 specification's JSON Schema.
func newValidator(t *testing.T, doc []byte) validator.Validator {
	t.Helper()
	parsed, err := libopenapi.NewDocument(doc)
	if err != nil {
		t.Fatal(err)
	}
	if v := parsed.GetVersion(); v != "3.1.0" {
		t.Fatalf("openapi = %q", v)
	}
	if _, err := parsed.BuildV3Model(); err != nil {
		t.Fatalf("building the model: %v", err)
	}
	v, errs := validator.NewValidator(parsed)
	if len(errs) > 0 {
		t.Fatalf("validator: %v", errs)
	}
	if ok, verrs := v.ValidateDocument(); !ok {
		for _, e := range verrs {
			t.Errorf("invalid OpenAPI 3.1: %s: %s (line %d)", e.Message, e.Reason, e.SpecLine)
			for _, se := range e.SchemaValidationErrors {
				t.Errorf("  %s: %s", se.FieldPath+" "+se.KeywordLocation, se.Reason)
			}
		}
		t.FailNow()
	}
	return v
}

type jsonObj = map[string]any

// resolve follows a local $ref.
func resolve(t *testing.T, doc jsonObj, s jsonObj) jsonObj {
	t.Helper()
	for s["$ref"] != nil {
		var cur any = doc
		for _, part := range strings.Split(strings.TrimPrefix(s["$ref"].(string), "#/"), "/") {
			cur = cur.(jsonObj)[part]
		}
		if cur == nil {
			t.Fatalf("$ref %s does not resolve", s["$ref"])
		}
		s = cur.(jsonObj)
	}
	return s
}

func hasType(s jsonObj, want string) bool {
	switch t := s["type"].(type) {
	case string:
		return t == want
	case []any:
		return slices.Contains(t, any(want))
	}
	return false
}

var pathParamRe = regexp.MustCompile(`\{([^}]+)\}`)

func TestOpenAPIDocument(t *testing.T) {
	t.Parallel()
	env := servertest.New(t)
	raw := fetchOpenAPI(t, env)
	newValidator(t, raw)

	// The served document is the generator's output, and the generator is stable.
	schema := graph.Schema()
	again, err := rest.OpenAPI(schema, env.URL)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(raw, again) {
		t.Error("the served document differs from rest.OpenAPI's")
	}
	t.Logf("openapi.json: %d bytes, %d routes", len(raw), len(rest.Routes))

	var doc jsonObj
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	paths := doc["paths"].(jsonObj)
	opIDs := map[string]bool{}
	for _, r := range rest.Routes {
		item, ok := paths[r.DocumentedPath()].(jsonObj)
		if !ok {
			t.Errorf("%s %s: path missing", r.Method, r.Path)
			continue
		}
		op, ok := item[strings.ToLower(r.Method)].(jsonObj)
		if !ok {
			t.Errorf("%s %s: method missing", r.Method, r.Path)
			continue
		}
		name := r.Method + " " + r.Path
		if op["operationId"] != r.Operation {
			t.Errorf("%s: operationId = %v, want %s", name, op["operationId"], r.Operation)
		}
		if opIDs[r.Operation] {
			t.Errorf("%s: operationId %s is not unique", name, r.Operation)
		}
		opIDs[r.Operation] = true
		if op["summary"] != r.Summary {
			t.Errorf("%s: summary = %v", name, op["summary"])
		}
		gql, _ := op["x-graphql-operation"].(jsonObj)
		if gql == nil || gql["name"] != r.Operation || !strings.Contains(fmt.Sprint(gql["document"]), " "+r.Operation) ||
			!strings.HasPrefix(fmt.Sprint(gql["field"]), "Query.") && !strings.HasPrefix(fmt.Sprint(gql["field"]), "Mutation.") {
			t.Errorf("%s: x-graphql-operation = %v", name, gql)
		}

		// Every path parameter is declared, and no other.
		declared := map[string]bool{}
		params, _ := op["parameters"].([]any)
		for _, p := range params {
			p := p.(jsonObj)
			if p["in"] == "path" {
				declared[p["name"].(string)] = true
				if p["required"] != true {
					t.Errorf("%s: path parameter %s is not required", name, p["name"])
				}
			}
			if p["schema"] == nil {
				t.Errorf("%s: parameter %s has no schema", name, p["name"])
			}
		}
		var inPath []string
		for _, m := range pathParamRe.FindAllStringSubmatch(r.DocumentedPath(), -1) {
			inPath = append(inPath, m[1])
			if !declared[m[1]] {
				t.Errorf("%s: path parameter %s not declared", name, m[1])
			}
			if vars, _ := gql["variables"].(jsonObj); vars[m[1]] != "path" {
				t.Errorf("%s: path parameter %s is not a variable of %s", name, m[1], r.Operation)
			}
		}
		if len(inPath) != len(declared) {
			t.Errorf("%s: path parameters declared %v, in the path %v", name, declared, inPath)
		}

		// The success response: a schema unless 204.
		responses := op["responses"].(jsonObj)
		success, ok := responses[fmt.Sprint(r.Status)].(jsonObj)
		if !ok {
			t.Errorf("%s: no %d response", name, r.Status)
			continue
		}
		content, _ := success["content"].(jsonObj)
		if r.Status == http.StatusNoContent || r.Status == http.StatusResetContent {
			if content != nil {
				t.Errorf("%s: %d with content", name, r.Status)
			}
		} else if s, _ := content["application/json"].(jsonObj); s == nil || s["schema"] == nil {
			t.Errorf("%s: %d response has no schema", name, r.Status)
		}
		for _, code := range []string{"401", "403", "404"} {
			if e, _ := responses[code].(jsonObj); e == nil {
				t.Errorf("%s: no %s response", name, code)
			}
		}
	}
	for p, item := range paths {
		for method := range item.(jsonObj) {
			if p == rest.OpenAPIPath {
				continue
			}
			if !slices.ContainsFunc(rest.Routes, func(r rest.Route) bool { return r.DocumentedPath() == p && strings.ToLower(r.Method) == method }) {
				t.Errorf("%s %s is in the document but not a route", method, p)
			}
		}
	}
	if op, _ := paths[rest.OpenAPIPath].(jsonObj)["get"].(jsonObj); op == nil || fmt.Sprint(op["security"]) != "[]" {
		t.Errorf("%s: %v", rest.OpenAPIPath, paths[rest.OpenAPIPath])
	}

	// A few semantic points.
	getSpace := paths["/v1/spaces/{spaceId}"].(jsonObj)["get"].(jsonObj)
	space := resolve(t, doc, getSpace["responses"].(jsonObj)["200"].(jsonObj)["content"].(jsonObj)["application/json"].(jsonObj)["schema"].(jsonObj))
	props := space["properties"].(jsonObj)
	for _, key := range []string{"id", "title", "permissions", "urls"} {
		if props[key] == nil {
			t.Errorf("getSpaceById: no %s in %v", key, props)
		}
	}
	if req := fmt.Sprint(space["required"]); !strings.Contains(req, "title") || strings.Contains(req, "deletedAt") {
		t.Errorf("getSpaceById: required = %s", req)
	}
	if dl := props["defaultLevel"].(jsonObj); fmt.Sprint(dl["anyOf"]) != "[map[$ref:#/components/schemas/DefaultLevel] map[type:null]]" {
		t.Errorf("defaultLevel (kept null) = %v", dl)
	}
	updateSpace := paths["/v1/spaces/{spaceId}"].(jsonObj)["patch"].(jsonObj)
	body := resolve(t, doc, updateSpace["requestBody"].(jsonObj)["content"].(jsonObj)["application/json"].(jsonObj)["schema"].(jsonObj))
	if title, _ := body["properties"].(jsonObj)["title"].(jsonObj); !hasType(title, "string") || body["additionalProperties"] != false {
		t.Errorf("updateSpaceById body = %v", body)
	}
	listSites := paths["/v1/orgs/{organizationId}/sites"].(jsonObj)["get"].(jsonObj)
	found := false
	for _, p := range listSites["parameters"].([]any) {
		p := p.(jsonObj)
		switch p["name"] {
		case "published":
			found = p["in"] == "query" && hasType(p["schema"].(jsonObj), "boolean")
		case "type":
			if !hasType(p["schema"].(jsonObj), "array") || p["explode"] != false {
				t.Errorf("listSites type = %v", p)
			}
		}
	}
	if !found {
		t.Errorf("listSites has no boolean query parameter published: %v", listSites["parameters"])
	}
	enum := resolve(t, doc, jsonObj{"$ref": "#/components/schemas/SpaceEditMode"})
	if fmt.Sprint(enum["enum"]) != "[live locked]" {
		t.Errorf("SpaceEditMode = %v", enum)
	}
	structure := resolve(t, doc, jsonObj{"$ref": "#/components/schemas/SiteStructure"})
	if items := structure["properties"].(jsonObj)["structure"].(jsonObj)["items"].(jsonObj); len(items["oneOf"].([]any)) != 3 {
		t.Errorf("SiteStructure items = %v", items)
	}
}

func asList(v any) []any { l, _ := v.([]any); return l }

// The document is served without a token; other methods are 405, and the
// rest of /v1 still wants a token and answers unknown paths in JSON.
func TestOpenAPIServing(t *testing.T) {
	t.Parallel()
	env := servertest.New(t)
	first := env.Do("GET", rest.OpenAPIPath, "", nil).Expect(http.StatusOK)
	if first.Header.Get("ETag") == "" {
		t.Error("no ETag")
	}
	req, _ := http.NewRequest("GET", env.URL+rest.OpenAPIPath, nil)
	req.Header.Set("If-None-Match", first.Header.Get("ETag"))
	if res, err := http.DefaultClient.Do(req); err != nil || res.StatusCode != http.StatusNotModified {
		t.Errorf("conditional GET: %v %v", res, err)
	} else {
		res.Body.Close()
	}
	res := env.Do("POST", rest.OpenAPIPath, "", "{}").Expect(http.StatusMethodNotAllowed)
	res.ErrorMessage()
	if res.Header.Get("Allow") != "GET, HEAD" {
		t.Errorf("Allow = %q", res.Header.Get("Allow"))
	}
	env.Do("GET", "/v1/openapi.yaml", "", nil).Expect(http.StatusUnauthorized).ErrorMessage()
	alice := env.NewUser("Alice")
	alice.Do("GET", "/v1/openapi.yaml", nil).Expect(http.StatusNotFound).ErrorMessage()
	alice.Do("GET", "/v1/no/such/thing", nil).Expect(http.StatusNotFound).ErrorMessage()
}

// Real responses, and the requests that produced them, match the document:
// a walk through the API validated by libopenapi-validator.
func TestOpenAPIMatchesResponses(t *testing.T) {
	t.Parallel()
	env := servertest.New(t)
	v := newValidator(t, fetchOpenAPI(t, env))
	alice := env.NewUser("Alice")
	covered := map[string]bool{}

	call := func(method, path, token, body string, want int) jsonObj {
		t.Helper()
		newReq := func() *http.Request {
			var rd io.Reader
			if body != "" {
				rd = strings.NewReader(body)
			}
			req, err := http.NewRequest(method, env.URL+path, rd)
			if err != nil {
				t.Fatal(err)
			}
			if body != "" {
				req.Header.Set("Content-Type", "application/json")
			}
			if token != "" {
				req.Header.Set("Authorization", "Bearer "+token)
			}
			return req
		}
		resp, err := http.DefaultClient.Do(newReq())
		if err != nil {
			t.Fatal(err)
		}
		raw, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != want {
			t.Fatalf("%s %s: status %d, want %d: %s", method, path, resp.StatusCode, want, raw)
		}
		resp.Body = io.NopCloser(bytes.NewReader(raw))
		validate := v.ValidateHttpRequestResponse
		if token == "" || want == http.StatusBadRequest { // the request is wrong on purpose
			validate = v.ValidateHttpResponse
		}
		if ok, errs := validate(newReq(), resp); !ok {
			for _, e := range errs {
				t.Errorf("%s %s -> %d: %s", method, path, want, e.Error())
				for _, se := range e.SchemaValidationErrors {
					t.Errorf("  %s: %s", se.FieldPath+" "+se.KeywordLocation, se.Reason)
				}
			}
			t.Logf("body: %s", raw)
		}
		for _, r := range rest.Routes {
			if r.Method == method && matchPath(r.DocumentedPath(), strings.SplitN(path, "?", 2)[0]) {
				covered[r.Operation] = true
			}
		}
		var out jsonObj
		_ = json.Unmarshal(raw, &out)
		return out
	}
	do := func(method, path, body string, want int) jsonObj {
		t.Helper()
		return call(method, path, alice.Token, body, want)
	}
	id := func(m jsonObj) string { return m["id"].(string) }

	do("GET", "/v1/user", "", 200)
	org := id(do("POST", "/v1/orgs", `{"title":"Acme"}`, 201))
	o := "/v1/orgs/" + org
	do("GET", "/v1/orgs", "", 200)
	do("GET", o, "", 200)
	do("PATCH", o, `{"title":"Acme Inc","defaultRole":null}`, 200)
	do("PUT", o+"/agent-instructions", `{"instructions":{"object":"document","data":{},"nodes":[]}}`, 200)
	do("GET", o+"/agent-instructions", "", 200)

	var spaces []string
	for i := range 4 {
		spaces = append(spaces, id(do("POST", o+"/spaces", fmt.Sprintf(`{"title":"Space %d"}`, i), 201)))
	}
	do("GET", o+"/spaces?limit=2", "", 200)
	do("GET", "/v1/spaces/"+spaces[0], "", 200)
	do("PATCH", "/v1/spaces/"+spaces[0], `{"title":"Renamed","emoji":null,"mergeRules":{"type":"none"}}`, 200)
	dup := id(do("POST", "/v1/spaces/"+spaces[0]+"/duplicate", "", 201))
	do("DELETE", "/v1/spaces/"+dup, "", 204)
	do("POST", "/v1/spaces/"+dup+"/restore", "", 200)

	site := id(do("POST", o+"/sites", fmt.Sprintf(`{"title":"Docs","spaces":[%q]}`, spaces[0]), 201))
	s := o + "/sites/" + site
	do("GET", s, "", 200)
	do("GET", o+"/sites?published=false&type=basic,premium", "", 200)
	do("PATCH", s, `{"title":"Docs 2","hostname":null}`, 200)
	do("PUT", s+"/adaptive-schema", `{"jsonSchema":{"type":"object","properties":{"beta":{"type":"boolean","description":"b"}},"additionalProperties":false}}`, 200)
	do("GET", s+"/adaptive-schema", "", 200)
	do("GET", s+"/adaptive-schema/template-conditions", "", 200)
	do("GET", s+"/structure", "", 200) // site spaces at the root
	ss := id(do("POST", s+"/site-spaces", fmt.Sprintf(`{"spaceId":%q}`, spaces[1]), 201))
	do("PATCH", s+"/site-spaces/"+ss, `{"path":"second","condition":null}`, 200)
	do("POST", s+"/site-spaces/"+ss+"/move", "", 200)
	do("GET", s+"/site-spaces?default=false", "", 200)
	do("DELETE", s+"/site-spaces/"+ss, "", 204)

	sec1 := id(do("POST", s+"/sections", fmt.Sprintf(`{"spaceId":%q,"title":"Guides"}`, spaces[2]), 201))
	sec2 := id(do("POST", s+"/sections", fmt.Sprintf(`{"spaceId":%q,"title":"Reference"}`, spaces[3]), 201))
	do("PATCH", s+"/sections/"+sec1, `{"description":"All guides","icon":null}`, 200)
	do("POST", s+"/sections/"+sec1+"/move", "", 200)
	group := id(do("POST", s+"/section-groups", fmt.Sprintf(`{"title":"Group","sections":[%q]}`, sec1), 201))
	inner := id(do("POST", s+"/section-groups", fmt.Sprintf(`{"title":"Inner","parent":%q}`, group), 201))
	do("POST", s+"/section-groups/"+inner+"/sections", fmt.Sprintf(`{"sectionId":%q}`, sec2), 201)
	do("GET", s+"/structure", "", 200) // sections in nested groups
	do("GET", s+"/section-groups", "", 200)
	do("GET", s+"/sections", "", 200)
	do("PATCH", s+"/section-groups/"+group, `{"icon":"folder"}`, 200)
	do("PATCH", s+"/structure/sort", fmt.Sprintf(`{"item":{"type":"site-section-group","id":%q}}`, inner), 200)
	do("POST", s+"/section-groups/"+group+"/move", "", 200)
	do("POST", s+"/publish", "", 200)
	do("GET", s+"/published", "", 200)
	do("POST", s+"/unpublish", "", 200)
	do("DELETE", s+"/section-groups/"+inner+"/sections/"+sec2, "", 204)
	do("DELETE", s+"/section-groups/"+inner, "", 204)
	do("DELETE", s+"/sections/"+sec2, "", 204)
	do("DELETE", s, "", 204)

	// Integrations, installations and events.
	png := base64.StdEncoding.EncodeToString(tinyPNG)
	ib := "/v1/integrations/tool"
	do("POST", ib, fmt.Sprintf(`{"title":"Tool","description":"d","script":"s","scopes":["space:content:read"],"organization":%q,
		"icon":%q,"previewImages":[%q],"secrets":{"K":"v"},"contentSecurityPolicy":"default-src 'self'",
		"blocks":[{"id":"b","title":"Block","urlUnfurl":["https://x.example/y"],"markdown":{"codeblock":"tool","body":"x"}}],
		"contentSources":[{"id":"c","title":"Source","configuration":{"componentId":"cfg"}}],
		"externalLinks":[{"url":"https://example.com","label":"Site"}],"configurations":{"space":{"properties":{}}}}`, org, png, png), 200)
	do("GET", ib, "", 200)
	do("GET", "/v1/integrations?search=tool&blocks=true&target=all", "", 200)
	inst := id(do("POST", ib+"/installations", fmt.Sprintf(`{"organization":%q}`, org), 201))
	ins := ib + "/installations/" + inst
	do("GET", ib+"/installations?externalId=x", "", 200)
	do("GET", ins, "", 200)
	do("PATCH", ins, `{"configuration":{"a":1},"externalIds":["x"],"site_selection":"all"}`, 200)
	do("POST", ins+"/spaces", fmt.Sprintf(`{"space":%q}`, spaces[1]), 201)
	do("GET", ins+"/spaces", "", 200)
	do("GET", ins+"/spaces?extended=true", "", 200)
	do("GET", ins+"/spaces/"+spaces[1], "", 200)
	do("GET", ins+"/spaces/"+spaces[1]+"?extended=true", "", 200)
	do("PATCH", ins+"/spaces/"+spaces[1], `{"externalIds":["s"]}`, 200)
	do("GET", ib+"/spaces", "", 200)
	do("GET", ib+"/spaces?extended=true", "", 200)
	site2 := id(do("POST", o+"/sites", `{"title":"Second"}`, 201))
	do("POST", ins+"/sites", fmt.Sprintf(`{"site":%q}`, site2), 201)
	do("GET", ins+"/sites", "", 200)
	do("GET", ins+"/sites/"+site2+"?extended=true", "", 200)
	do("PATCH", ins+"/sites/"+site2, `{"configuration":{}}`, 200)
	do("GET", ib+"/sites?extended=true", "", 200)
	do("GET", ib+"/sites", "", 200)
	events := do("GET", ib+"/events", "", 200)
	do("GET", ib+"/events/"+id(events["items"].([]any)[0].(map[string]any)), "", 200)
	do("DELETE", ins+"/sites/"+site2, "", 205)
	do("DELETE", ins+"/spaces/"+spaces[1], "", 205)
	do("DELETE", ins, "", 205)
	do("DELETE", ib, "", 205)
	do("DELETE", ib, "", 204)

	// Errors.
	do("GET", "/v1/spaces/nope", "", 404)
	do("PATCH", "/v1/spaces/"+spaces[0], `{"title":5}`, 400)
	call("GET", "/v1/user", "", "", 401)

	var missing []string
	for _, r := range rest.Routes {
		if !covered[r.Operation] {
			missing = append(missing, r.Operation)
		}
	}
	if len(missing) > 0 {
		t.Logf("routes not exercised here: %v", missing)
	}
}

// matchPath reports whether path fits the net/http pattern path p.
func matchPath(p, path string) bool {
	ps, xs := strings.Split(p, "/"), strings.Split(path, "/")
	if len(ps) != len(xs) {
		return false
	}
	for i := range ps {
		if !strings.HasPrefix(ps[i], "{") && ps[i] != xs[i] {
			return false
		}
	}
	return true
}
