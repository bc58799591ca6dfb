package rest

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// GitBook's reference API description, as published: every route's request
// body is validated against the reference's schema of it, by operationId
// (our operation names are the reference's), before its variables are
// built. The GraphQL input type's checks (checkBody, then the resolvers')
// apply as well: where the reference is looser, they still refuse.
//
//go:embed reference/gitbook-openapi-0.146.0.json
var referenceDocument []byte

// referenceURL names the reference document among the compiler's resources.
const referenceURL = "https://docsapi.invalid/reference/gitbook-openapi-0.146.0.json"

// bodyExtensions are the members of a route's body this server documents
// as extensions of the reference's body (docs/api-guide.md), each with its
// schema, of the reference's components; "" leaves it to the GraphQL input
// type alone. They are set aside before the reference's schema is applied
// (which might refuse them), then checked on their own.
var bodyExtensions = map[string]map[string]string{
	// Who can read the space (#spaces).
	"updateSpaceById": {"visibility": ""},
	// A custom hostname of the site (#sites).
	"updateSiteById": {"hostname": ""},
	// A template's pages added to a change request (#content).
	"applyTemplateToSpace": {"changeRequestId": ""},
	// A change request's description, as updateChangeRequestById takes
	// it, and the cluster of conversation issues it addresses
	// (#conversation-insights).
	"createChangeRequest": {"description": `{"$ref": "#/components/schemas/JSONDocument"}`, "conversationsIssuesCluster": ""},
	// url, the name the GraphQL input gives tunnelUrl: accepted with it,
	// the same (#development-mode). tunnelUrl is required, as in the
	// reference.
	"setIntegrationDevelopmentMode": {"url": ""},
	// site, the name the GraphQL input (and /v1/openapi.json) gives
	// siteId: either, or both the same (bodyAliases).
	"installIntegrationOnSite": {"site": ""},
}

// bodyAliases are the members of a route's body the reference names
// otherwise than the GraphQL input: the reference's name, then the
// input's. Either may be given, or both the same; the reference's is
// renamed to the input's.
var bodyAliases = map[string][][2]string{
	"installIntegrationOnSite": {{"siteId", "site"}},
}

// bodyForms are the bodies this server documents in another form than the
// reference's: the schema applied instead, of the reference's components.
var bodyForms = map[string]string{
	// A redirect may also lead to a URL (kind url: a path of the site or
	// an absolute http(s) URL), besides the reference's section, site
	// space and page (schema.graphqls, SiteRedirectDestinationInput).
	"createSiteRedirect": `{"type": "object", "required": ["source", "destination"], "properties": {
		"source": {"$ref": "#/components/schemas/SiteRedirectSourcePath"},
		"destination": ` + redirectDestinationForm + `}}`,
	"updateSiteRedirectById": `{"type": "object", "properties": {
		"source": {"$ref": "#/components/schemas/SiteRedirectSourcePath"},
		"destination": ` + redirectDestinationForm + `}}`,
	// The reference requires role; absent, as null, invites a guest
	// (schema.graphqls, CreateOrganizationInviteInput). Only invites to
	// the organization exist here.
	"createOrganizationInvite": `{"type": "object", "properties": {"role": {"$ref": "#/components/schemas/MemberRoleOrGuest"}}}`,
	// The reference lists position as required, and says that without it
	// the item moves to the end of the structure: as here.
	"sortSiteStructure": `{"type": "object", "required": ["item"], "properties": {
		"item": {"$ref": "#/components/schemas/SiteStructureItemPointer"},
		"position": {"$ref": "#/components/schemas/SiteStructureItemMovePosition"}}}`,
	// The reference's PlainObject (unsignedClaims) has no type, so every
	// value is one: a claim that is a string, a boolean or a number
	// matches two of the forms of its oneOf, which refuses it (GitBook's
	// own client sends such claims). Its forms, as they are meant.
	"resolvePublishedContentByUrl": `{"type": "object", "required": ["url"], "properties": {
		"url": {"$ref": "#/components/schemas/URL"},
		"redirectOnError": {"type": "boolean"},
		"visitor": {"type": "object", "properties": {
			"jwtToken": {"type": "string"},
			"unsignedClaims": {"type": "object", "additionalProperties": {"anyOf": [
				{"type": "object"}, {"type": "string"}, {"type": "boolean"}, {"type": "number"},
				{"type": "array", "items": {"anyOf": [{"type": "object"}, {"type": "string"}, {"type": "boolean"}, {"type": "number"}]}}]}}}}}}`,
	// The comment is the reference's Document ({markdown}, {document} or
	// {}), or, as this server took it first, a JSON document itself
	// (schema.graphqls, SubmitChangeRequestReviewInput).
	"submitChangeRequestReview": `{"type": "object", "required": ["status"], "properties": {
		"status": {"$ref": "#/components/schemas/ChangeRequestReviewStatus"},
		"comment": {"anyOf": [{"$ref": "#/components/schemas/Document"}, {"$ref": "#/components/schemas/JSONDocument"}]}}}`,
}

// redirectDestinationForm is a site redirect's destination: the
// reference's SiteRedirectDestination, or a URL (whose length and form the
// resolver checks, naming destination.url).
const redirectDestinationForm = `{"oneOf": [{"$ref": "#/components/schemas/SiteRedirectDestination"},
	{"type": "object", "required": ["kind", "url"], "properties": {
		"kind": {"type": "string", "enum": ["url"]}, "url": {"type": "string"}}}]}`

// bodySchema is a route's compiled request body schema.
type bodySchema struct {
	schema *jsonschema.Schema
	// extensions are set aside, and checked with their schema (nil: none).
	extensions map[string]*jsonschema.Schema
	aliases    [][2]string
}

// bodySchemas are the compiled request body schemas of the routes whose
// operation takes an input, by operation: compiled once per process (the
// reference does not change), at the first New.
var bodySchemas = sync.OnceValues(func() (map[string]*bodySchema, error) {
	return compileBodySchemas(Routes)
})

// compileBodySchemas compiles, for each route whose operation has an input,
// the requestBody schema of the reference's operation of the same id. A
// route the reference does not have (createOrganization) has none.
func compileBodySchemas(routes []Route) (map[string]*bodySchema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(referenceDocument))
	if err != nil {
		return nil, fmt.Errorf("rest: the reference document: %w", err)
	}
	root, _ := doc.(map[string]any)
	paths, _ := root["paths"].(map[string]any)
	if paths == nil {
		return nil, errors.New("rest: the reference document has no paths")
	}
	// Where each operation's body schema is in the document.
	locations := map[string]string{}
	for path, item := range paths {
		methods, _ := item.(map[string]any)
		for method, op := range methods {
			op, _ := op.(map[string]any)
			id, _ := op["operationId"].(string)
			body, _ := op["requestBody"].(map[string]any)
			content, _ := body["content"].(map[string]any)
			if _, ok := content["application/json"].(map[string]any); id == "" || !ok {
				continue
			}
			locations[id] = "#/paths/" + pointerToken(path) + "/" + method + "/requestBody/content/application~1json/schema"
		}
	}
	ours := map[string]any{}
	for op, form := range bodyForms {
		if ours[op], err = jsonschema.UnmarshalJSON(strings.NewReader(form)); err != nil {
			return nil, fmt.Errorf("rest: the body form of %s: %w", op, err)
		}
		locations[op] = "#/x-docsapi-bodies/" + op
	}
	root["x-docsapi-bodies"] = ours
	members := map[string]any{}
	for op, extensions := range bodyExtensions {
		schemas := map[string]any{}
		for name, schema := range extensions {
			if schema == "" {
				continue
			}
			if schemas[name], err = jsonschema.UnmarshalJSON(strings.NewReader(schema)); err != nil {
				return nil, fmt.Errorf("rest: the schema of %s's %s: %w", op, name, err)
			}
		}
		members[op] = schemas
	}
	root["x-docsapi-members"] = members
	fromOpenAPI(root)
	discriminate(root)
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.RegisterVocabulary(discriminatorVocabulary)
	c.AssertVocabs()
	if err := c.AddResource(referenceURL, root); err != nil {
		return nil, err
	}
	out := map[string]*bodySchema{}
	for _, route := range routes {
		loc, ok := locations[route.Operation]
		if !ok {
			continue
		}
		if _, done := out[route.Operation]; done {
			continue
		}
		s, err := c.Compile(referenceURL + loc)
		if err != nil {
			return nil, fmt.Errorf("rest: the reference's body schema of %s: %w", route.Operation, err)
		}
		b := &bodySchema{schema: s, extensions: map[string]*jsonschema.Schema{}, aliases: bodyAliases[route.Operation]}
		for name, schema := range bodyExtensions[route.Operation] {
			if schema != "" {
				loc := "#/x-docsapi-members/" + route.Operation + "/" + pointerToken(name)
				if b.extensions[name], err = c.Compile(referenceURL + loc); err != nil {
					return nil, fmt.Errorf("rest: the schema of %s's %s: %w", route.Operation, name, err)
				}
			} else {
				b.extensions[name] = nil
			}
		}
		out[route.Operation] = b
	}
	return out, nil
}

// pointerToken escapes s as a JSON pointer token.
func pointerToken(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// fromOpenAPI rewrites, in place, what OpenAPI 3.0 schemas say otherwise
// than JSON Schema: `nullable: true` admits null (a type gains "null", an
// enum the value null; a schema without a type, a $ref or a combination,
// becomes anyOf it or null).
func fromOpenAPI(v any) {
	switch v := v.(type) {
	case []any:
		for _, e := range v {
			fromOpenAPI(e)
		}
	case map[string]any:
		for _, e := range v {
			fromOpenAPI(e)
		}
		if nullable, _ := v["nullable"].(bool); !nullable {
			return
		}
		delete(v, "nullable")
		if enum, ok := v["enum"].([]any); ok && !containsNil(enum) {
			v["enum"] = append(enum, nil)
		}
		switch t := v["type"].(type) {
		case string:
			v["type"] = []any{t, "null"}
		case nil:
			inner := map[string]any{}
			for k, e := range v {
				inner[k] = e
				delete(v, k)
			}
			v["anyOf"] = []any{inner, map[string]any{"type": "null"}}
		}
	}
}

// discriminate rewrites, in place, each oneOf whose branches each require
// a property with a few string values (a branch that is a oneOf, those of
// its own branches), disjoint across branches: a document's blocks, told
// apart by their type, or a site redirect's destinations, by their kind.
// Such a oneOf is the same as "the property has one
// of the values, and the value's branch holds", which is what it becomes
// (discriminatorKeyword). A validator checks every branch of a oneOf, and
// gathers every failing branch's errors: some forty per block of a
// document, which made a 1 MB document take 40 s.
func discriminate(root map[string]any) {
	components, _ := root["components"].(map[string]any)
	schemas, _ := components["schemas"].(map[string]any)
	resolve := func(v any) map[string]any {
		m, _ := v.(map[string]any)
		for i := 0; m != nil && i < 32; i++ {
			ref, ok := m["$ref"].(string)
			if !ok {
				return m
			}
			m, _ = schemas[strings.TrimPrefix(ref, "#/components/schemas/")].(map[string]any)
		}
		return m
	}
	// values are the values a branch requires of property, or nil.
	values := func(b map[string]any, property string) []any {
		parts := []map[string]any{b}
		if all, ok := b["allOf"].([]any); ok {
			for _, p := range all {
				if r := resolve(p); r != nil {
					parts = append(parts, r)
				}
			}
		}
		required := false
		var prop map[string]any
		for _, p := range parts {
			if req, ok := p["required"].([]any); ok && slices.Contains(req, any(property)) {
				required = true
			}
			if props, ok := p["properties"].(map[string]any); ok && props[property] != nil {
				prop = resolve(props[property])
			}
		}
		if !required || prop == nil {
			return nil
		}
		var out []any
		if c, ok := prop["const"].(string); ok {
			out = []any{c}
		} else if enum, ok := prop["enum"].([]any); ok {
			for _, e := range enum {
				if _, isString := e.(string); !isString {
					return nil
				}
			}
			out = enum
		}
		return out
	}
	// valuesOf are the values a branch requires of property, those of its
	// own branches for a oneOf; nil when it does not.
	var valuesOf func(b any, property string, depth int) []any
	valuesOf = func(b any, property string, depth int) []any {
		r := resolve(b)
		if r == nil || depth > 8 {
			return nil
		}
		inner, ok := r["oneOf"].([]any)
		if !ok || !onlyOneOf(r) {
			return values(r, property)
		}
		var out []any
		for _, c := range inner {
			vals := valuesOf(c, property, depth+1)
			if vals == nil {
				return nil
			}
			out = append(out, vals...)
		}
		return out
	}
	// rewrite returns what m becomes, or nil.
	rewrite := func(m map[string]any) func() {
		branches := m["oneOf"].([]any)
		if len(branches) < 2 {
			return nil
		}
	properties:
		for _, property := range []string{"type", "object", "kind"} {
			seen := map[any]bool{}
			var all []any
			cases := map[string]any{}
			for _, b := range branches {
				vals := valuesOf(b, property, 0)
				if vals == nil {
					continue properties
				}
				for _, v := range vals {
					if seen[v] {
						continue properties
					}
					seen[v] = true
					cases[v.(string)] = b
				}
				all = append(all, vals...)
			}
			dispatch := map[string]any{"type": "object", "required": []any{property},
				"properties":         map[string]any{property: map[string]any{"enum": all}},
				discriminatorKeyword: map[string]any{property: cases}}
			return func() {
				delete(m, "oneOf")
				allOf, _ := m["allOf"].([]any)
				m["allOf"] = append(allOf, dispatch)
			}
		}
		return nil
	}
	// Every rewrite is decided on the document as written, then made: a
	// oneOf's branches may be oneOfs rewritten too.
	var rewrites []func()
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case []any:
			for _, e := range v {
				walk(e)
			}
		case map[string]any:
			for _, e := range v {
				walk(e)
			}
			if _, ok := v["oneOf"].([]any); ok {
				if r := rewrite(v); r != nil {
					rewrites = append(rewrites, r)
				}
			}
		}
	}
	walk(root)
	for _, r := range rewrites {
		r()
	}
}

// onlyOneOf tells a schema that is a oneOf and nothing else (but words).
func onlyOneOf(m map[string]any) bool {
	for k := range m {
		switch k {
		case "oneOf", "description", "title", "example":
		default:
			return false
		}
	}
	return true
}

// discriminatorKeyword is the keyword discriminate writes:
// {"<property>": {"<value>": <schema>, ...}} validates an object with the
// schema of its property's value (and nothing when it has another).
const discriminatorKeyword = "x-docsapi-discriminator"

type discriminator struct {
	property string
	cases    map[string]*jsonschema.Schema
}

func (d *discriminator) Validate(ctx *jsonschema.ValidatorContext, v any) {
	obj, _ := v.(map[string]any)
	value, _ := obj[d.property].(string)
	if s := d.cases[value]; s != nil {
		if err := ctx.Validate(s, v, nil); err != nil {
			ctx.AddErr(err)
		}
	}
}

var discriminatorVocabulary = &jsonschema.Vocabulary{
	URL:        "https://docsapi.invalid/vocabulary/discriminator",
	Subschemas: []jsonschema.SchemaPath{{jsonschema.Prop(discriminatorKeyword), jsonschema.AllProp{}, jsonschema.AllProp{}}},
	Compile: func(ctx *jsonschema.CompilerContext, obj map[string]any) (jsonschema.SchemaExt, error) {
		kw, ok := obj[discriminatorKeyword].(map[string]any)
		if !ok {
			return nil, nil
		}
		for property, cases := range kw {
			d := &discriminator{property: property, cases: map[string]*jsonschema.Schema{}}
			for value := range cases.(map[string]any) {
				d.cases[value] = ctx.Enqueue([]string{discriminatorKeyword, property, value})
			}
			return d, nil
		}
		return nil, nil
	},
}

func containsNil(list []any) bool {
	for _, e := range list {
		if e == nil {
			return true
		}
	}
	return false
}

// validate checks a decoded body against the reference's schema, the
// route's extensions set aside; the error names the offending member. The
// members the input names otherwise (aliases) are then renamed, in body.
func (b *bodySchema) validate(body any) *requestError {
	obj, _ := body.(map[string]any)
	var aliased map[string]any // body with the aliases filled in, when any
	for _, a := range b.aliases {
		ref, refOK := obj[a[0]]
		in, inOK := obj[a[1]]
		switch {
		case refOK && inOK && !reflect.DeepEqual(ref, in):
			return &requestError{http.StatusBadRequest, a[1] + ": names the " + a[0] + " another way: it must be the same"}
		case inOK && !refOK:
			// Validated as the reference's member.
			if aliased == nil {
				aliased = maps.Clone(obj)
			}
			aliased[a[0]] = in
		}
	}
	view := body
	if aliased != nil {
		view = aliased
	}
	if err := b.check(view); err != nil {
		return err
	}
	for _, a := range b.aliases {
		if v, ok := obj[a[0]]; ok {
			delete(obj, a[0])
			obj[a[1]] = v
		}
	}
	return nil
}

func (b *bodySchema) check(body any) *requestError {
	if obj, ok := body.(map[string]any); ok {
		for name, schema := range b.extensions {
			if v, ok := obj[name]; ok && v != nil && schema != nil {
				if err := schema.Validate(v); err != nil {
					var ve *jsonschema.ValidationError
					if !errors.As(err, &ve) {
						return &requestError{http.StatusBadRequest, name + ": " + err.Error()}
					}
					return &requestError{http.StatusBadRequest, schemaMessage(ve, obj, name)}
				}
			}
		}
	}
	body, _ = b.pruned(body, true, false)
	err := b.schema.Validate(body)
	if err == nil {
		return nil
	}
	// Where the GraphQL input takes null, null clears a member
	// (schema.graphqls says which), an extension of every body: a member
	// set to null the reference does not take is left to the input type,
	// which judges it.
	if withoutNulls, changed := b.pruned(body, false, true); changed && b.schema.Validate(withoutNulls) == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return &requestError{http.StatusBadRequest, "body: " + err.Error()}
	}
	return &requestError{http.StatusBadRequest, schemaMessage(ve, body, "")}
}

// pruned is v without the route's extensions (at the top, when top) and,
// when nulls, without its members set to null. v is copied only where
// something is left out; changed says so.
func (b *bodySchema) pruned(v any, top, nulls bool) (out any, changed bool) {
	if !nulls && (!top || len(b.extensions) == 0) {
		return v, false
	}
	switch v := v.(type) {
	case map[string]any:
		var m map[string]any
		for k, e := range v {
			_, extension := b.extensions[k]
			drop := (nulls && e == nil) || (top && extension)
			var p any
			var c bool
			if !drop {
				p, c = b.pruned(e, false, nulls)
			}
			if !drop && !c {
				continue
			}
			if m == nil {
				m = maps.Clone(v)
			}
			if drop {
				delete(m, k)
			} else {
				m[k] = p
			}
		}
		if m != nil {
			return m, true
		}
	case []any:
		var l []any
		for i, e := range v {
			if p, c := b.pruned(e, false, nulls); c {
				if l == nil {
					l = slices.Clone(v)
				}
				l[i] = p
			}
		}
		if l != nil {
			return l, true
		}
	}
	return v, false
}

// schemaMessage is "<member>: <what is wrong>" for the most telling cause
// of a validation error: the deepest in the body (the branch of a oneOf
// that matched the most), the first of those. A member's error (member
// not "") is of body's member.
func schemaMessage(e *jsonschema.ValidationError, body any, member string) string {
	leaf := deepestCause(e)
	at := leaf.InstanceLocation
	if member != "" {
		at = append([]string{member}, at...)
	}
	switch k := leaf.ErrorKind.(type) {
	case *kind.Required:
		return memberPath(append(at[:len(at):len(at)], k.Missing[0]), body) + ": is required"
	case *kind.AdditionalProperties:
		return memberPath(append(at[:len(at):len(at)], k.Properties[0]), body) + ": is not a known member"
	}
	return memberPath(at, body) + ": " + kindMessage(leaf.ErrorKind)
}

func deepestCause(e *jsonschema.ValidationError) *jsonschema.ValidationError {
	best := e
	for _, c := range e.Causes {
		if d := deepestCause(c); len(d.InstanceLocation) > len(best.InstanceLocation) || best == e {
			best = d
		}
	}
	return best
}

var printer = message.NewPrinter(language.English)

// kindMessage says what is wrong, in the words checkBody uses.
func kindMessage(k jsonschema.ErrorKind) string {
	switch k := k.(type) {
	case *kind.Type:
		return "expected " + article(strings.Join(k.Want, " or ")) + ", got " + article(k.Got)
	case *kind.Enum:
		want := make([]string, 0, len(k.Want))
		for _, v := range k.Want {
			if len(want) == 8 {
				want = append(want, fmt.Sprintf("... (%d values)", len(k.Want)))
				break
			}
			want = append(want, strconv.Quote(fmt.Sprint(v)))
		}
		if len(want) == 1 {
			return "must be " + want[0]
		}
		return "must be one of " + strings.Join(want, ", ")
	case *kind.MinLength:
		if k.Want == 1 {
			return "must not be empty"
		}
		return fmt.Sprintf("must be at least %d characters", k.Want)
	case *kind.MaxLength:
		return fmt.Sprintf("must be at most %d characters", k.Want)
	case *kind.MinItems:
		return fmt.Sprintf("must have at least %d items", k.Want)
	case *kind.MaxItems:
		return fmt.Sprintf("must have at most %d items", k.Want)
	case *kind.MinProperties:
		return fmt.Sprintf("must have at least %d members", k.Want)
	case *kind.MaxProperties:
		return fmt.Sprintf("must have at most %d members", k.Want)
	case *kind.Pattern:
		return "must match " + k.Want
	case *kind.FalseSchema:
		return "is not allowed"
	case *kind.OneOf:
		if len(k.Subschemas) > 1 {
			return "matches more than one of the forms the reference allows (one at a time)"
		}
	}
	return k.LocalizedString(printer)
}

// article puts "a" or "an" before a JSON type's name.
func article(s string) string {
	if s == "" {
		return s
	}
	switch s[0] {
	case 'a', 'e', 'i', 'o', 'u':
		return "an " + s
	}
	return "a " + s
}

// memberPath renders an instance location as checkBody names members:
// title, nodes[0].type; "body" for the body itself.
func memberPath(loc []string, body any) string {
	var b strings.Builder
	cur := body
	for _, token := range loc {
		switch c := cur.(type) {
		case []any:
			i, _ := strconv.Atoi(token)
			fmt.Fprintf(&b, "[%d]", i)
			if i >= 0 && i < len(c) {
				cur = c[i]
			} else {
				cur = nil
			}
			continue
		case map[string]any:
			cur = c[token]
		default:
			cur = nil
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(token)
	}
	if b.Len() == 0 {
		return "body"
	}
	return b.String()
}
