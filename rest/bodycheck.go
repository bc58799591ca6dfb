package rest

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/docsapi/docsapi/graph/model"
)

// checkBody checks the JSON types of a request body against the GraphQL
// input type it becomes, before execution. GraphQL's input coercion is
// lenient where a REST client deserves a 400 (a single value where a list is
// expected becomes a list of one, a number where a string is expected passes
// as a json.Number), and its messages name GraphQL variables, not body members.
func checkBody(schema *ast.Schema, t *ast.Type, v any, path string) error {
	if v == nil {
		if t.NonNull {
			return fieldError(path, "is required and cannot be null")
		}
		return nil
	}
	if t.Elem != nil {
		list, ok := v.([]any)
		if !ok {
			return fieldError(path, "expected an array, got %s", model.JSONType(v))
		}
		for i, e := range list {
			if err := checkBody(schema, t.Elem, e, path+"["+strconv.Itoa(i)+"]"); err != nil {
				return err
			}
		}
		return nil
	}
	def := schema.Types[t.NamedType]
	if def == nil {
		return nil
	}
	switch def.Kind {
	case ast.InputObject:
		obj, ok := v.(map[string]any)
		if !ok {
			return fieldError(path, "expected an object, got %s", model.JSONType(v))
		}
		// In the order of the names: a body with several faults is
		// answered the same each time.
		for _, name := range slices.Sorted(maps.Keys(obj)) {
			value := obj[name]
			field := def.Fields.ForName(name)
			if field == nil {
				return fieldError(join(path, name), "is not a known field")
			}
			if err := checkBody(schema, field.Type, value, join(path, name)); err != nil {
				return err
			}
		}
		for _, field := range def.Fields {
			if _, present := obj[field.Name]; !present && field.Type.NonNull && field.DefaultValue == nil {
				return fieldError(join(path, field.Name), "is required")
			}
		}
	case ast.Enum:
		if _, ok := v.(string); !ok {
			return fieldError(path, "expected a string, got %s", model.JSONType(v))
		}
	case ast.Scalar:
		if t.NamedType == "ContentSecurityPolicy" { // a string or an object
			if s := model.JSONType(v); s != "a string" && s != "an object" {
				return fieldError(path, "expected a string or an object, got %s", s)
			}
			return nil
		}
		want := map[string]string{"Int": "a number", "Float": "a number", "Boolean": "a boolean"}[t.NamedType]
		if objectScalars[t.NamedType] {
			want = "an object"
		}
		if want == "" {
			want = "a string"
		}
		if t.NamedType == "ID" && model.JSONType(v) == "a number" {
			want = "a number"
		}
		if got := model.JSONType(v); got != want {
			return fieldError(path, "expected %s, got %s", want[2:], got)
		}
	}
	return nil
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

func fieldError(path, format string, args ...any) error {
	if path == "" {
		return fmt.Errorf("body: "+format, args...)
	}
	return fmt.Errorf("%s: "+format, append([]any{path}, args...)...)
}

// restMessage is the message of a GraphQL error as a REST client should read
// it: errors about variables name the body member or query parameter (the
// variable path "variable.input.title" becomes "title").
func restMessage(e *gqlerror.Error) string {
	if len(e.Path) < 2 || e.Path[0] != ast.PathName("variable") {
		return e.Message
	}
	path := e.Path[1:]
	if path[0] == ast.PathName("input") {
		path = path[1:]
	}
	return fieldPath(path) + ": " + e.Message
}

// fieldPath renders the path of a member of a body (title,
// nodes[0].type); "body" for the body itself.
func fieldPath(path ast.Path) string {
	var b strings.Builder
	for _, p := range path {
		switch p := p.(type) {
		case ast.PathName:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(string(p))
		case ast.PathIndex:
			fmt.Fprintf(&b, "[%d]", int(p))
		}
	}
	if b.Len() == 0 {
		return "body"
	}
	return b.String()
}
