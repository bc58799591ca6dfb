package wholeserver_test

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/docsapi/docsapi/cmd/docsapi/server/servertest"
	"github.com/docsapi/docsapi/rest"
)

// referenceVersion is the release of GitBook's API description, and of its
// client (@gitbook/api), that referenceFile is.
const referenceVersion = "0.146.0"

// referenceFile is GitBook's API description, kept byte for byte
// (rest/reference/README.md), read through restFile.
const referenceFile = "reference/gitbook-openapi-" + referenceVersion + ".json"

// referenceShapeSkips are the routes answering JSON whose body is not
// validated against the reference, each with why. Routes answering no body
// (204, 205) are not listed: they are checked to have no body in the
// reference either.
var referenceShapeSkips = map[string]string{
	"createOrganization": "not in the reference (GitBook creates organizations in its app); the project's specification adds it",
}

// referenceStatuses are the routes answering no body with a success status
// the reference does not document, with why.
var referenceStatuses = map[string]string{
	"applyTemplateToSpace": "the reference answers 201 with no body; the project's specification says 204",
}

// referenceDeviations are the differences from the reference kept on
// purpose: a validator message (its location's end, list indexes left out)
// on the answers of some operations, with why. A deviation no longer seen fails
// the test, so that the list stays true.
var referenceDeviations = []referenceDeviation{
	{
		ops: []string{"listSAMLProvidersInOrganizationById", "getOrganizationSAMLProviderById",
			"createOrganizationSAMLProvider", "updateOrganizationSAMLProvider"},
		message: `ssoURL: '' is not valid uri: relative url`,
		reason: "a provider created with a label only, as the reference's request allows, has no SSO URL yet: " +
			"its ssoURL, which the reference requires, is empty",
	},
}

type referenceDeviation struct {
	ops     []string
	message string
	reason  string
}

// itemIndex is a list index in an instance location.
var itemIndex = regexp.MustCompile(`/[0-9]+(/|:)`)

// deviates tells whether leaf is a deviation of op's.
func deviates(op, leaf string, seen map[int]bool) bool {
	at := itemIndex.ReplaceAllString(strings.TrimPrefix(leaf, "at /"), "$1")
	for i, d := range referenceDeviations {
		if slices.Contains(d.ops, op) && (at == d.message || strings.HasSuffix(at, "/"+d.message)) {
			seen[i] = true
			return true
		}
	}
	return false
}

// Every route of the table answers what GitBook's reference says it does:
// each route answering JSON is called with a fixture that makes it succeed,
// and its body is validated against the reference's response schema for the
// status it answered (the reference operation is found by operationId, else
// by method and path). The test fails listing every route whose body does
// not match, with the validator's messages. TestGitBookClient makes the
// same calls, and those of the routes answering no body, through GitBook's
// own client.
func TestReferenceShapes(t *testing.T) {
	t.Parallel()
	ref := loadReference(t)
	env := servertest.New(t)
	f := newShapesFixture(t, env)

	var failures []string
	fail := func(route rest.Route, format string, args ...any) {
		failures = append(failures, fmt.Sprintf("%s (%s %s): %s", route.Operation, route.Method, route.Path, fmt.Sprintf(format, args...)))
	}
	validated, answers, noBody, skipped := 0, 0, 0, 0
	deviationsSeen := map[int]bool{}
	for _, route := range referenceOrder(rest.Routes) {
		op := ref.operation(route)
		if reason, ok := referenceShapeSkips[route.Operation]; ok {
			if op != nil && strings.HasPrefix(reason, "not in the reference") {
				fail(route, "skipped as not in the reference, but the reference has %s", op.id)
			}
			skipped++
			continue
		}
		if op == nil {
			fail(route, "no operation of the reference has this operationId, method and path")
			continue
		}
		if op.method != route.Method || "/v1"+op.path != route.DocumentedPath() {
			fail(route, "the reference's %s is %s %s", op.id, op.method, op.path)
		}
		if route.Status == http.StatusNoContent || route.Status == http.StatusResetContent {
			noBody++
			for status, schema := range op.responses {
				if schema {
					fail(route, "we answer no body; the reference answers %s with one", status)
				}
			}
			if _, ok := op.responses[fmt.Sprint(route.Status)]; ok == (referenceStatuses[route.Operation] != "") {
				fail(route, "we answer %d; the reference's statuses are %v (referenceStatuses: %q)",
					route.Status, slices.Sorted(maps.Keys(op.responses)), referenceStatuses[route.Operation])
			}
			continue
		}
		valid := true
		for _, call := range f.calls(t, route) {
			res := f.caller.Do(route.Method, call.target(), call.requestBody())
			if res.Status < 200 || res.Status > 299 {
				fail(route, "the fixture does not make it succeed: %d %s", res.Status, res.Body)
				valid = false
				continue
			}
			if problems := ref.answerProblems(route, op, res.Status, res.Body, deviationsSeen); len(problems) > 0 {
				fail(route, "%s\n    %s", call.queryString(), strings.Join(problems, "\n    "))
				valid = false
				continue
			}
			answers++
		}
		if valid {
			validated++
		}
	}
	failures = append(failures, unseenDeviations(deviationsSeen)...)
	t.Logf("%d of %d routes validated against the reference (%d answers, %d deviations kept); %d answer no body; %d skipped",
		validated, len(rest.Routes), answers, len(referenceDeviations), noBody, skipped)
	if len(failures) > 0 {
		t.Errorf("%d answers do not match GitBook's reference (%s):\n%s", len(failures), referenceFile, strings.Join(failures, "\n"))
	}
}

// shapesFixture is the permission matrix's fixture (an organization with
// content of every kind, bodies that make every write succeed), with the
// content that makes answers whole: a page linking to a page and to a file,
// a group page, reactions, a requested reviewer.
type shapesFixture struct {
	*matrixFixture
	caller *servertest.User
	// idsFor overrides ids for an operation.
	idsFor map[string]map[string]string
}

func newShapesFixture(t *testing.T, env *servertest.Env) *shapesFixture {
	t.Helper()
	f := &shapesFixture{matrixFixture: newMatrixFixture(t, env)}
	admin := f.users["admin"]
	f.caller = admin
	org, space, cr := f.ids["organizationId"], f.ids["spaceId"], f.ids["changeRequestId"]
	group := newPage(t, admin, space, map[string]any{"title": "Guides", "type": "group"})
	newPage(t, admin, space, map[string]any{"title": "Install", "parent": group.ID, "markdown": "# Install\n\nRun it."})
	links, _, revision := createPage(t, admin, space, "Links",
		"See [the start]("+f.ids["pagePath"]+".md) and [the notes](.gitbook/assets/notes.txt).")
	f.ids["revisionId"] = revision
	// A change request with the links in its content (the fixture's own
	// change request was opened before them).
	linksCR := admin.Do("POST", "/v1/spaces/"+space+"/change-requests", `{"subject":"Later"}`).Expect(http.StatusCreated).String("id")
	admin.Do("PUT", "/v1/spaces/"+space+"/comments/"+f.ids["commentId"], `{"addedReactions":["+1"]}`).Expect(http.StatusOK)
	admin.Do("POST", "/v1/spaces/"+space+"/change-requests/"+cr+"/requested-reviewers",
		`{"users":["`+f.users["review"].ID+`"]}`).Expect(http.StatusOK)
	// Customized settings, and a site space overriding some, for the
	// published site to answer.
	siteBase := "/v1/orgs/" + org + "/sites/" + f.ids["siteId"]
	admin.Do("PUT", siteBase+"/customization", siteCustomizationBody).Expect(http.StatusOK)
	admin.Do("PATCH", siteBase+"/site-spaces/"+f.ids["siteSpaceId"]+"/customization", siteSpaceOverrideBody).Expect(http.StatusOK)

	// The writes run one after another on the same objects: those that
	// would collide with an earlier one (the space moved into the
	// collection, a site space's path taken, a git import replacing the
	// pages the change request edits) or cannot take objects a site
	// publishes (transfers) get their own.
	f.bodies["moveCollection"] = `{"parent":null}`
	f.bodies["updateSiteSpaceById"] = `{"path":"moved-elsewhere"}`
	spare := admin.Do("POST", "/v1/orgs/"+org+"/spaces", `{"title":"Spare"}`).Expect(http.StatusCreated).String("id")
	synced := admin.Do("POST", "/v1/orgs/"+org+"/spaces", `{"title":"Synced"}`).Expect(http.StatusCreated).String("id")
	archive := admin.Do("POST", "/v1/orgs/"+org+"/collections", `{"title":"Archive"}`).Expect(http.StatusCreated).String("id")
	admin.Do("POST", "/v1/orgs/"+org+"/spaces", map[string]any{"title": "Archived", "parent": archive}).Expect(http.StatusCreated)
	// An address resolved after the writes that unpublish the fixture's
	// site: of a site of its own, at a page, with the visitor's unsigned
	// claims.
	resolved := admin.Do("POST", "/v1/orgs/"+org+"/sites", map[string]any{"title": "Resolved", "visibility": "public",
		"spaces": []string{space}}).Expect(http.StatusCreated).String("id")
	admin.Do("POST", "/v1/orgs/"+org+"/sites/"+resolved+"/publish", nil).Expect(http.StatusOK)
	f.bodies["resolvePublishedContentByUrl"] = mustJSON(t, map[string]any{"url": publishedURLOf(t, admin, org, resolved) + "/" + f.ids["pagePath"],
		"visitor": map[string]any{"unsignedClaims": map[string]any{"beta": true}}})
	f.idsFor = map[string]map[string]string{
		"transferSpace":                            {"spaceId": spare},
		"transferCollection":                       {"collectionId": archive},
		"importGitRepository":                      {"spaceId": synced},
		"removeRequestedReviewerFromChangeRequest": {"userId": f.users["review"].ID},
		"listPageLinksInSpace":                     {"pageId": links},
		"listPageLinksInChangeRequest":             {"changeRequestId": linksCR, "pageId": links},
		"listChangeRequestFileBacklinks":           {"changeRequestId": linksCR},
	}
	return f
}

// referenceOrder is routes in the order one fixture makes them all
// succeed: reads first, then writes, then the writes that take the
// fixture's objects away (a merge, transfers to another organization), then
// the deletions, of the deepest paths first (a reply before its comment, a
// site space before its site).
func referenceOrder(routes []rest.Route) []rest.Route {
	last := []string{"mergeChangeRequest", "transferSpace", "transferCollection"}
	phase := func(r rest.Route) int {
		switch {
		case r.Method == "GET":
			return 0
		case r.Method == "DELETE":
			return 3
		case slices.Contains(last, r.Operation):
			return 2
		}
		return 1
	}
	out := slices.Clone(routes)
	slices.SortStableFunc(out, func(a, b rest.Route) int {
		if c := cmp.Compare(phase(a), phase(b)); c != 0 || phase(a) != 3 {
			return c
		}
		return cmp.Compare(strings.Count(b.Path, "/"), strings.Count(a.Path, "/"))
	})
	return out
}

// referenceCall is a call of a route with the fixture's ids and body.
type referenceCall struct {
	route rest.Route
	// params are the path's parameters.
	params map[string]string
	// query is nil for none.
	query map[string]any
	// body is JSON; "" for none.
	body string
}

// listQueries are query parameters some calls add: a number and a list,
// which clients serialize each their own way (GitBook's repeats a list's
// key), and a page of one, whose answer has a next page.
var listQueries = map[string]map[string]any{
	"listSpacesInOrganizationById": {"limit": 1},
	"listSites":                    {"type": []any{"premium", "basic"}},
}

// calls are the calls of route the fixture makes: one, and one more with
// extended=true when the route takes it.
func (f *shapesFixture) calls(t *testing.T, route rest.Route) []referenceCall {
	t.Helper()
	ids := threadIDs(route, f.ids)
	params := map[string]string{}
	for _, p := range pathParamName.FindAllString(route.DocumentedPath(), -1) {
		name := strings.Trim(p, "{}")
		id, ok := f.idsFor[route.Operation][name]
		if !ok {
			id, ok = ids[name]
		}
		if !ok {
			t.Fatalf("no id for the parameter %s of %s", name, route.Path)
		}
		params[name] = id
	}
	var body string
	if route.Method != "GET" && route.Method != "DELETE" {
		body = f.bodies[route.Operation]
	}
	query := maps.Clone(listQueries[route.Operation])
	if _, ok := requiredQuery[route.Operation]; ok {
		values, err := url.ParseQuery(strings.TrimPrefix(requiredQueryOf(route.Operation, ids), "?"))
		if err != nil {
			t.Fatal(err)
		}
		query = map[string]any{}
		for k := range values {
			query[k] = values.Get(k)
		}
	}
	calls := []referenceCall{{route: route, params: params, query: query, body: body}}
	if route.Extended != "" {
		calls = append(calls, referenceCall{route: route, params: params, query: map[string]any{"extended": true}, body: body})
	}
	return calls
}

// target is the call's path and query.
func (c referenceCall) target() string {
	path := c.route.DocumentedPath()
	for name, id := range c.params {
		path = strings.ReplaceAll(path, "{"+name+"}", id)
	}
	if q := c.queryString(); q != "" {
		path += "?" + q
	}
	return path
}

// queryString is the call's query, encoded.
func (c referenceCall) queryString() string {
	values := url.Values{}
	for k, v := range c.query {
		if list, ok := v.([]any); ok {
			for _, e := range list {
				values.Add(k, fmt.Sprint(e))
			}
			continue
		}
		values.Set(k, fmt.Sprint(v))
	}
	return values.Encode()
}

// requestBody is the body servertest sends: nil for none.
func (c referenceCall) requestBody() any {
	if c.body == "" {
		return nil
	}
	return c.body
}

// answerProblems is what the reference finds wrong with an answer of route
// (op's in the reference) answering JSON: the validator's messages (at most
// ten), those of referenceDeviations set aside and marked in seen; nil when
// it validates. A list whose count is not its number of items (the
// specification, 1.2) is wrong too.
func (r *reference) answerProblems(route rest.Route, op *referenceOperation, status int, body []byte, seen map[int]bool) []string {
	if err := countIsItems(body); err != nil {
		return []string{err.Error()}
	}
	leaves, err := r.validate(op, status, body)
	if err != nil {
		return []string{err.Error()}
	}
	leaves = slices.DeleteFunc(leaves, func(leaf string) bool { return deviates(route.Operation, leaf, seen) })
	if len(leaves) > 10 {
		leaves = append(leaves[:10], fmt.Sprintf("(and %d more)", len(leaves)-10))
	}
	return leaves
}

// unseenDeviations fails each deviation of referenceDeviations that seen
// does not mark, so that the list stays true.
func unseenDeviations(seen map[int]bool) []string {
	var out []string
	for i, d := range referenceDeviations {
		if !seen[i] {
			out = append(out, fmt.Sprintf("the deviation %q of %v is no longer seen: remove it", d.message, d.ops))
		}
	}
	return out
}

// reference is GitBook's API description with its schemas translated to
// JSON Schema 2020-12 and compiled on demand.
type reference struct {
	ops      map[string]*referenceOperation
	byPath   map[string]*referenceOperation
	compiler *jsonschema.Compiler
	schemas  map[string]*jsonschema.Schema
}

// referenceOperation is an operation of the reference: which of its 2xx
// responses have a JSON body, and whether its request has one.
type referenceOperation struct {
	id, method, path string
	responses        map[string]bool
	requestBody      bool
}

var pathParamName = regexp.MustCompile(`\{[^}]*\}`)

func loadReference(t *testing.T) *reference {
	t.Helper()
	raw, err := restFile(referenceFile)
	if err != nil {
		t.Fatal(err)
	}
	var doc jsonObj
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	components := doc["components"].(jsonObj)["schemas"].(jsonObj)
	tr := &openAPI30{components: components}
	defs := jsonObj{}
	for name, s := range components {
		defs[name] = tr.schema(s)
	}
	ref := &reference{ops: map[string]*referenceOperation{}, byPath: map[string]*referenceOperation{}, schemas: map[string]*jsonschema.Schema{}}
	for path, item := range doc["paths"].(jsonObj) {
		for method, o := range item.(jsonObj) {
			o, ok := o.(jsonObj)
			if !ok || o["responses"] == nil {
				continue
			}
			op := &referenceOperation{method: strings.ToUpper(method), path: path, responses: map[string]bool{}}
			op.id, _ = o["operationId"].(string)
			request, _ := o["requestBody"].(jsonObj)
			requestContent, _ := request["content"].(jsonObj)
			if media, ok := requestContent["application/json"].(jsonObj); ok {
				op.requestBody = true
				defs[op.requestKey()] = tr.schema(media["schema"])
			}
			for status, res := range o["responses"].(jsonObj) {
				if !strings.HasPrefix(status, "2") {
					continue
				}
				content, _ := res.(jsonObj)["content"].(jsonObj)
				media, ok := content["application/json"].(jsonObj)
				op.responses[status] = ok
				if ok {
					defs[op.key(status)] = tr.schema(media["schema"])
				}
			}
			if op.id != "" {
				ref.ops[op.id] = op
			}
			ref.byPath[op.method+" "+pathParamName.ReplaceAllString(path, "{}")] = op
		}
	}
	ref.compiler = jsonschema.NewCompiler()
	ref.compiler.AssertFormat()
	if err := ref.compiler.AddResource("reference.json", jsonObj{"$schema": "https://json-schema.org/draft/2020-12/schema", "$defs": defs}); err != nil {
		t.Fatal(err)
	}
	return ref
}

func (o *referenceOperation) key(status string) string {
	return "response " + o.id + " " + o.method + " " + o.path + " " + status
}

func (o *referenceOperation) requestKey() string {
	return "request " + o.id + " " + o.method + " " + o.path
}

// operation finds route's operation in the reference: by operationId, else
// by method and path.
func (r *reference) operation(route rest.Route) *referenceOperation {
	if op, ok := r.ops[route.Operation]; ok {
		return op
	}
	return r.byPath[route.Method+" "+pathParamName.ReplaceAllString(strings.TrimPrefix(route.DocumentedPath(), "/v1"), "{}")]
}

// validate checks body against op's response schema for status: the
// validator's innermost messages, or an error when it cannot.
func (r *reference) validate(op *referenceOperation, status int, body []byte) ([]string, error) {
	code := fmt.Sprint(status)
	hasBody, ok := op.responses[code]
	switch {
	case !ok:
		return nil, fmt.Errorf("answered %d, which the reference does not document", status)
	case !hasBody:
		return nil, fmt.Errorf("answered %d with a body; the reference has none", status)
	}
	return r.validateAt(op.key(code), body)
}

// validateRequest checks a request body against op's request body schema,
// as validate does an answer.
func (r *reference) validateRequest(op *referenceOperation, body []byte) ([]string, error) {
	if !op.requestBody {
		return nil, errors.New("a body, where the reference has none")
	}
	return r.validateAt(op.requestKey(), body)
}

// validateAt checks body against the schema of $defs' key.
func (r *reference) validateAt(key string, body []byte) ([]string, error) {
	s, ok := r.schemas[key]
	if !ok {
		ptr := strings.ReplaceAll(strings.ReplaceAll(key, "~", "~0"), "/", "~1")
		var err error
		if s, err = r.compiler.Compile("reference.json#/$defs/" + ptr); err != nil {
			return nil, fmt.Errorf("compiling the reference's schema: %v", err)
		}
		r.schemas[key] = s
	}
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(string(body)))
	if err != nil {
		return nil, fmt.Errorf("the body is not JSON: %v: %.200s", err, body)
	}
	if err := s.Validate(v); err != nil {
		var ve *jsonschema.ValidationError
		if errors.As(err, &ve) {
			return validationLeaves(ve), nil
		}
		return nil, err
	}
	return nil, nil
}

// validationLeaves lists the innermost failures of e, sorted.
func validationLeaves(e *jsonschema.ValidationError) []string {
	p := message.NewPrinter(language.English)
	var leaves []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			leaves = append(leaves, fmt.Sprintf("at /%s: %s", strings.Join(e.InstanceLocation, "/"), e.ErrorKind.LocalizedString(p)))
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(e)
	slices.Sort(leaves)
	return slices.Compact(leaves)
}

// openAPI30 translates the reference's OpenAPI 3.0 schemas to JSON Schema
// 2020-12, as its TypeScript client (@gitbook/api) reads them:
//   - `nullable: true` admits null;
//   - references to components/schemas point to $defs;
//   - a union (oneOf) is not exclusive, as a TypeScript union is not: the
//     reference's unions overlap (a page computed or not, a document with
//     a body or empty). When every alternative fixes one property to values
//     of its own (a discriminator, stated or not: a page's `type`), the
//     union is dispatched on it, so that a failure is reported inside the
//     alternative the value chose; otherwise it is an anyOf;
//   - the empty alternative of a union (`properties: {}`,
//     `additionalProperties: false`) means "none of the others": JSON
//     Schema would read it as "no property at all", which an object
//     extending the union (a page is a Document) never satisfies;
//   - discriminator and example are annotations.
type openAPI30 struct {
	components jsonObj
}

func (tr *openAPI30) schema(v any) any {
	s, ok := v.(jsonObj)
	if !ok {
		return v
	}
	out := jsonObj{}
	for k, sub := range s {
		switch k {
		case "enum", "default", "example", "discriminator", "nullable", "oneOf":
		case "properties", "patternProperties", "$defs":
			props := jsonObj{}
			for name, p := range sub.(jsonObj) {
				props[name] = tr.schema(p)
			}
			out[k] = props
		case "allOf", "anyOf":
			var list []any
			for _, x := range sub.([]any) {
				list = append(list, tr.schema(x))
			}
			out[k] = list
		case "$ref":
			out[k] = strings.Replace(sub.(string), "#/components/schemas/", "#/$defs/", 1)
		default:
			out[k] = tr.schema(sub)
		}
	}
	if e, ok := s["enum"]; ok {
		out["enum"] = e
	}
	if alts, ok := s["oneOf"].([]any); ok {
		tr.union(out, alts)
	}
	if s["nullable"] == true {
		switch typ := out["type"].(type) {
		case string:
			out["type"] = []any{typ, "null"}
			if e, ok := out["enum"].([]any); ok && !slices.Contains(e, nil) {
				out["enum"] = append(slices.Clone(e), nil)
			}
		default:
			return jsonObj{"anyOf": []any{out, jsonObj{"type": "null"}}}
		}
	}
	return out
}

// union adds the translation of the alternatives alts to out.
func (tr *openAPI30) union(out jsonObj, alts []any) {
	var translated []any
	var required []any
	for _, a := range alts {
		if !isEmptyObject(a) {
			if req := tr.required(a); len(req) > 0 {
				required = append(required, jsonObj{"required": req})
			}
		}
	}
	for _, a := range alts {
		if isEmptyObject(a) {
			empty := jsonObj{"type": "object"}
			if len(required) > 0 {
				empty["not"] = jsonObj{"anyOf": required}
			}
			translated = append(translated, empty)
			continue
		}
		translated = append(translated, tr.schema(a))
	}
	if prop, values := tr.discriminator(alts); prop != "" {
		var cases []any
		var all []any
		for i, t := range translated {
			all = append(all, values[i]...)
			cases = append(cases, jsonObj{
				"if":   jsonObj{"properties": jsonObj{prop: jsonObj{"enum": values[i]}}, "required": []any{prop}},
				"then": t,
			})
		}
		out["allOf"] = append(asList(out["allOf"]), append(cases, jsonObj{"properties": jsonObj{prop: jsonObj{"enum": all}}, "required": []any{prop}})...)
		return
	}
	out["anyOf"] = append(asList(out["anyOf"]), translated...)
}

func isEmptyObject(v any) bool {
	s, ok := v.(jsonObj)
	props, _ := s["properties"].(jsonObj)
	return ok && s["additionalProperties"] == false && len(props) == 0
}

// resolved follows $ref to the reference's schema.
func (tr *openAPI30) resolved(v any) jsonObj {
	s, _ := v.(jsonObj)
	for s != nil {
		ref, ok := s["$ref"].(string)
		if !ok {
			break
		}
		s, _ = tr.components[strings.TrimPrefix(ref, "#/components/schemas/")].(jsonObj)
	}
	return s
}

// required is what an alternative requires, through $ref and allOf.
func (tr *openAPI30) required(v any) []any {
	s := tr.resolved(v)
	out := slices.Clone(asList(s["required"]))
	for _, part := range asList(s["allOf"]) {
		out = append(out, tr.required(part)...)
	}
	return out
}

// fixed is the values an alternative allows for property prop, through
// $ref and allOf; nil when it does not fix them.
func (tr *openAPI30) fixed(v any, prop string) []any {
	s := tr.resolved(v)
	props, _ := s["properties"].(jsonObj)
	if p, ok := props[prop].(jsonObj); ok {
		if e := asList(p["enum"]); len(e) > 0 {
			return e
		}
	}
	for _, part := range asList(s["allOf"]) {
		if e := tr.fixed(part, prop); e != nil {
			return e
		}
	}
	return nil
}

// discriminator finds the property every alternative fixes to values no
// other alternative allows, with each alternative's values.
func (tr *openAPI30) discriminator(alts []any) (string, [][]any) {
	if len(alts) < 2 {
		return "", nil
	}
	candidates := map[string]bool{}
	var collect func(v any)
	collect = func(v any) {
		s := tr.resolved(v)
		props, _ := s["properties"].(jsonObj)
		for name := range props {
			candidates[name] = true
		}
		for _, part := range asList(s["allOf"]) {
			collect(part)
		}
	}
	collect(alts[0])
	names := make([]string, 0, len(candidates))
	for name := range candidates {
		names = append(names, name)
	}
	sort.Strings(names)
next:
	for _, name := range names {
		seen := map[any]bool{}
		var values [][]any
		for _, a := range alts {
			vs := tr.fixed(a, name)
			if vs == nil {
				continue next
			}
			for _, v := range vs {
				if seen[v] {
					continue next
				}
				seen[v] = true
			}
			values = append(values, vs)
		}
		return name, values
	}
	return "", nil
}
