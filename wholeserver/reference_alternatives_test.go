package wholeserver_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/docsapi/docsapi/cmd/docsapi/server/servertest"
	"github.com/docsapi/docsapi/rest"
)

// The walk over GitBook's description: for each operation of the route
// table whose request body offers alternatives (oneOf, anyOf, not inside
// another alternative), one body per alternative, generated from the
// reference's schema (the fixture's body, with the alternative's value put
// where the alternative is), is sent through GitBook's own client,
// @gitbook/api, on the fixture of TestGitBookClient. Each must be a body
// the reference's request schema admits, and either succeed, with the
// answer or a later read (of the same path, of the list it is in, or those
// walkReadBack names) showing the strings sent (a document's structure
// aside, which may be read back as its text), or be refused with a 400
// naming the field, as rest.RefusedAlternatives lists (docs/api-coverage.md
// shows them). The plan runs as one batch; a variant the later reads do not
// show is sent again alone and read right after. A move's position is
// shown by the destination's listing holding the sibling, not by order.
func TestReferenceAlternatives(t *testing.T) {
	t.Parallel()
	node := gitbookClient(t)
	ref := loadReference(t)
	gen := loadAlternatives(t)
	gen.ref = ref
	env := servertest.New(t, servertest.Options{Jobs: true})
	f := newShapesFixture(t, env)
	ids := walkIDs(t, f)

	type variant struct {
		call        referenceCall
		point       altPoint
		alternative string
		sent        any
	}
	var variants []variant
	var planned []map[string]any
	operations := 0
	for _, route := range referenceOrder(rest.Routes) {
		op := ref.ops[route.Operation]
		if op == nil || !op.requestBody {
			continue
		}
		points := gen.points(route.Operation)
		if len(points) == 0 {
			continue
		}
		operations++
		gen.ids = maps.Clone(ids["*"])
		maps.Copy(gen.ids, ids[route.Operation])
		call := f.calls(t, route)[0]
		var base any = map[string]any{}
		if b, ok := walkBodies[route.Operation]; ok {
			call.body = strings.ReplaceAll(b, "{fileId}", f.ids["fileId"])
		}
		if call.body != "" {
			if err := json.Unmarshal([]byte(call.body), &base); err != nil {
				t.Fatalf("%s's fixture body: %v", route.Operation, err)
			}
		}
		for _, p := range points {
			for i, alt := range p.alts {
				x := gen.value(alt, getAt(base, p.path), 0)
				if props, ok := p.holder["properties"]; ok {
					// The alternatives' holder has properties of its own, which
					// each alternative's value has too.
					holder := gen.value(jsonObj{"type": "object", "properties": props, "required": p.holder["required"]}, getAt(base, p.path), 0)
					if m, ok := x.(map[string]any); ok {
						maps.Copy(holder.(map[string]any), m)
						x = holder
					}
				}
				// What the fixture gives beside the alternatives (the other
				// parts of an allOf, such as a search's query) stays.
				if held, ok := getAt(base, p.path).(map[string]any); ok {
					if m, ok := x.(map[string]any); ok {
						declared := gen.declaredBy(p.alts)
						for k, v := range held {
							if _, set := m[k]; !set && !declared[k] {
								m[k] = deepCopy(v)
							}
						}
					}
				}
				body := gen.place(gen.paths[route.Operation], deepCopy(base), p.path, x, 0)
				// A created object's slug is the variant's own.
				if m, ok := body.(map[string]any); ok && route.Method == "POST" && m["slug"] != nil {
					m["slug"] = fmt.Sprintf("%v-%d", m["slug"], len(variants))
				}
				// So is a created redirect's source (one redirect a source).
				if m, ok := body.(map[string]any); ok && route.Operation == "createSiteRedirect" {
					if source, ok := m["source"].(string); ok {
						m["source"] = fmt.Sprintf("%s-%d", source, len(variants))
					}
				}
				v := variant{call: call, point: p, alternative: gen.label(i, alt), sent: getAt(body, p.path)}
				raw, _ := json.Marshal(body)
				v.call.body = string(raw)
				variants = append(variants, v)
				c := map[string]any{"operation": route.Operation, "params": call.params, "body": json.RawMessage(raw)}
				if call.query != nil {
					c["query"] = call.query
				}
				planned = append(planned, c)
			}
		}
	}
	plan := filepath.Join(t.TempDir(), "plan.json")
	if err := os.WriteFile(plan, []byte(mustJSON(t, map[string]any{"endpoint": env.URL, "authToken": f.caller.Token, "calls": planned})), 0o600); err != nil {
		t.Fatal(err)
	}
	var answers []clientAnswer
	if out := servertest.RunNode(t, node, gitbookClientDir, "client.mjs", plan); json.Unmarshal(out, &answers) != nil || len(answers) != len(variants) {
		t.Fatalf("client.mjs answered %d calls of %d:\n%.2000s", len(answers), len(variants), out)
	}

	refused := map[string]rest.RefusedAlternative{}
	for _, r := range rest.RefusedAlternatives {
		refused[r.Operation+" "+r.Field+" "+r.Alternative] = r
	}
	passed, refusals := 0, 0
	var failures []string
	for i, a := range answers {
		v := variants[i]
		route, field := v.call.route, v.point.field()
		key := route.Operation + " " + field + " " + v.alternative
		fail := func(format string, args ...any) {
			failures = append(failures, fmt.Sprintf("%s %s (%s %s): %s\n    sent %.300s", route.Operation, field, v.alternative, route.Path,
				fmt.Sprintf(format, args...), v.call.body))
		}
		if leaves, err := ref.validateRequest(ref.ops[route.Operation], []byte(v.call.body)); err != nil || len(leaves) > 0 {
			fail("the generated body is not the reference's: %v %v", leaves, err)
			continue
		}
		if r, ok := refused[key]; ok {
			if a.Status != http.StatusBadRequest || !strings.Contains(a.Error, ": "+r.Names+": ") {
				fail("refused on purpose (%s), but answered %d %q", r.Why, a.Status, a.Error)
				continue
			}
			refusals++
			continue
		}
		if a.Status < 200 || a.Status > 299 {
			fail("answered %d: %s", a.Status, a.Error)
			continue
		}
		gen.ids = maps.Clone(ids["*"])
		maps.Copy(gen.ids, ids[route.Operation])
		missing := gen.notReadBack(t, f.caller, v.call, a, v.sent)
		if len(missing) > 0 {
			// The later reads above follow every call of the plan: sent
			// again alone, the variant is read right after it.
			if again := resend(t, node, env.URL, f.caller.Token, planned[i]); again.Status == a.Status {
				missing = gen.notReadBack(t, f.caller, v.call, again, v.sent)
			}
		}
		if len(missing) > 0 {
			fail("the answer and a later read of %s do not show %q", v.call.target(), missing)
			continue
		}
		passed++
	}
	t.Logf("%d operations with alternatives in their request bodies; %d alternatives walked: %d passed, %d refused on purpose, %d failed",
		operations, len(variants), passed, refusals, len(failures))
	if len(failures) > 0 {
		t.Errorf("%d alternatives failed:\n%s", len(failures), strings.Join(failures, "\n"))
	}
}

// alternatives generates bodies from the reference's schemas.
type alternatives struct {
	ref *reference
	// ids are values of the string properties naming objects (space,
	// collection, site...) for the operation walked: the fixture's.
	ids     map[string]string
	schemas jsonObj
	paths   map[string]jsonObj // operationId → the request body's schema
}

func loadAlternatives(t *testing.T) *alternatives {
	t.Helper()
	raw, err := restFile(referenceFile)
	if err != nil {
		t.Fatal(err)
	}
	var doc jsonObj
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	g := &alternatives{schemas: doc["components"].(jsonObj)["schemas"].(jsonObj), paths: map[string]jsonObj{}}
	for _, item := range doc["paths"].(jsonObj) {
		for _, o := range item.(jsonObj) {
			o, ok := o.(jsonObj)
			if !ok {
				continue
			}
			id, _ := o["operationId"].(string)
			request, _ := o["requestBody"].(jsonObj)
			content, _ := request["content"].(jsonObj)
			if media, ok := content["application/json"].(jsonObj); ok {
				g.paths[id] = media["schema"].(jsonObj)
			}
		}
	}
	return g
}

// altPoint is where a body offers alternatives: path's elements are
// property names, "[]" for an array's first item, "{}" for a map's value.
type altPoint struct {
	path []string
	alts []any
	// holder is the schema holding the alternatives.
	holder jsonObj
}

// field is the point's path as the server's messages name fields.
func (p altPoint) field() string {
	var b strings.Builder
	for _, e := range p.path {
		switch e {
		case "[]":
			b.WriteString(".0")
		case "{}":
			b.WriteString(".key")
		default:
			b.WriteString("." + e)
		}
	}
	return strings.TrimPrefix(b.String(), ".")
}

func (g *alternatives) resolve(s jsonObj, seen map[string]bool) (jsonObj, string) {
	name := ""
	for s["$ref"] != nil {
		name = strings.TrimPrefix(s["$ref"].(string), "#/components/schemas/")
		if seen[name] {
			return nil, name
		}
		s = g.schemas[name].(jsonObj)
	}
	return s, name
}

// points are the places of operation's body offering alternatives, not
// inside another alternative; a schema met again on the way is not
// entered twice.
func (g *alternatives) points(operation string) []altPoint {
	var out []altPoint
	var walk func(s jsonObj, path []string, seen map[string]bool)
	walk = func(s jsonObj, path []string, seen map[string]bool) {
		s, name := g.resolve(s, seen)
		if s == nil {
			return
		}
		if name != "" {
			seen = maps.Clone(seen)
			seen[name] = true
		}
		for _, k := range []string{"oneOf", "anyOf"} {
			if alts, ok := s[k].([]any); ok {
				out = append(out, altPoint{path: slices.Clone(path), alts: alts, holder: s})
				return
			}
		}
		for _, sub := range asList(s["allOf"]) {
			walk(sub.(jsonObj), path, seen)
		}
		props, _ := s["properties"].(jsonObj)
		for _, name := range slices.Sorted(maps.Keys(props)) {
			walk(props[name].(jsonObj), append(slices.Clone(path), name), seen)
		}
		if items, ok := s["items"].(jsonObj); ok {
			walk(items, append(slices.Clone(path), "[]"), seen)
		}
		if more, ok := s["additionalProperties"].(jsonObj); ok {
			walk(more, append(slices.Clone(path), "{}"), seen)
		}
	}
	if s, ok := g.paths[operation]; ok {
		walk(s, nil, map[string]bool{})
	}
	return out
}

// declaredBy are the properties any of alts declares: a fixture's value
// for one of them belongs to an alternative, not beside them.
func (g *alternatives) declaredBy(alts []any) map[string]bool {
	out := map[string]bool{}
	for _, alt := range alts {
		s, _ := g.resolve(alt.(jsonObj), nil)
		for _, part := range append([]any{s}, asList(s["allOf"])...) {
			r, _ := g.resolve(part.(jsonObj), nil)
			props, _ := r["properties"].(jsonObj)
			for name := range props {
				out[name] = true
			}
		}
	}
	return out
}

// label names an alternative: its index, and its schema's name or kind.
func (g *alternatives) label(i int, alt any) string {
	s := alt.(jsonObj)
	if ref, ok := s["$ref"].(string); ok {
		return fmt.Sprintf("#%d (%s)", i, strings.TrimPrefix(ref, "#/components/schemas/"))
	}
	kind, _ := s["type"].(string)
	if kind == "" {
		kind = "schema"
	}
	return fmt.Sprintf("#%d (%s)", i, kind)
}

// value is a value of schema s: hint (the fixture's value there) where it
// fits, else one generated: the required properties (and the hint's), an
// array of one item, an enum's first value, a string of the format.
func (g *alternatives) value(s any, hint any, depth int) any {
	schema, _ := g.resolve(s.(jsonObj), nil)
	for _, k := range []string{"oneOf", "anyOf"} {
		if alts, ok := schema[k].([]any); ok {
			if hint != nil {
				return hint
			}
			return g.nested(alts, depth)
		}
	}
	if ex, ok := schema["example"]; ok && hint == nil && schema["type"] != "object" && schema["type"] != "array" {
		return ex
	}
	if pattern, ok := schema["pattern"].(string); ok && hint == nil {
		if v, ok := patternValues[pattern]; ok {
			return v
		}
	}
	if all := asList(schema["allOf"]); len(all) > 0 {
		out := map[string]any{}
		for _, sub := range all {
			if m, ok := g.value(sub, hint, depth+1).(map[string]any); ok {
				maps.Copy(out, m)
			}
		}
		return out
	}
	if c, ok := schema["const"]; ok {
		return c
	}
	if enum := asList(schema["enum"]); len(enum) > 0 {
		if slices.Contains(enum, hint) {
			return hint
		}
		return enum[0]
	}
	kind, _ := schema["type"].(string)
	if props, ok := schema["properties"].(jsonObj); ok || kind == "object" {
		h, _ := hint.(map[string]any)
		out := map[string]any{}
		for _, name := range asList(schema["required"]) {
			out[name.(string)] = nil
		}
		for name := range h {
			if _, ok := props[name]; ok {
				out[name] = nil
			}
		}
		for name := range out {
			sub, ok := props[name].(jsonObj)
			if !ok {
				delete(out, name)
				continue
			}
			if id, ok := g.ids[name]; ok && h[name] == nil {
				r, _ := g.resolve(sub, nil)
				if r["type"] == "string" && r["enum"] == nil {
					out[name] = id
					continue
				}
				if items, _ := r["items"].(jsonObj); r["type"] == "array" && items["type"] == "string" && items["enum"] == nil {
					out[name] = []any{id}
					continue
				}
			}
			if v, given := h[name]; given && v == nil {
				continue // null, as the fixture gives it
			}
			out[name] = g.value(sub, h[name], depth+1)
		}
		if props == nil && h != nil {
			return h
		}
		return out
	}
	if hint != nil {
		return hint
	}
	switch kind {
	case "array":
		min, _ := schema["minItems"].(float64)
		if items, ok := schema["items"].(jsonObj); ok && (min > 0 || depth < 6) {
			return []any{g.value(items, nil, depth+1)}
		}
		return []any{}
	case "string":
		switch schema["format"] {
		case "uri", "url":
			return "https://example.com/walk"
		case "email":
			return "walk@example.com"
		case "date-time":
			return "2026-01-02T03:04:05.000Z"
		}
		out := "walk"
		if n, ok := schema["minLength"].(float64); ok && int(n) > len(out) {
			out += strings.Repeat("k", int(n)-len(out))
		}
		return out
	case "number", "integer":
		if n, ok := schema["minimum"].(float64); ok {
			return n
		}
		return 1
	case "boolean":
		return true
	}
	return map[string]any{}
}

// notReadBack is the strings of sent the answer a does not show, nor a
// later read of the call's path, when the route table has one.
func (g *alternatives) notReadBack(t *testing.T, u *servertest.User, c referenceCall, a clientAnswer, sent any) []string {
	t.Helper()
	var want []string
	collectStrings(sent, "", &want)
	if shown, ok := walkShown[c.route.Operation]; ok {
		want = shown
	}
	seen := string(a.JSON)
	var missing []string
	for _, w := range want {
		if !strings.Contains(seen, mustJSON(t, w)) && !strings.Contains(seen, w) {
			missing = append(missing, w)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	// A later read: of the same path, else of the list it is in, and
	// those walkReadBack names.
	target, parent := c.target(), c.route.Path[:strings.LastIndex(c.route.Path, "/")]
	if more, ok := walkReadBack[c.route.Operation]; ok {
		var body any
		_ = json.Unmarshal([]byte(c.body), &body)
		for _, path := range more(target, body, g.ids) {
			seen += string(u.Do("GET", path, nil).Body)
		}
	}
	for _, r := range rest.Routes {
		switch {
		case r.Method == "GET" && r.Path == c.route.Path:
			later := u.Do("GET", target+"?format=document", nil)
			if later.Status != http.StatusOK {
				later = u.Do("GET", target, nil)
			}
			seen += string(later.Body)
		case r.Method == "GET" && r.Path == parent && strings.HasSuffix(c.route.Path, "}"):
			seen += string(u.Do("GET", target[:strings.LastIndex(target, "/")], nil).Body)
		}
	}
	missing = missing[:0]
	for _, w := range want {
		if !strings.Contains(seen, mustJSON(t, w)) && !strings.Contains(seen, w) {
			missing = append(missing, w)
		}
	}
	return missing
}

// collectStrings collects the strings of v, those of a document's
// structure aside (its nodes' object, type, kind and fragment: a document
// may be read back as its text).
func collectStrings(v any, key string, out *[]string) {
	switch v := v.(type) {
	case string:
		if v != "" && !slices.Contains([]string{"object", "type", "kind", "fragment"}, key) {
			*out = append(*out, v)
		}
	case []any:
		for _, e := range v {
			collectStrings(e, key, out)
		}
	case map[string]any:
		for k, e := range v {
			collectStrings(e, k, out)
		}
	}
}

func deepCopy(v any) any {
	raw, _ := json.Marshal(v)
	var out any
	_ = json.Unmarshal(raw, &out)
	return out
}

// getAt is the value at path in v (nil when there is none).
func getAt(v any, path []string) any {
	for _, e := range path {
		switch e {
		case "[]":
			l, _ := v.([]any)
			if len(l) == 0 {
				return nil
			}
			v = l[0]
		case "{}":
			m, _ := v.(map[string]any)
			if len(m) == 0 {
				return nil
			}
			v = m[slices.Sorted(maps.Keys(m))[0]]
		default:
			m, _ := v.(map[string]any)
			v = m[e]
		}
	}
	return v
}

// patternValues are values of the reference's string patterns the walk
// meets where the reference gives no example.
var patternValues = map[string]string{
	`^([\w-]+\.)*[\w-]+\.[a-zA-Z]{2,}(\/[\w-]+)+$`: "example.com/docs",
	`^#(?:[0-9a-fA-F]{3}){1,2}$`:                   "#336699",
}

// nested is a value of one of alts, an alternative inside another's value:
// the first whose value the reference's schema of it admits (alternatives
// named by a schema of the reference), else the first's.
func (g *alternatives) nested(alts []any, depth int) any {
	var first any
	for i, alt := range alts {
		v := g.value(alt, nil, depth+1)
		if i == 0 {
			first = v
		}
		ref, ok := alt.(jsonObj)["$ref"].(string)
		if !ok {
			continue
		}
		raw, _ := json.Marshal(v)
		if leaves, err := g.ref.validateAt(strings.TrimPrefix(ref, "#/components/schemas/"), raw); err == nil && len(leaves) == 0 {
			return v
		}
	}
	return first
}

// place puts x at path in v, a value of schema s: what is missing on the
// way is made as value makes it (with its required properties).
func (g *alternatives) place(s any, v any, path []string, x any, depth int) any {
	if len(path) == 0 {
		return x
	}
	schema, _ := g.resolve(s.(jsonObj), nil)
	for _, sub := range asList(schema["allOf"]) {
		sub, _ := g.resolve(sub.(jsonObj), nil)
		if props, _ := sub["properties"].(jsonObj); props[path[0]] != nil {
			schema = sub
			break
		}
	}
	switch path[0] {
	case "[]":
		l, _ := v.([]any)
		if len(l) == 0 {
			l = []any{nil}
		}
		l[0] = g.place(schema["items"], l[0], path[1:], x, depth+1)
		return l
	case "{}":
		m, _ := v.(map[string]any)
		if m == nil {
			m = map[string]any{}
		}
		key := "key"
		if len(m) > 0 {
			key = slices.Sorted(maps.Keys(m))[0]
		}
		m[key] = g.place(schema["additionalProperties"], m[key], path[1:], x, depth+1)
		return m
	}
	m, _ := g.value(schema, v, depth).(map[string]any)
	if m == nil {
		m = map[string]any{}
	}
	props, _ := schema["properties"].(jsonObj)
	m[path[0]] = g.place(props[path[0]], m[path[0]], path[1:], x, depth+1)
	return m
}

// walkIDs are the objects the walk names where the reference wants an id,
// by property name, for every operation ("*") and for some: the pointers of
// a move are siblings at its destination; the comments and replies edited
// are the caller's own (only its author edits one).
func walkIDs(t *testing.T, f *shapesFixture) map[string]map[string]string {
	t.Helper()
	admin, org, space, cr := f.caller, f.ids["organizationId"], f.ids["spaceId"], f.ids["changeRequestId"]
	collection := f.ids["collectionId"]
	sibling := admin.Do("POST", "/v1/orgs/"+org+"/spaces", map[string]any{"title": "Sibling", "parent": collection}).Expect(http.StatusCreated).String("id")
	shelf := admin.Do("POST", "/v1/orgs/"+org+"/collections", map[string]any{"title": "Shelf", "parent": collection}).Expect(http.StatusCreated).String("id")
	ids := map[string]map[string]string{
		"*": {"space": space, "collection": collection, "site": f.ids["siteId"], "organization": org, "user": f.users["read"].ID,
			"users": f.users["read"].ID, "teams": f.ids["teamId"], "file": f.ids["fileId"],
			// A site space of the fixture's site, showing its space, and a
			// page of that space (site redirects' destinations, a site
			// search's site spaces).
			"siteSpaceId": f.ids["siteSpaceId"], "siteSpaceIds": f.ids["siteSpaceId"], "pageId": pageOfSiteSpace(t, f)},
		"moveSpace":      {"space": sibling, "collection": shelf},
		"moveCollection": {"space": f.idsFor["transferSpace"]["spaceId"], "collection": f.idsFor["transferCollection"]["collectionId"]},
	}
	for _, thread := range []struct{ base, suffix string }{{"/v1/spaces/" + space, "InSpace"}, {"/v1/spaces/" + space + "/change-requests/" + cr, "InChangeRequest"}} {
		comment := admin.Do("POST", thread.base+"/comments", `{"body":{"markdown":"Mine"}}`).Expect(http.StatusOK).String("id")
		reply := admin.Do("POST", thread.base+"/comments/"+comment+"/replies", `{"body":{"markdown":"Mine too"}}`).Expect(http.StatusOK).String("id")
		for _, op := range []string{"updateComment", "updateCommentReply"} {
			f.idsFor[op+thread.suffix] = map[string]string{"commentId": comment, "commentReplyId": reply}
		}
	}
	return ids
}

// pageOfSiteSpace is a page made in the space the fixture's site space
// shows.
func pageOfSiteSpace(t *testing.T, f *shapesFixture) string {
	t.Helper()
	var id string
	list := f.caller.Do("GET", "/v1/orgs/"+f.ids["organizationId"]+"/sites/"+f.ids["siteId"]+"/site-spaces", nil).Expect(http.StatusOK).JSON()
	for _, item := range list["items"].([]any) {
		if ss := item.(map[string]any); ss["id"] == f.ids["siteSpaceId"] {
			id, _ = ss["space"].(map[string]any)["id"].(string)
		}
	}
	out := f.caller.GraphQL(`mutation($s: ID!) { createPage(spaceId: $s, input: {title: "Press"}) { id } }`, map[string]any{"s": id})
	var data struct{ CreatePage struct{ ID string } }
	if err := json.Unmarshal(out.Data, &data); err != nil || data.CreatePage.ID == "" {
		t.Fatalf("a page in the site space's space %s: %s %v", id, out.Data, out.Errors)
	}
	return data.CreatePage.ID
}

// walkBodies are the bodies the walk starts from where the fixture's cannot
// take the alternatives: a template that takes a content reference.
var walkBodies = map[string]string{
	"applyTemplateToSpace": `{"id":"product-docs","params":{"contentRefs":{"logo":{"kind":"file","file":"{fileId}"}}}}`,
}

// walkShown is what a later read shows of a write, where it is not the
// strings sent: a template's file reference is shown by the backlinks of
// the file, which the template's overview is among.
var walkShown = map[string][]string{
	"applyTemplateToSpace": {`"title":"Overview"`},
	// A search writes nothing and does not echo its scope: its answer (the
	// client checks its schema) is a list of results.
	"searchSiteContent": {`"items":[`},
}

// walkReadBack are later reads that show what a write of an operation
// did, where neither its answer nor a read of its path (or its list) does.
var walkReadBack = map[string]func(target string, body any, ids map[string]string) []string{
	// A template's content reference is a file its overview links to.
	"applyTemplateToSpace": func(target string, body any, _ map[string]string) []string {
		file := fmt.Sprint(getAt(body, []string{"params", "contentRefs", "logo", "file"}))
		space := strings.TrimSuffix(target, "/content/template")
		return []string{space + "/content/files/" + file + "/backlinks"}
	},
	// The comment left with a review is posted on the change request.
	"submitChangeRequestReview": func(target string, _ any, _ map[string]string) []string {
		return []string{strings.TrimSuffix(target, "/reviews") + "/comments?format=document&limit=100"}
	},
	// Reviewers are asked with a description of the change request.
	"requestReviewersForChangeRequest": func(target string, _ any, _ map[string]string) []string {
		return []string{strings.TrimSuffix(target, "/requested-reviewers") + "?format=document"}
	},
	// Invited users and teams are listed with their roles.
	"inviteToSpace": func(target string, _ any, _ map[string]string) []string {
		return []string{target + "/users", target + "/teams"}
	},
	"inviteToCollection": func(target string, _ any, _ map[string]string) []string {
		return []string{target + "/users", target + "/teams"}
	},
	// A space moved is listed in its destination, beside the sibling it
	// was placed before or after.
	"moveSpace": func(_ string, body any, ids map[string]string) []string {
		return []string{"/v1/collections/" + getAt(body, []string{"parent"}).(string) + "/spaces?limit=100",
			"/v1/orgs/" + ids["organization"] + "/collections?limit=100"}
	},
	"moveCollection": func(_ string, _ any, ids map[string]string) []string {
		return []string{"/v1/orgs/" + ids["organization"] + "/spaces?limit=100", "/v1/orgs/" + ids["organization"] + "/collections?limit=100"}
	},
	// Each conversation ingested is read by its id.
	"ingestConversation": func(target string, body any, ids map[string]string) []string {
		var out []string
		list, ok := body.([]any)
		if !ok {
			list = []any{body}
		}
		for _, c := range list {
			out = append(out, target+"/"+fmt.Sprint(getAt(c, []string{"id"})))
		}
		return out
	},
}

// resend sends call alone through the client and returns its answer.
func resend(t *testing.T, node, endpoint, token string, call map[string]any) clientAnswer {
	t.Helper()
	plan := filepath.Join(t.TempDir(), "plan.json")
	if err := os.WriteFile(plan, []byte(mustJSON(t, map[string]any{"endpoint": endpoint, "authToken": token, "calls": []any{call}})), 0o600); err != nil {
		t.Fatal(err)
	}
	var answers []clientAnswer
	if out := servertest.RunNode(t, node, gitbookClientDir, "client.mjs", plan); json.Unmarshal(out, &answers) != nil || len(answers) != 1 {
		t.Fatalf("client.mjs's answer to one call:\n%.2000s", out)
	}
	return answers[0]
}
