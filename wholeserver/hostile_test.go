package wholeserver_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/docsapi/docsapi/cmd/docsapi/server/servertest"
	"github.com/docsapi/docsapi/rest"
)

// Hostile input a client could send, over every route of the table (what
// TestEveryRouteRefusesBadBytesAndBodies does not send already): path ids
// very long, with dot segments, encoded slashes or unicode; query
// parameters of the wrong type, out of range, repeated, and page cursors
// that this server never made; bodies truncated, with trailing garbage,
// nested 10,000 deep, with numbers out of int64's range, duplicate members,
// nulls, huge strings, under another Content-Type. No answer is a 5xx, every
// error is the reference's error shape, and what must be refused is refused
// (4xx) and changes nothing: the data reads the same after those. The
// inputs that may be taken (a null clearing an optional member, a huge
// description) are sent last, and must only not fail the server.
func TestEveryRouteSurvivesHostileInput(t *testing.T) {
	t.Parallel()
	env := servertest.New(t)
	owner := env.NewUser("Owner")
	fx := newRouteFixture(t, env, owner)
	h := &hostileClient{env: env, token: owner.Token, statuses: map[int]int{}}
	before := fx.snapshot()

	// Phase 1: what must be refused.
	for _, route := range rest.Routes {
		t.Run(route.Operation, func(t *testing.T) {
			r := newHostileRoute(t, fx, route)
			for _, p := range r.params {
				for _, v := range hostilePathValues {
					want := is4xx
					switch {
					case route.Method == http.MethodGet:
						want = below500 // a read may find nothing and say so
					case route.Method == http.MethodDelete:
						want = below500 // deleting what is not there is done (204)
					}
					if v.mayName && route.Method != http.MethodGet {
						continue
					}
					h.send(t, v.name+" as path parameter "+p, route.Method, fx.pathWith(t, route, p, v.value), "", r.valid, want)
				}
			}
			for _, q := range r.query {
				for _, v := range hostileQueryValues(q) {
					want := v.want
					if route.Method != http.MethodGet && !v.typed {
						want = nil // a write may take any string: phase 2
					}
					if want != nil {
						h.send(t, "query "+v.query, route.Method, r.withQuery(v.query), "", r.valid, want)
					}
				}
			}
			if r.valid == nil {
				return
			}
			for _, b := range refusedBodies(r.valid, r.decoded) {
				h.send(t, b.at, route.Method, r.path, b.contentType, b.raw, is4xx)
			}
		})
	}
	t.Logf("refused: %d requests: %s", h.requests, h.summary())
	if after := fx.snapshot(); after != before {
		t.Fatal("refused requests changed the data")
	}

	// Phase 2: what may be taken.
	h.requests, h.statuses = 0, map[int]int{}
	for _, route := range rest.Routes {
		t.Run(route.Operation+"/may-be-taken", func(t *testing.T) {
			r := newHostileRoute(t, fx, route)
			if route.Method != http.MethodGet {
				for _, p := range r.params {
					for _, v := range hostilePathValues {
						if v.mayName {
							h.send(t, v.name+" as path parameter "+p, route.Method, fx.pathWith(t, route, p, v.value), "", r.valid, below500)
						}
					}
				}
				for _, q := range r.query {
					for _, v := range hostileQueryValues(q) {
						if !v.typed {
							h.send(t, "query "+v.query, route.Method, r.withQuery(v.query), "", r.valid, below500)
						}
					}
				}
			}
			if r.valid == nil {
				return
			}
			for _, b := range takenBodies(r.valid, r.decoded) {
				h.send(t, b.at, route.Method, r.path, b.contentType, b.raw, below500)
			}
		})
	}
	t.Logf("may be taken: %d requests: %s", h.requests, h.summary())
}

// hostileRoute is a route of the table with the fixture's ids in its path,
// the names of its path and query parameters, and its valid body (nil when
// it takes none).
type hostileRoute struct {
	path    string
	params  []string
	query   []hostileVar
	valid   []byte
	decoded any
}

// hostileVar is an operation's variable: its name and GraphQL type.
type hostileVar struct{ name, typ string }

var (
	pathParamPattern = regexp.MustCompile(`\{(\w+)(\.\.\.)?\}`)
	variablePattern  = regexp.MustCompile(`\$(\w+)\s*:\s*([\w!\[\]]+)`)
)

func newHostileRoute(t *testing.T, fx *routeFixture, route rest.Route) *hostileRoute {
	t.Helper()
	r := &hostileRoute{path: fx.path(t, route)}
	for _, m := range pathParamPattern.FindAllStringSubmatch(route.Path, -1) {
		r.params = append(r.params, m[1])
	}
	for _, v := range operationVariables(t, route.Operation) {
		switch {
		case v.name == "input":
			b, ok := fx.bodies[route.Operation]
			if !ok {
				t.Fatalf("no valid body for %s: add one to newRouteFixture", route.Operation)
			}
			r.valid = []byte(b)
			if err := json.Unmarshal(r.valid, &r.decoded); err != nil {
				t.Fatalf("the valid body of %s: %v", route.Operation, err)
			}
		case !strings.Contains(route.Path, "{"+v.name+"}") && !strings.Contains(route.Path, "{"+v.name+"...}"):
			r.query = append(r.query, v)
		}
	}
	if route.Extended != "" {
		r.query = append(r.query, hostileVar{"extended", "Boolean"})
	}
	return r
}

// withQuery is the route's path with query added to its query string.
func (r *hostileRoute) withQuery(query string) string {
	if strings.Contains(r.path, "?") {
		return r.path + "&" + query
	}
	return r.path + "?" + query
}

// operationVariables are the variables the operation document declares.
func operationVariables(t *testing.T, operation string) []hostileVar {
	var out []hostileVar
	for _, m := range variablePattern.FindAllStringSubmatch(operationSource(t, operation), -1) {
		out = append(out, hostileVar{m[1], m[2]})
	}
	return out
}

// hostilePathValues name nothing that exists, and nothing a client may
// create (a route creating what its path names, an integration or an
// OpenAPI specification, refuses them), except those with mayName: these
// are sent to writes in the second phase.
var hostilePathValues = []struct {
	name, value string
	mayName     bool
}{
	{"10 KB", strings.Repeat("a", 10<<10), false},
	{"a dot segment", "..", false},
	{"an encoded dot segment", "%2E%2E", false},
	{"an encoded slash", "a%2Fb", false},
	{"unicode", "%C3%B1%E6%96%87%F0%9F%98%80", false},
	{"a right-to-left override", "a%E2%80%AEb", false},
	{"a space", "a%20b", false},
	{"a negative number", "-1", true},
}

// hostileQueryValue is a query string for one parameter: typed tells
// whether the parameter's type refuses it (an Int given "abc"); want
// checks the status.
type hostileQueryValue struct {
	query string
	typed bool
	want  func(int) bool
}

// hostileQueryValues are the query strings sent for variable v.
func hostileQueryValues(v hostileVar) []hostileQueryValue {
	base := strings.TrimSuffix(v.typ, "!")
	var out []hostileQueryValue
	typed := func(values ...string) {
		for _, s := range values {
			out = append(out, hostileQueryValue{v.name + "=" + s, true, is4xx})
		}
	}
	free := func(values ...string) {
		for _, s := range values {
			out = append(out, hostileQueryValue{v.name + "=" + s, false, below500})
		}
	}
	switch base {
	case "Int":
		typed("abc", "1e30", "99999999999999999999", "2147483648", "-2147483649", "1.5", "0x10", "", "1&"+v.name+"=abc")
		if v.name == "limit" {
			typed("-1", "1001")
		}
	case "Float":
		typed("abc", "1e400", "")
	case "Boolean":
		typed("maybe", "2", "", "true&"+v.name+"=maybe")
	case "String", "ID", "[ID!]", "[String!]":
		free(strings.Repeat("a", 10<<10), "..", "%C3%B1%E6%96%87%F0%9F%98%80", "-1", "a&"+v.name+"=b", ",,,")
		if v.name == "page" {
			for _, c := range hostileCursors() {
				free(c)
			}
		}
	default: // an enum or a list of one
		typed("NOT_A_VALUE", "not-a-value")
		free("")
	}
	return out
}

// hostileCursors are page cursors this server never made: garbage,
// truncated, and well-formed ones holding what no list's key holds.
func hostileCursors() []string {
	enc := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	made := enc(`{"t":"2025-01-01T00:00:00Z","i":"x"}`)
	return []string{
		"garbage", "%21%21%21", "%2B%2F%3D", made[:len(made)/2], made + "%3D%3D", enc(`null`), enc(`[]`), enc(`"x"`),
		enc(`{"i":""}`), enc(`{"i":1}`), enc(`{"i":"\u0000"}`), enc(`{"i":"\ud800"}`), enc("{\"i\":\"\xff\"}"),
		enc(`{"i":"` + strings.Repeat("a", 5000) + `"}`), enc(`{"i":"x","t":"bad"}`),
		enc(`{"i":"x","t":"0000-01-01T00:00:00Z"}`), enc(`{"i":"x","t":"9999-12-31T23:59:59.999999999+14:00"}`),
		enc(`{"i":"x","t":"9999-12-31T23:59:59.999999999-14:00"}`), enc(`{"i":"x","t":"0000-12-31T23:00:00-01:00"}`),
		enc(`{"i":"x","p":1e30}`), enc(`{"i":"x","p":9223372036854775807}`), enc(`{"i":"x","p":-9223372036854775808}`),
		enc(`{"i":"x","p":1.5}`),
	}
}

// hostileBody is a request body (with its Content-Type, "" for JSON) and
// what it is.
type hostileBody struct {
	at, contentType string
	raw             []byte
}

// deep is v nested depth times in arrays (or objects).
func deep(depth int, object bool, v string) string {
	open, close := "[", "]"
	if object {
		open, close = `{"a":`, "}"
	}
	return strings.Repeat(open, depth) + v + strings.Repeat(close, depth)
}

// outOfRange are JSON numbers no int64 (or float64) holds.
var outOfRange = []string{"99999999999999999999", "-9223372036854775809", "1e400", "-1e400", "1e-400"}

// refusedBodies are the bodies made of valid (decoded: its value) that
// must be refused.
// unsignedClaimsAt is where a visitor's unsigned claims are in a body
// (resolvePublishedContentByUrl): a free-form object of whatever the
// visitor set, in its browser. A claim the site's visitor schema does not
// declare, or of another type (another JSON type, a number out of range),
// counts for nothing, as the reader counts it, rather than refuse a
// visitor's address for what its browser holds.
const unsignedClaimsAt = "visitor.unsignedClaims."

func refusedBodies(valid []byte, decoded any) []hostileBody {
	out := []hostileBody{
		{at: "a body with trailing garbage", raw: append(bytes.Clone(valid), 'x')},
		{at: "a body with a closing brace after it", raw: append(bytes.Clone(valid), '}')},
		{at: "a body with a closing bracket after it", raw: append(bytes.Clone(valid), ']')},
		{at: "a body twice", raw: append(bytes.Clone(valid), valid...)},
		{at: "a body and a comma", raw: append(bytes.Clone(valid), ',')},
		{at: "a truncated body", raw: valid[:len(valid)-1]},
		{at: "half a body", raw: valid[:len(valid)/2]},
		{at: "a body nested 10,000 deep", raw: []byte(deep(10_000, false, "1"))},
		{at: "a body nested 10,001 deep", raw: []byte(deep(10_001, false, "1"))},
		{at: "a body of objects nested 10,000 deep", raw: []byte(deep(10_000, true, "1"))},
		{at: "a number out of range as the body", raw: []byte(outOfRange[0])},
		{at: "a form as the body", contentType: "application/x-www-form-urlencoded", raw: []byte("title=Planted")},
		{at: "a multipart form as the body", contentType: "multipart/form-data; boundary=x",
			raw: []byte("--x\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nPlanted\r\n--x--\r\n")},
	}
	for _, ct := range []string{"text/plain", "application/x-www-form-urlencoded", "application/xml", "application/json; charset=utf-16"} {
		out = append(out, hostileBody{at: "a truncated body as " + ct, contentType: ct, raw: valid[:len(valid)-1]})
	}
	obj, isObject := decoded.(map[string]any)
	for _, v := range variants(decoded, func(v any) (any, bool) {
		switch v.(type) {
		case string, bool, json.Number, float64:
			return json.RawMessage(outOfRange[0]), true
		}
		return nil, false
	}) {
		if !strings.HasPrefix(v.at, "configuration.") && !strings.HasPrefix(v.at, "metadata.attributes") && !strings.HasPrefix(v.at, unsignedClaimsAt) {
			for _, n := range outOfRange {
				raw := bytes.Replace(v.raw, []byte(outOfRange[0]), []byte(n), 1)
				out = append(out, hostileBody{at: "a number out of range at " + v.at + ": " + n, raw: raw})
			}
		}
	}
	if isObject {
		// A member twice, its wrong value last: the value taken is the
		// last one, or the body is refused for the duplicate; either way
		// refused.
		for _, k := range sortedKeys(obj) {
			wrong, ok := otherType(obj[k])
			if !ok || strings.HasPrefix(k, "configuration") {
				continue
			}
			out = append(out, hostileBody{at: "member " + k + " twice, wrong last", raw: withMember(valid, k, wrong)})
		}
	}
	return out
}

// takenBodies are the bodies made of valid that a server may take: they
// must not fail it.
func takenBodies(valid []byte, decoded any) []hostileBody {
	var out []hostileBody
	for _, ct := range []string{"", "text/plain", "application/x-www-form-urlencoded", "application/json; charset=utf-8", "application/merge-patch+json"} {
		out = append(out, hostileBody{at: "the valid body as " + ct, contentType: ct, raw: valid})
	}
	for _, v := range variants(decoded, func(v any) (any, bool) { return nil, v != nil }) {
		out = append(out, hostileBody{at: "null at " + v.at, raw: v.raw})
	}
	huge := strings.Repeat("é", 100_000) // 200 KB
	for _, v := range variants(decoded, func(v any) (any, bool) {
		_, ok := v.(string)
		return huge, ok
	}) {
		out = append(out, hostileBody{at: "a huge string at " + v.at, raw: v.raw})
	}
	for _, v := range variants(decoded, func(v any) (any, bool) {
		return json.RawMessage(deep(10_000, true, "1")), v != nil
	}) {
		out = append(out, hostileBody{at: "objects nested 10,000 deep at " + v.at, raw: v.raw})
	}
	if obj, ok := decoded.(map[string]any); ok {
		for _, k := range sortedKeys(obj) {
			if wrong, ok := otherType(obj[k]); ok {
				first, _ := json.Marshal(map[string]any{k: wrong})
				out = append(out, hostileBody{at: "member " + k + " twice, wrong first",
					raw: append(first[:len(first)-1:len(first)-1], append([]byte{','}, valid[1:]...)...)})
			}
		}
	}
	return out
}

// withMember is the object valid with member k (already in it) written
// again at its end with value v.
func withMember(valid []byte, k string, v any) []byte {
	member, _ := json.Marshal(map[string]any{k: v})
	end := bytes.LastIndexByte(valid, '}')
	return append(append(bytes.Clone(valid[:end]), ','), member[1:]...)
}

func is4xx(status int) bool    { return status >= 400 && status < 500 }
func below500(status int) bool { return status < 500 }

// hostileClient sends requests as they are (no redirect followed, any
// Content-Type) and checks their answers.
type hostileClient struct {
	env      *servertest.Env
	token    string
	requests int
	statuses map[int]int
}

// send sends body (nil: none) and fails t unless want accepts the status
// and an error answers the reference's error shape.
func (h *hostileClient) send(t *testing.T, what, method, path, contentType string, body []byte, want func(int) bool) {
	t.Helper()
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
		if contentType == "" {
			contentType = "application/json"
		}
	}
	req, err := http.NewRequest(method, h.env.URL+path, r)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("Authorization", "Bearer "+h.token)
	res, err := noRedirects.Do(req)
	if err != nil {
		t.Fatalf("%s: %s %.200s: %v", what, method, path, err)
	}
	raw, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	h.requests++
	h.statuses[res.StatusCode]++
	if !want(res.StatusCode) {
		t.Errorf("%.200s: %s %.200s: %d %.300s", what, method, path, res.StatusCode, raw)
		return
	}
	if res.StatusCode >= 400 {
		var e struct {
			Error *struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(raw, &e) != nil || e.Error == nil || e.Error.Code != res.StatusCode || e.Error.Message == "" ||
			!strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
			t.Errorf("%.200s: %s %.200s: %d is not the reference's error shape: %q %.300s", what, method, path, res.StatusCode,
				res.Header.Get("Content-Type"), raw)
		}
	}
}

func (h *hostileClient) summary() string {
	out := make([]string, 0, len(h.statuses))
	for status, n := range h.statuses {
		out = append(out, fmt.Sprintf("%d×%d", n, status))
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

// Every operation of the route table run over /graphql, one variable at a
// time given what its type refuses (a string for an Int, an Int past 32
// bits, a value no enum has, an object for an ID, a huge or null-filled
// list...) or odd values it takes (very long, dotted, unicode ids): never
// an HTTP 5xx, never an INTERNAL error, every error with its code, the
// refused operations answered with errors, and the data unchanged after.
func TestEveryOperationSurvivesHostileVariables(t *testing.T) {
	t.Parallel()
	env := servertest.New(t)
	owner := env.NewUser("Owner")
	fx := newRouteFixture(t, env, owner)
	documents := map[string]string{}
	for _, doc := range env.Server.API.Documents() {
		if m := operationName.FindStringSubmatch(doc); m != nil {
			documents[m[1]] = doc
		}
	}
	before := fx.snapshot()

	seen, requests, refused, baseline := map[string]bool{}, 0, 0, 0
	for _, route := range rest.Routes {
		for _, name := range []string{route.Operation, route.Extended} {
			if name == "" || seen[name] {
				continue
			}
			seen[name] = true
			doc := documents[name]
			if doc == "" {
				t.Fatalf("no document for %s", name)
			}
			mutation := strings.HasPrefix(doc, "mutation")
			valid := validVariables(t, fx, route, name)
			run := func(what string, vars map[string]any, mustFail bool) *servertest.GraphQLResponse {
				t.Helper()
				requests++
				res := owner.Do("POST", "/graphql", map[string]any{"query": doc, "operationName": name, "variables": vars})
				var out servertest.GraphQLResponse
				if err := json.Unmarshal(res.Body, &out); err != nil || res.Status >= 500 {
					t.Errorf("%s, %s: %d %.300s", name, what, res.Status, res.Body)
					return &out
				}
				for _, e := range out.Errors {
					code, _ := e.Extensions["code"].(string)
					if status, _ := e.Extensions["status"].(float64); code == "" || code == "INTERNAL" || status >= 500 {
						t.Errorf("%s, %s: error %q %v", name, what, e.Message, e.Extensions)
					}
				}
				if len(out.Errors) > 0 {
					refused++
				} else if mustFail {
					t.Errorf("%s, %s: no error: %.300s", name, what, res.Body)
				}
				return &out
			}
			if !mutation {
				// The valid variables run, so what follows is refused for
				// the one variable changed.
				baseline++
				if out := run("valid variables", valid, false); len(out.Errors) > 0 &&
					(baselineRefused[name] == "" || !strings.HasPrefix(out.Errors[0].Message, baselineRefused[name])) {
					t.Errorf("%s: the valid variables %v are refused: %s", name, valid, out.Errors[0].Message)
				}
			}
			for _, v := range operationVariables(t, name) {
				for _, h := range hostileVariableValues(v, valid[v.name]) {
					vars := maps.Clone(valid)
					vars[v.name] = h.value
					run(fmt.Sprintf("$%s: %s %s", v.name, v.typ, h.what), vars, h.refused)
				}
			}
		}
	}
	t.Logf("%d operations (%d queries), %d requests, %d answered errors", len(seen), baseline, requests, refused)
	if after := fx.snapshot(); after != before {
		t.Fatal("refused operations changed the data")
	}
}

// baselineRefused are the queries refused with their valid variables over
// /graphql, by the start of the message: a client's document is held to
// limits the server's own are not.
var baselineRefused = map[string]string{
	"listPageLinksInSpace":           "operation nests",
	"listSpacePageBacklinks":         "operation nests",
	"listSpaceFileBacklinks":         "operation nests",
	"listPageLinksInChangeRequest":   "operation nests",
	"listChangeRequestFileBacklinks": "operation nests",
	"getPublishedContentSite":        "published site not found", // the fixture publishes none
}

var operationName = regexp.MustCompile(`^(?:query|mutation)\s+(\w+)`)

// validVariables are the variables of route's operation name with the
// fixture's ids and body.
func validVariables(t *testing.T, fx *routeFixture, route rest.Route, name string) map[string]any {
	t.Helper()
	ids := threadIDs(route, fx.ids)
	vars := map[string]any{}
	for _, v := range operationVariables(t, name) {
		switch {
		case v.name == "input":
			var body any
			if err := json.Unmarshal([]byte(fx.bodies[route.Operation]), &body); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			vars["input"] = body
		case ids[v.name] != "" && strings.Contains(route.Path, "{"+v.name):
			vars[v.name] = ids[v.name]
		case v.name == "query":
			vars[v.name] = "hello"
		case v.name == "source":
			vars[v.name] = "/old-page" // the fixture's redirect
		case v.name == "url":
			vars[v.name] = fx.ids["publishedURL"]
		}
	}
	return vars
}

// hostileVariable is a value for a variable: refused tells whether its
// type refuses it.
type hostileVariable struct {
	what    string
	value   any
	refused bool
}

// hostileVariableValues are the values sent for variable v, whose valid
// value is valid (nil when it has none).
func hostileVariableValues(v hostileVar, valid any) []hostileVariable {
	var out []hostileVariable
	refused := func(what string, value any) { out = append(out, hostileVariable{what, value, true}) }
	taken := func(what string, value any) { out = append(out, hostileVariable{what, value, false}) }
	raw := func(s string) json.RawMessage { return json.RawMessage(s) }
	nonNull := strings.HasSuffix(v.typ, "!")
	if nonNull {
		refused("null", nil)
	}
	if strings.HasPrefix(v.typ, "[") {
		refused("a list of 100,000 nulls", raw("["+strings.TrimSuffix(strings.Repeat("null,", 100_000), ",")+"]"))
		refused("a list nested 10,000 deep", raw(deep(10_000, false, `"x"`)))
		refused("an object", map[string]any{"x": 1})
		huge := make([]string, 50_000)
		for i := range huge {
			huge[i] = "x"
		}
		taken("a list of 50,000 short strings", huge)
		return out
	}
	switch base := strings.TrimSuffix(v.typ, "!"); base {
	case "Int":
		for _, n := range []string{"2147483648", "-2147483649", "1e30", "99999999999999999999", "1.5", "1e400", `"1"`, "true", "{}", "[1]"} {
			refused(n, raw(n))
		}
		if v.name == "limit" {
			refused("-1", -1)
			refused("1001", 1001)
		}
	case "Float":
		refused(`"x"`, "x")
		refused("1e400", raw("1e400"))
	case "Boolean":
		refused(`"true"`, "true")
		refused("1", 1)
		refused("{}", map[string]any{})
	case "String", "ID":
		refused("true", true)
		refused("{}", map[string]any{})
		refused("[]", []any{})
		refused("1.5", raw("1.5"))
		refused("1e400", raw("1e400"))
		if base == "String" {
			refused("42", 42)
		} else {
			taken("42", 42) // an ID takes an Int
		}
		taken("10 KB", strings.Repeat("a", 10<<10))
		taken("..", "..")
		taken("unicode", "ñ文😀\u202e")
		if v.name == "page" {
			for _, c := range hostileCursors() {
				taken("cursor "+c, c)
			}
		}
	default:
		if _, isObject := valid.(map[string]any); isObject || v.name == "input" {
			refused(`"x"`, "x")
			refused("5", 5)
			refused("[]", []any{})
			refused("an unknown member", map[string]any{"notAMember": 1})
			refused("objects nested 10,000 deep", raw(deep(10_000, true, "1")))
			refused("arrays nested 10,000 deep", raw(deep(10_000, false, "1")))
		} else { // an enum
			refused("NOT_A_VALUE", "NOT_A_VALUE")
			refused("not-a-value", "not-a-value")
			refused("5", 5)
			refused(`""`, "")
			refused("{}", map[string]any{})
		}
	}
	return out
}

// Request bodies of /graphql that are not a GraphQL request, or not a
// valid one: each is refused with GraphQL errors with their codes, never a
// 5xx, and none runs its mutation.
func TestGraphQLRefusesHostileRequests(t *testing.T) {
	t.Parallel()
	env := servertest.New(t)
	owner := env.NewUser("Owner")
	org := owner.NewOrg("Acme")
	rename := `mutation($id: ID!) { updateOrganization(id: $id, input: {title: "Renamed"}) { title } }`
	valid, _ := json.Marshal(map[string]any{"query": rename, "variables": map[string]any{"id": org}})
	h := &hostileClient{env: env, token: owner.Token, statuses: map[int]int{}}
	for _, tc := range []struct{ what, contentType, body string }{
		{"trailing garbage", "", string(valid) + "x"},
		{"a closing brace after the request", "", string(valid) + "}"},
		{"a closing bracket after the request", "", string(valid) + "]"},
		{"the request twice", "", string(valid) + string(valid)},
		{"a truncated request", "", string(valid[:len(valid)-1])},
		{"an empty body", "", ""},
		{"null", "", "null"},
		{"a number", "", "99999999999999999999"},
		{"arrays nested 10,000 deep", "", deep(10_000, false, "1")},
		{"variables nested 10,000 deep", "", `{"query":"query($v: JSONObject) { __typename }","variables":{"v":` + deep(10_000, true, "1") + `}}`},
		{"the query as a number", "", `{"query":5}`},
		{"the query as an object", "", `{"query":{"a":1}}`},
		{"variables as a string", "", `{"query":` + jsonString(rename) + `,"variables":"x"}`},
		{"variables as an array", "", `{"query":` + jsonString(rename) + `,"variables":[1]}`},
		{"operationName as a number", "", `{"query":` + jsonString(rename) + `,"operationName":5}`},
		{"an unknown operationName", "", `{"query":` + jsonString(rename) + `,"operationName":"nope"}`},
		{"extensions as a string", "", `{"query":` + jsonString(rename) + `,"extensions":"x"}`},
		{"a query that is not GraphQL", "", `{"query":"{{{{"}`},
		{"a query of 10,000 nested selections", "", `{"query":` + jsonString(strings.Repeat("{a", 10_000)+strings.Repeat("}", 10_000)) + `}`},
		{"an Int past 64 bits in the document", "", `{"query":"{ organizations(limit: 99999999999999999999) { count } }"}`},
		{"a form", "application/x-www-form-urlencoded", "query=" + rename},
		{"the request as text/plain, truncated", "text/plain", string(valid[:len(valid)-1])},
		{"a multipart form with no operations", "multipart/form-data; boundary=x", "--x\r\nContent-Disposition: form-data; name=\"map\"\r\n\r\n{}\r\n--x--\r\n"},
	} {
		h.sendGraphQL(t, tc.what, tc.contentType, []byte(tc.body))
	}
	// GET's variables and extensions are JSON too.
	for _, param := range []string{"variables", "extensions"} {
		get := "/graphql?query=" + url.QueryEscape("{ __typename }") + "&" + param + "=" + url.QueryEscape(`{"a":1}}`)
		if res := owner.Do("GET", get, nil); res.Status != http.StatusBadRequest {
			t.Errorf("GET with %s followed by a '}': %d %s", param, res.Status, res.Body)
		}
	}
	if title := owner.Do("GET", "/v1/orgs/"+org, nil).Expect(http.StatusOK).String("title"); title != "Acme" {
		t.Errorf("a refused request renamed the organization: %q", title)
	}
	t.Logf("%d requests: %s", h.requests, h.summary())
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// sendGraphQL posts body to /graphql and fails t unless the answer is a
// refusal: GraphQL errors, each with its code, and no data.
func (h *hostileClient) sendGraphQL(t *testing.T, what, contentType string, body []byte) {
	t.Helper()
	if contentType == "" {
		contentType = "application/json"
	}
	req, err := http.NewRequest(http.MethodPost, h.env.URL+"/graphql", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("Authorization", "Bearer "+h.token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	raw, _ := io.ReadAll(res.Body)
	res.Body.Close()
	h.requests++
	h.statuses[res.StatusCode]++
	var out servertest.GraphQLResponse
	// A document that does not parse or validate is answered 200 to a
	// client accepting application/json (GraphQL over HTTP), without data.
	err = json.Unmarshal(raw, &out)
	refused := is4xx(res.StatusCode) || res.StatusCode == http.StatusOK && (len(out.Data) == 0 || string(out.Data) == "null")
	if err != nil || !refused || len(out.Errors) == 0 {
		t.Errorf("%s: %d %.300s", what, res.StatusCode, raw)
		return
	}
	for _, e := range out.Errors {
		if code, _ := e.Extensions["code"].(string); code == "" || code == "INTERNAL" {
			t.Errorf("%s: error %q %v", what, e.Message, e.Extensions)
		}
	}
}

// A path with dot or empty segments names nothing: it is a 404, not the
// mux's 307 to the cleaned path, which keeps the method: a client following
// it while deleting comment ".." of a space deleted the space.
func TestDotSegmentsAreNotRedirected(t *testing.T) {
	t.Parallel()
	env := servertest.New(t)
	alice := env.NewUser("Alice")
	org := alice.NewOrg("Acme")
	space := alice.Do("POST", "/v1/orgs/"+org+"/spaces", `{"title":"Handbook"}`).Expect(http.StatusCreated).String("id")
	h := &hostileClient{env: env, token: alice.Token, statuses: map[int]int{}}
	is404 := func(status int) bool { return status == http.StatusNotFound }
	for _, tc := range []struct{ method, path string }{
		{"DELETE", "/v1/spaces/" + space + "/comments/.."},
		{"DELETE", "/v1/spaces/" + space + "/comments/x/../.."},
		{"DELETE", "/v1/spaces/" + space + "/./"},
		{"PATCH", "/v1/spaces/" + space + "/comments/.."},
		{"GET", "/v1//orgs"},
		{"GET", "/v1/orgs/" + org + "/spaces/.."},
	} {
		h.send(t, "a path with dot or empty segments", tc.method, tc.path, "", nil, is404)
	}
	alice.Do("GET", "/v1/spaces/"+space, nil).Expect(http.StatusOK)
}
