package engine

import (
	"context"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// Text PostgreSQL cannot store: a NUL byte (no text value may hold one), and
// bytes that are not UTF-8 (the database's encoding). Either, reaching a
// statement, fails it, and the request with a 500; so they are refused once,
// where every operation passes before anything runs: textCheck, the first
// operation parameter mutator, sees the variables and query of every
// operation, POSTed, sent by GET or multipart, over the websocket, and of
// the REST adapter, whose path and query parameters and body are its
// variables. The transports check the raw bytes of what they decode as
// JSON before decoding it (transport.go, websocket.go; rest's decodeJSON):
// encoding/json would replace invalid UTF-8 with U+FFFD, storing something
// other than what the client sent.

// TextProblem says what is wrong with s as text to store: "" when nothing.
func TextProblem(s string) string {
	if strings.IndexByte(s, 0) >= 0 {
		return "contains a NUL byte"
	}
	if !utf8.ValidString(s) {
		return "is not valid UTF-8"
	}
	return ""
}

// BadText finds the first string or object member name in v (a decoded JSON
// value, or variables with uploads) that TextProblem refuses: its path
// below path, and the problem; "" when there is none.
func BadText(v any, path ast.Path) (ast.Path, string) {
	switch v := v.(type) {
	case string:
		if p := TextProblem(v); p != "" {
			return path, p
		}
	case map[string]any:
		for k, e := range v {
			// A member's name can be stored too (a JSON object's keys).
			if p := TextProblem(k); p != "" {
				return append(path, ast.PathName(k)), "has a member name that " + p
			}
			if at, p := BadText(e, append(path, ast.PathName(k))); p != "" {
				return at, p
			}
		}
	case []any:
		for i, e := range v {
			if at, p := BadText(e, append(path, ast.PathIndex(i))); p != "" {
				return at, p
			}
		}
	case graphql.Upload:
		return uploadText(v, path)
	case *graphql.Upload:
		if v != nil {
			return uploadText(*v, path)
		}
	}
	return nil, ""
}

// uploadText checks what a multipart upload brings as text: its file name
// and media type (the file itself is bytes).
func uploadText(u graphql.Upload, path ast.Path) (ast.Path, string) {
	if p := TextProblem(u.Filename); p != "" {
		return path, "has a file name that " + p
	}
	if p := TextProblem(u.ContentType); p != "" {
		return path, "has a Content-Type that " + p
	}
	return nil, ""
}

// badRequest is the error of a request refused before it runs: the engine's
// error shape, BAD_REQUEST, 400 (which the HTTP transports answer with).
func badRequest(message string, path ast.Path, locs ...gqlerror.Location) *gqlerror.Error {
	return &gqlerror.Error{Message: message, Path: path, Locations: locs,
		Extensions: map[string]any{"code": "BAD_REQUEST", "status": http.StatusBadRequest}}
}

// IsBadRequest tells the errors of a request refused before it ran
// (badRequest), which the HTTP transports answer with 400.
func IsBadRequest(errs gqlerror.List) bool {
	for _, e := range errs {
		if code, _ := e.Extensions["code"].(string); code == "BAD_REQUEST" {
			return true
		}
	}
	return false
}

// textCheck refuses operations whose variables, query or operation name hold
// text PostgreSQL cannot store, with 400 BAD_REQUEST: a variable's error has
// the variable's path (["variable", "input", "title"], which the REST
// adapter turns into "title"), as gqlgen's own variable errors do.
type textCheck struct {
	// parsed is gqlgen's cache of parsed documents: a query in it passed
	// this check when it was first sent.
	parsed graphql.Cache[*ast.QueryDocument]
}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationParameterMutator
	graphql.OperationContextMutator
} = textCheck{}

func (textCheck) ExtensionName() string                   { return "TextCheck" }
func (textCheck) Validate(graphql.ExecutableSchema) error { return nil }

func (c textCheck) MutateOperationParameters(ctx context.Context, p *graphql.RawParams) *gqlerror.Error {
	for name, v := range p.Variables {
		if at, problem := BadText(v, ast.Path{ast.PathName("variable"), ast.PathName(name)}); problem != "" {
			return badRequest(problem, at)
		}
	}
	if p := TextProblem(p.OperationName); p != "" {
		return badRequest("the operation name "+p, nil)
	}
	// The REST adapter's documents are the server's own; a client's query
	// already parsed passed this check.
	if serverDocument(ctx) || p.Query == "" {
		return nil
	}
	if c.parsed != nil {
		if _, ok := c.parsed.Get(ctx, p.Query); ok {
			return nil
		}
	}
	if problem := TextProblem(p.Query); problem != "" {
		return badRequest("the query "+problem, nil)
	}
	return nil
}

// MutateOperationContext checks the strings written in the query, once
// parsed: an escape ("\u0000") makes a NUL the query's text does not hold.
func (textCheck) MutateOperationContext(ctx context.Context, op *graphql.OperationContext) *gqlerror.Error {
	if serverDocument(ctx) || op.Doc == nil {
		return nil
	}
	var bad *ast.Value
	var problem string
	var value func(v *ast.Value)
	value = func(v *ast.Value) {
		if v == nil || bad != nil {
			return
		}
		if v.Kind == ast.StringValue || v.Kind == ast.BlockValue || v.Kind == ast.EnumValue {
			if p := TextProblem(v.Raw); p != "" {
				bad, problem = v, p
			}
		}
		for _, c := range v.Children {
			value(c.Value)
		}
	}
	directives := func(ds ast.DirectiveList) {
		for _, d := range ds {
			for _, a := range d.Arguments {
				value(a.Value)
			}
		}
	}
	var selections func(set ast.SelectionSet)
	selections = func(set ast.SelectionSet) {
		for _, sel := range set {
			switch s := sel.(type) {
			case *ast.Field:
				for _, a := range s.Arguments {
					value(a.Value)
				}
				directives(s.Directives)
				selections(s.SelectionSet)
			case *ast.InlineFragment:
				directives(s.Directives)
				selections(s.SelectionSet)
			case *ast.FragmentSpread:
				directives(s.Directives)
			}
		}
	}
	for _, o := range op.Doc.Operations {
		for _, v := range o.VariableDefinitions {
			value(v.DefaultValue)
		}
		directives(o.Directives)
		selections(o.SelectionSet)
	}
	for _, f := range op.Doc.Fragments {
		directives(f.Directives)
		selections(f.SelectionSet)
	}
	if bad == nil {
		return nil
	}
	var locs []gqlerror.Location
	if bad.Position != nil {
		locs = []gqlerror.Location{{Line: bad.Position.Line, Column: bad.Position.Column}}
	}
	return badRequest("a string of the query "+problem, nil, locs...)
}
