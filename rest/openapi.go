package rest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/vektah/gqlparser/v2/ast"
)

// The OpenAPI document of the /v1 surface is generated from the route table
// and the operation documents, never written by hand: each route's
// parameters come from its operation's variables, its request body from the
// GraphQL input type of the `input` variable, and its response schema from
// the selection set at the route's result path. So the document cannot drift
// from what the adapter does.

// OpenAPIPath is where the document is served. It is not in Routes: it runs
// no GraphQL operation and needs no token.
const OpenAPIPath = "/v1/openapi.json"

// openAPIVersion is info.version: the version of the /v1 surface.
const openAPIVersion = "1.0.0"

// OpenAPI builds the OpenAPI 3.1 document of the REST surface. serverURL is
// the public base URL (the paths start with /v1); empty means "/".
func OpenAPI(schema *ast.Schema, serverURL string) ([]byte, error) {
	surface, err := surfaceOf(schema)
	if err != nil {
		return nil, err
	}
	doc, err := encodeOpenAPI(surface.openAPI, serverURL)
	return doc.body, err
}

// OpenAPIHandler serves the document. It needs no token: the document
// describes the API, not anyone's data (GraphQL introspection is open for
// the same reason), and tools that read it - client generators, API
// explorers - fetch it before they have a token.
func (a *API) OpenAPIHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			WriteError(w, http.StatusMethodNotAllowed, fmt.Sprintf("method %s is not allowed on %s", r.Method, r.URL.Path))
			return
		}
		doc, err := a.document()
		if err != nil {
			// Encoding maps of strings fails only on a bug.
			a.log.Error("rest: encoding the OpenAPI document", "err", err)
			WriteError(w, http.StatusInternalServerError, "the OpenAPI document could not be encoded")
			return
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Header().Set("ETag", doc.etag)
		w.Header().Set("Cache-Control", "no-cache")
		http.ServeContent(w, r, "openapi.json", time.Time{}, bytes.NewReader(doc.body))
	})
}

// openAPIDocument is the encoded document and its entity tag.
type openAPIDocument struct {
	body []byte
	etag string
}

// encodeOpenAPI writes the document (openAPI's, shared and left unchanged)
// with serverURL as its server.
func encodeOpenAPI(doc obj, serverURL string) (openAPIDocument, error) {
	server := strings.TrimRight(serverURL, "/")
	if server == "" {
		server = "/"
	}
	withServer := maps.Clone(doc)
	withServer["servers"] = []obj{{"url": server}}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(withServer); err != nil {
		return openAPIDocument{}, err
	}
	sum := sha256.Sum256(buf.Bytes())
	return openAPIDocument{body: buf.Bytes(), etag: `"` + hex.EncodeToString(sum[:16]) + `"`}, nil
}

// obj is a JSON object of the document; encoding/json writes map keys
// sorted, so the output is stable and diffs well.
type obj = map[string]any

// pathParam matches a path parameter; a trailing ... (a net/http wildcard
// taking the rest of the path) is no part of its name.
var pathParam = regexp.MustCompile(`\{([^}.]+)(?:\.\.\.)?\}`)

type openAPIGen struct {
	schema     *ast.Schema
	components obj
	// fragmentNames maps a fragment to its component's name.
	fragmentNames map[string]string
}

// openAPI builds the document of the routes, all but its servers
// (encodeOpenAPI adds them).
func openAPI(schema *ast.Schema, ops map[string]*operation, routes []Route) (obj, error) {
	g := &openAPIGen{schema: schema, components: obj{}, fragmentNames: map[string]string{}}
	g.components["Error"] = obj{
		"type":        "object",
		"description": "An error. `code` repeats the HTTP status.",
		"required":    []string{"error"},
		"properties": obj{"error": obj{
			"type":     "object",
			"required": []string{"code", "message"},
			"properties": obj{
				"code":    obj{"type": "integer", "description": "The HTTP status."},
				"message": obj{"type": "string", "description": "What went wrong, naming the body member or query parameter at fault."},
			},
		}},
	}

	paths := obj{}
	var tags []obj
	seenTag := map[string]bool{}
	for _, route := range routes {
		op, ok := ops[route.Operation]
		if !ok {
			return nil, fmt.Errorf("rest: openapi: route %s %s: no operation document %s.graphql", route.Method, route.Path, route.Operation)
		}
		operation, err := g.operation(route, op)
		if err == nil && route.Extended != "" {
			err = g.extend(operation, route, ops[route.Extended])
		}
		if err != nil {
			return nil, fmt.Errorf("rest: openapi: route %s %s: %w", route.Method, route.Path, err)
		}
		path := route.DocumentedPath()
		item, _ := paths[path].(obj)
		if item == nil {
			item = obj{}
			paths[path] = item
		}
		item[strings.ToLower(route.Method)] = operation
		if route.Tag != "" && !seenTag[route.Tag] {
			seenTag[route.Tag] = true
			tags = append(tags, obj{"name": route.Tag})
		}
	}
	paths[OpenAPIPath] = obj{"get": obj{
		"operationId": "getOpenAPIDocument",
		"summary":     "Get this OpenAPI document",
		"description": "Generated from the route table at start-up. Served without authentication: it describes the API, not anyone's data.",
		"tags":        []string{"meta"},
		"security":    []obj{},
		"responses": obj{
			"200": obj{
				"description": "The OpenAPI 3.1 document.",
				"content":     obj{"application/json": obj{"schema": obj{"type": "object"}}},
			},
		},
	}}
	tags = append(tags, obj{"name": "meta", "description": "The API's own description."})

	return obj{
		"openapi": "3.1.0",
		"info": obj{
			"title":   "docsapi",
			"version": openAPIVersion,
			"description": "The REST surface of docsapi, compatible with GitBook's /v1 API. Every operation runs " +
				"the GraphQL operation named in its `x-graphql-operation` (served at /graphql) in-process, " +
				"so both surfaces share resolvers, permission checks and errors. Optional members are " +
				"absent rather than null. This document is generated from the server's route table.",
			"license": obj{"name": "See the project's repository"},
		},
		"security": []obj{{"bearer": []string{}}},
		"tags":     tags,
		"paths":    paths,
		"components": obj{
			"securitySchemes": obj{"bearer": obj{
				"type":        "http",
				"scheme":      "bearer",
				"description": "An API token: `Authorization: Bearer <token>`.",
			}},
			"schemas":   g.components,
			"responses": errorResponses(),
		},
	}, nil
}

// errorResponses are the shared error responses, in components/responses.
func errorResponses() obj {
	resp := func(desc string) obj {
		return obj{
			"description": desc,
			"content":     obj{"application/json": obj{"schema": obj{"$ref": "#/components/schemas/Error"}}},
		}
	}
	unauthorized := resp("No bearer token, or one that matches no one.")
	unauthorized["headers"] = obj{"WWW-Authenticate": obj{
		"description": "`Bearer realm=\"docsapi\"`",
		"schema":      obj{"type": "string"},
	}}
	return obj{
		"BadRequest":   resp("A parameter or the body is not valid."),
		"Unauthorized": unauthorized,
		"Forbidden":    resp("The caller may see the resource but not do this."),
		"NotFound":     resp("No such resource, or one the caller cannot see."),
		"Error":        resp("Any other error: 405, 409, 413, 500 and so on."),
	}
}

// extend documents a route's `extended` query parameter and the answer of
// its Extended operation, which comes in place of the usual one.
func (g *openAPIGen) extend(operation obj, route Route, ext *operation) error {
	if ext == nil {
		return fmt.Errorf("no operation document %s.graphql", route.Extended)
	}
	plain := route
	plain.Extended = ""
	extOp, err := g.operation(plain, ext)
	if err != nil {
		return err
	}
	params, _ := operation["parameters"].([]obj)
	operation["parameters"] = append(params, obj{"name": "extended", "in": "query", "required": false,
		"schema":      obj{"type": "boolean", "default": false},
		"description": fmt.Sprintf("true: whole objects in place of their ids (runs the GraphQL query `%s`).", ext.Name)})
	status := fmt.Sprint(route.Status)
	content := func(o obj) obj {
		return o["responses"].(obj)[status].(obj)["content"].(obj)["application/json"].(obj)
	}
	base := content(operation)
	base["schema"] = obj{"anyOf": []any{base["schema"], content(extOp)["schema"]}}
	operation["x-graphql-operation"].(obj)["extended"] = ext.Name
	return nil
}

// operation is the OpenAPI operation object of route.
func (g *openAPIGen) operation(route Route, op *operation) (obj, error) {
	rootType := g.schema.Query
	kind := "query"
	if op.Def.Operation == ast.Mutation {
		rootType, kind = g.schema.Mutation, "mutation"
	}
	field := graphQLField(op, route.Result)

	// The field at the result path: its type and (merged) selection set.
	resultPath := strings.Split(route.Result, ".")
	if route.Result == "" {
		resultPath = []string{rootKey(op.Def)}
	}
	sel, def := op.Def.SelectionSet, rootType
	var result *collected
	for i, key := range resultPath {
		if def == nil || (def.Kind != ast.Object) {
			return nil, fmt.Errorf("result path %s: %s is not an object", route.Result, strings.Join(resultPath[:i], "."))
		}
		result = nil
		for _, c := range g.collect(sel, def) {
			if c.key == key {
				result = c
			}
		}
		if result == nil || result.def == nil {
			return nil, fmt.Errorf("result path %s: no field %s", route.Result, key)
		}
		if result.def.Type.Elem != nil && i < len(resultPath)-1 {
			return nil, fmt.Errorf("result path %s: %s is a list", route.Result, key)
		}
		sel, def = result.selections(), g.schema.Types[result.def.Type.NamedType]
	}

	desc := fmt.Sprintf("Runs the GraphQL %s `%s` (`%s`)", kind, op.Name, field)
	if d := strings.TrimSpace(result.def.Description); d != "" {
		desc += ": " + d
	} else {
		desc += "."
	}

	// Parameters: path parameters by name, every other variable but
	// `input` from the query string.
	variableSources := obj{}
	var params []obj
	inPath := map[string]bool{}
	for _, m := range pathParam.FindAllStringSubmatch(route.Path, -1) {
		name := m[1]
		inPath[name] = true
		p := obj{"name": name, "in": "path", "required": true, "schema": obj{"type": "string"}}
		if v, ok := op.Variables[name]; ok {
			p["schema"] = g.input(v.Type, false)
			variableSources[name] = "path"
		}
		if d := g.argumentDescription(op, name); d != "" {
			p["description"] = d
		}
		params = append(params, p)
	}
	for _, v := range op.Def.VariableDefinitions {
		name := v.Variable
		if name == "input" || inPath[name] {
			continue
		}
		variableSources[name] = "query"
		p := obj{
			"name":     name,
			"in":       "query",
			"required": v.Type.NonNull && v.DefaultValue == nil,
			"schema":   g.input(v.Type, false),
		}
		desc := g.argumentDescription(op, name)
		if v.Type.Elem != nil {
			p["style"], p["explode"] = "form", false
			desc = strings.TrimSpace(desc + " Comma-separated, or the parameter repeated.")
		}
		if v.DefaultValue != nil {
			if dv, err := v.DefaultValue.Value(nil); err == nil {
				p["schema"].(obj)["default"] = dv
			}
		}
		if desc != "" {
			p["description"] = desc
		}
		params = append(params, p)
	}

	o := obj{
		"operationId": route.Operation,
		"summary":     route.Summary,
		"description": desc,
		"responses":   obj{},
		"x-graphql-operation": obj{
			"name":      op.Name,
			"operation": kind,
			"field":     field,
			"result":    strings.Join(resultPath, "."),
			"variables": variableSources,
			"document":  op.Source,
		},
	}
	if route.Tag != "" {
		o["tags"] = []string{route.Tag}
	}
	if len(params) > 0 {
		o["parameters"] = params
	}
	if v, ok := op.Variables["input"]; ok {
		variableSources["input"] = "body"
		body := obj{
			"description": "The JSON object passed as the `input` variable; unknown members are rejected.",
			"content":     obj{"application/json": obj{"schema": g.input(v.Type, false)}},
		}
		if v.Type.Elem != nil { // a batch: an array, or one object for an array of one
			body["description"] = "The JSON array passed as the `input` variable, or one object for an array of one; unknown members are rejected."
			body["content"] = obj{"application/json": obj{"schema": obj{"oneOf": []any{g.input(v.Type.Elem, false), g.input(v.Type, false)}}}}
			body["required"] = true
		}
		// An empty body is {}: the body is required only when {} is not valid.
		if d := g.schema.Types[v.Type.NamedType]; d != nil && d.Kind == ast.InputObject {
			for _, f := range d.Fields {
				if f.Type.NonNull && f.DefaultValue == nil {
					body["required"] = true
				}
			}
		}
		o["requestBody"] = body
	}

	responses := o["responses"].(obj)
	status := fmt.Sprint(route.Status)
	switch route.Status {
	case http.StatusNoContent:
		responses[status] = obj{"description": "Done; no content."}
	case http.StatusResetContent:
		responses[status] = obj{"description": "Deleted; no content."}
		responses["204"] = obj{"description": "There was nothing to delete; no content."}
	default:
		// A null result is a 404, so the body is never null.
		t := *result.def.Type
		t.NonNull = true
		resp := obj{
			"description": http.StatusText(route.Status),
			"content":     obj{"application/json": obj{"schema": g.output(&t, sel, false)}},
		}
		if route.Status == http.StatusCreated && g.selects(sel, def, "urls", "location") {
			resp["headers"] = obj{"Location": obj{
				"description": "The created resource's `urls.location`.",
				"schema":      obj{"type": "string"},
			}}
		}
		responses[status] = resp
		if route.Created != "" {
			responses["201"] = obj{"description": "Created", "content": resp["content"]}
		}
	}
	if len(op.Variables) > 0 {
		responses["400"] = obj{"$ref": "#/components/responses/BadRequest"}
	}
	responses["401"] = obj{"$ref": "#/components/responses/Unauthorized"}
	responses["403"] = obj{"$ref": "#/components/responses/Forbidden"}
	responses["404"] = obj{"$ref": "#/components/responses/NotFound"}
	responses["default"] = obj{"$ref": "#/components/responses/Error"}
	return o, nil
}

// argumentDescription describes the variable name by the argument it is
// passed to: the argument's description, or where it goes.
func (g *openAPIGen) argumentDescription(op *operation, name string) string {
	var found string
	var walk func(sel ast.SelectionSet)
	walk = func(sel ast.SelectionSet) {
		for _, s := range sel {
			if found != "" {
				return
			}
			switch s := s.(type) {
			case *ast.Field:
				for _, a := range s.Arguments {
					if a.Value == nil || a.Value.Kind != ast.Variable || a.Value.Raw != name || s.Definition == nil {
						continue
					}
					if ad := s.Definition.Arguments.ForName(a.Name); ad != nil && strings.TrimSpace(ad.Description) != "" {
						found = strings.TrimSpace(ad.Description)
					} else {
						parent := ""
						if s.ObjectDefinition != nil {
							parent = s.ObjectDefinition.Name + "."
						}
						found = fmt.Sprintf("The `%s` argument of `%s%s`.", a.Name, parent, s.Name)
					}
					return
				}
				walk(s.SelectionSet)
			case *ast.InlineFragment:
				walk(s.SelectionSet)
			case *ast.FragmentSpread:
				if s.Definition != nil {
					walk(s.Definition.SelectionSet)
				}
			}
		}
	}
	walk(op.Def.SelectionSet)
	return found
}

// scalarSchemas are the scalars written inline; other scalars are components.
var scalarSchemas = map[string]obj{
	"ID":       {"type": "string"},
	"String":   {"type": "string"},
	"Boolean":  {"type": "boolean"},
	"Int":      {"type": "integer", "format": "int32"},
	"Float":    {"type": "number", "format": "double"},
	"DateTime": {"type": "string", "format": "date-time"},
}

// objectScalars are the custom scalars whose JSON is an object; any other
// custom scalar is a string. (Request bodies are checked by the same list,
// checkBody.)
var objectScalars = map[string]bool{"JSONObject": true, "Document": true,
	"SiteCustomizationSettings": true, "SiteCustomizationOverrides": true}

// named is the schema of a named type without nullability: inline for the
// built-in scalars and DateTime, a $ref to components/schemas otherwise.
// Object, interface and union types depend on a selection: see output.
func (g *openAPIGen) named(name string) obj {
	if s, ok := scalarSchemas[name]; ok {
		out := obj{}
		for k, v := range s {
			out[k] = v
		}
		return out
	}
	ref := obj{"$ref": "#/components/schemas/" + name}
	if _, done := g.components[name]; done {
		return ref
	}
	def := g.schema.Types[name]
	if def == nil {
		return obj{"type": "string"}
	}
	switch def.Kind {
	case ast.Scalar:
		t := "string"
		if objectScalars[name] {
			t = "object"
		}
		s := obj{"type": t}
		if name == "ContentSecurityPolicy" { // a string or an object
			s = obj{"oneOf": []any{obj{"type": "string"}, obj{"type": "object"}}}
		}
		g.components[name] = withDescription(s, def.Description)
	case ast.Enum:
		values := make([]string, 0, len(def.EnumValues))
		desc := strings.TrimSpace(def.Description)
		var lines []string
		for _, v := range def.EnumValues {
			values = append(values, v.Name)
			if d := strings.TrimSpace(v.Description); d != "" {
				lines = append(lines, fmt.Sprintf("- `%s`: %s", v.Name, d))
			}
		}
		if len(lines) > 0 {
			desc = strings.TrimSpace(desc + "\n\n" + strings.Join(lines, "\n"))
		}
		g.components[name] = withDescription(obj{"type": "string", "enum": values}, desc)
	case ast.InputObject:
		s := obj{"type": "object", "additionalProperties": false}
		g.components[name] = s // before the fields: input types may recurse
		props := obj{}
		var required []string
		for _, f := range def.Fields {
			p := g.input(f.Type, !f.Type.NonNull)
			if f.DefaultValue != nil {
				if dv, err := f.DefaultValue.Value(nil); err == nil {
					p["default"] = dv
				}
			}
			props[f.Name] = withDescription(p, f.Description)
			if f.Type.NonNull && f.DefaultValue == nil {
				required = append(required, f.Name)
			}
		}
		s["properties"] = props
		if len(required) > 0 {
			s["required"] = required
		}
		withDescription(s, def.Description)
	default:
		return obj{"type": "object"}
	}
	return ref
}

// input is the schema of a value of input type t. nullable says whether
// null is accepted (a nullable member of an input object; query parameters
// are absent rather than null).
func (g *openAPIGen) input(t *ast.Type, nullable bool) obj {
	var s obj
	if t.Elem != nil {
		s = obj{"type": "array", "items": g.input(t.Elem, !t.Elem.NonNull)}
	} else {
		s = g.named(t.NamedType)
	}
	if nullable {
		s = orNull(s)
	}
	return s
}

// output is the schema of a value of output type t selected with sel.
// nullable says whether a null is written: a null object member is dropped
// (so the member is optional, see required in selection) unless keepNull
// names it, but a null list item stays.
func (g *openAPIGen) output(t *ast.Type, sel ast.SelectionSet, nullable bool) obj {
	var s obj
	if t.Elem != nil {
		s = obj{"type": "array", "items": g.output(t.Elem, sel, !t.Elem.NonNull)}
	} else {
		def := g.schema.Types[t.NamedType]
		switch {
		case def == nil:
			s = obj{}
		case def.Kind == ast.Object:
			s = g.selection(sel, def)
		case def.Kind == ast.Union || def.Kind == ast.Interface:
			var branches []any
			for _, pt := range g.schema.GetPossibleTypes(def) {
				if len(g.collect(sel, pt)) == 0 {
					continue // not selected: the operation cannot return it with any member
				}
				branches = append(branches, g.selection(sel, pt))
			}
			switch len(branches) {
			case 0:
				s = obj{"type": "object"}
			case 1:
				s = branches[0].(obj)
			default:
				s = obj{"oneOf": branches}
			}
		default:
			s = g.named(t.NamedType)
		}
	}
	if nullable {
		s = orNull(s)
	}
	return s
}

// selection is the schema of an object of type def selected with sel. A
// selection that is just a fragment spread on def is a $ref to the
// fragment's component, so SpaceRest is described once.
func (g *openAPIGen) selection(sel ast.SelectionSet, def *ast.Definition) obj {
	applicable := g.applicable(sel, def)
	if len(applicable) == 1 {
		if fs, ok := applicable[0].(*ast.FragmentSpread); ok && fs.Definition != nil && fs.Definition.TypeCondition == def.Name {
			return g.fragment(fs.Definition, def)
		}
	}
	props := obj{}
	var required []string
	for _, c := range g.collect(sel, def) {
		if c.def == nil { // __typename
			props[c.key] = obj{"type": "string", "description": "The GraphQL type name."}
			required = append(required, c.key)
			continue
		}
		kept := !c.def.Type.NonNull && slices.ContainsFunc(keepNull, func(k []byte) bool { return string(k) == `"`+c.key+`"` })
		p := g.output(c.def.Type, c.selections(), kept)
		p = withDescription(p, c.def.Description)
		if d := c.def.Directives.ForName("deprecated"); d != nil {
			p["deprecated"] = true
		}
		props[c.key] = p
		if c.def.Type.NonNull || kept {
			required = append(required, c.key)
		}
	}
	s := obj{"type": "object", "properties": props}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

// fragment is a $ref to the component of fragment f on def, built on first use.
func (g *openAPIGen) fragment(f *ast.FragmentDefinition, def *ast.Definition) obj {
	name, ok := g.fragmentNames[f.Name]
	if !ok {
		// SpaceRest describes a Space: name the component Space, unless
		// that name is taken by a GraphQL input, enum or scalar type, or
		// another fragment's component.
		name = strings.TrimSuffix(f.Name, "Rest")
		taken := name == "" || name == "Error"
		if t := g.schema.Types[name]; t != nil && t.Kind != ast.Object {
			taken = true
		}
		for _, other := range g.fragmentNames {
			taken = taken || other == name
		}
		if taken {
			name = f.Name
		}
		g.fragmentNames[f.Name] = name
		s := g.selection(f.SelectionSet, def)
		if desc := strings.TrimSpace(def.Description); desc != "" {
			s = withDescription(s, desc)
		}
		g.components[name] = s
	}
	return obj{"$ref": "#/components/schemas/" + name}
}

// selects reports whether sel on def selects the field path keys.
func (g *openAPIGen) selects(sel ast.SelectionSet, def *ast.Definition, keys ...string) bool {
	for _, key := range keys {
		if def == nil || def.Kind != ast.Object {
			return false
		}
		var next *collected
		for _, c := range g.collect(sel, def) {
			if c.key == key && c.def != nil {
				next = c
			}
		}
		if next == nil {
			return false
		}
		sel, def = next.selections(), g.schema.Types[next.def.Type.NamedType]
	}
	return true
}

// collected is one response member: the fields selected under one key
// (GraphQL merges their selection sets).
type collected struct {
	key    string
	def    *ast.FieldDefinition // nil for __typename
	fields []*ast.Field
}

func (c *collected) selections() ast.SelectionSet {
	var sel ast.SelectionSet
	for _, f := range c.fields {
		sel = append(sel, f.SelectionSet...)
	}
	return sel
}

// applicable flattens the inline fragments of sel that apply to the object
// type def, keeping fields and fragment spreads that apply.
func (g *openAPIGen) applicable(sel ast.SelectionSet, def *ast.Definition) ast.SelectionSet {
	var out ast.SelectionSet
	for _, s := range sel {
		switch s := s.(type) {
		case *ast.Field:
			out = append(out, s)
		case *ast.InlineFragment:
			if g.applies(s.TypeCondition, def) {
				out = append(out, g.applicable(s.SelectionSet, def)...)
			}
		case *ast.FragmentSpread:
			if s.Definition != nil && g.applies(s.Definition.TypeCondition, def) {
				out = append(out, s)
			}
		}
	}
	return out
}

// collect lists the response members of sel on the object type def, in
// selection order, as GraphQL's CollectFields does.
func (g *openAPIGen) collect(sel ast.SelectionSet, def *ast.Definition) []*collected {
	var out []*collected
	byKey := map[string]*collected{}
	var walk func(sel ast.SelectionSet)
	walk = func(sel ast.SelectionSet) {
		for _, s := range g.applicable(sel, def) {
			switch s := s.(type) {
			case *ast.Field:
				key := s.Alias
				if key == "" {
					key = s.Name
				}
				c := byKey[key]
				if c == nil {
					c = &collected{key: key}
					if s.Name != "__typename" {
						c.def = def.Fields.ForName(s.Name)
						if c.def == nil {
							continue
						}
					}
					byKey[key] = c
					out = append(out, c)
				}
				c.fields = append(c.fields, s)
			case *ast.FragmentSpread:
				walk(s.Definition.SelectionSet)
			}
		}
	}
	walk(sel)
	return out
}

// applies reports whether a fragment on typeCondition applies to the object type def.
func (g *openAPIGen) applies(typeCondition string, def *ast.Definition) bool {
	if typeCondition == "" || typeCondition == def.Name {
		return true
	}
	cond := g.schema.Types[typeCondition]
	if cond == nil {
		return false
	}
	return slices.ContainsFunc(g.schema.GetPossibleTypes(cond), func(d *ast.Definition) bool { return d.Name == def.Name })
}

// orNull makes s accept null too.
func orNull(s obj) obj {
	if t, ok := s["type"].(string); ok && s["$ref"] == nil && s["oneOf"] == nil && s["anyOf"] == nil {
		out := obj{}
		for k, v := range s {
			out[k] = v
		}
		out["type"] = []string{t, "null"}
		if enum, ok := s["enum"].([]string); ok {
			values := make([]any, 0, len(enum)+1)
			for _, e := range enum {
				values = append(values, e)
			}
			out["enum"] = append(values, nil)
		}
		return out
	}
	return obj{"anyOf": []any{s, obj{"type": "null"}}}
}

// withDescription sets s's description when desc is not empty.
func withDescription(s obj, desc string) obj {
	if desc = strings.TrimSpace(desc); desc != "" {
		s["description"] = desc
	}
	return s
}
