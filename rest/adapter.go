package rest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/docsapi/docsapi/graph"
	"github.com/docsapi/docsapi/graph/engine"
)

// API is the /v1 surface: the route table, each route run as its GraphQL
// operation through the engine, and the OpenAPI document of them all.
type API struct {
	adapter
	// document is the OpenAPI document with this server's address,
	// encoded at its first request.
	document func() (openAPIDocument, error)
}

// New builds the REST adapter over the engine. What it derives from the
// engine's schema (the validated operation documents, the OpenAPI document)
// is built at the first New of the process (surfaceOf), so a document that
// drifted from the schema stops the server at start-up; publicURL is the
// OpenAPI document's server address. lock serializes conditional writes of
// one resource (conditional.go; nil: none).
func New(eng *engine.Engine, publicURL string, log *slog.Logger, lock Lock) (*API, error) {
	surface, err := surfaceOf(eng.Schema)
	if err != nil {
		return nil, err
	}
	bodies, err := bodySchemas()
	if err != nil {
		return nil, err
	}
	return &API{
		adapter:  adapter{engine: eng, schema: eng.Schema, ops: surface.ops, bodies: bodies, log: log, lock: lock},
		document: sync.OnceValues(func() (openAPIDocument, error) { return encodeOpenAPI(surface.openAPI, publicURL) }),
	}, nil
}

// surface is what the REST adapter derives from a GraphQL schema alone: the
// operation documents, validated against it, and the OpenAPI document but
// for its server address. It is read-only once built.
type surface struct {
	ops     map[string]*operation
	openAPI obj
}

// surfaces holds, by schema, the function that builds its surface once. A
// process has one schema (graph's generated one) and may start many servers
// over it: the tests start hundreds, and deriving the surface is most of
// what starting a server costs.
var surfaces sync.Map // *ast.Schema → func() (*surface, error)

// surfaceOf returns the schema's surface, built at its first call.
func surfaceOf(schema *ast.Schema) (*surface, error) {
	build, _ := surfaces.LoadOrStore(schema, sync.OnceValues(func() (*surface, error) {
		ops, err := loadOperations(schema)
		if err != nil {
			return nil, err
		}
		for _, route := range Routes {
			if _, ok := ops[route.Operation]; !ok {
				return nil, fmt.Errorf("rest: route %s %s: no operation document %s.graphql", route.Method, route.Path, route.Operation)
			}
		}
		doc, err := openAPI(schema, ops, Routes)
		if err != nil {
			return nil, err
		}
		return &surface{ops: ops, openAPI: doc}, nil
	}))
	return build.(func() (*surface, error))()
}

// adapter runs REST routes as GraphQL operations.
type adapter struct {
	engine *engine.Engine
	schema *ast.Schema
	ops    map[string]*operation
	// bodies are the reference's request body schemas, by operation.
	bodies map[string]*bodySchema
	log    *slog.Logger
	lock   Lock
}

// handler is the one handler behind every route.
func (a *adapter) handler(route Route) http.Handler {
	op := a.ops[route.Operation]
	// read is the GET of the same path, the current state a write's
	// If-Match is compared with (conditional.go).
	read, hasRead := a.readOf(route)
	body := a.bodies[route.Operation]
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		op := op
		if values, ok := r.URL.Query()["extended"]; ok && route.Extended != "" {
			// Read as every other query parameter is (fromQuery).
			ext, err := fromQuery(values, &ast.Type{NamedType: "Boolean"})
			if err != nil {
				WriteError(w, http.StatusBadRequest, fmt.Sprintf("query parameter extended: %v", err))
				return
			}
			if ext == true {
				op = a.ops[route.Extended]
			}
		}
		vars, err := variables(r, a.schema, op, body)
		if err != nil {
			WriteError(w, err.status, err.message)
			return
		}
		if route.Method == http.MethodGet {
			a.answer(r.Context(), route, op, vars).writeRead(w, r)
			return
		}
		if ifMatch := r.Header.Get("If-Match"); ifMatch != "" && isWrite(route.Method) {
			a.conditionalWrite(w, r, route, op, vars, ifMatch, read, hasRead)
			return
		}
		a.answer(r.Context(), route, op, vars).write(w)
	})
}

// answer is what running a route's operation came to: an error to write
// (status and message), or the success status and body (nil for none).
type answer struct {
	status     int
	body       []byte
	isError    bool
	errMessage string
	// location is the Location of a created resource.
	location string
}

func errorAnswer(status int, message string) answer {
	return answer{status: status, isError: true, errMessage: message}
}

func (ans answer) failed() bool { return ans.isError }

// write writes ans.
func (ans answer) write(w http.ResponseWriter) {
	switch {
	case ans.failed():
		if ans.status == http.StatusServiceUnavailable {
			w.Header().Set("Retry-After", strconv.Itoa(graph.RetryAfterSeconds))
		}
		WriteError(w, ans.status, ans.errMessage)
	case ans.body == nil:
		w.WriteHeader(ans.status)
	default:
		if ans.location != "" {
			w.Header().Set("Location", ans.location)
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.WriteHeader(ans.status)
		_, _ = w.Write(append(ans.body, '\n'))
	}
}

// answer runs op with vars as route's operation.
func (a *adapter) answer(ctx context.Context, route Route, op *operation, vars map[string]any) answer {
	resultPath := strings.Split(route.Result, ".")
	if route.Result == "" {
		resultPath = []string{rootKey(op.Def)}
	}
	resp := a.run(ctx, op, vars)
	if len(resp.Errors) > 0 {
		e := resp.Errors[0]
		status := graph.ErrorStatus(e)
		if code, _ := e.Extensions["code"].(string); status >= 500 && code != graph.ErrTimeout.Code && code != graph.ErrUnavailable.Code {
			return errorAnswer(status, "internal error")
		}
		return errorAnswer(status, restMessage(e))
	}
	body, err := restBody(resp.Data, resultPath)
	if route.Status == http.StatusNoContent || route.Status == http.StatusResetContent {
		// 205 says "deleted" where the reference tells it from "there was
		// nothing to delete" (204); the mutation answers true or false.
		status := route.Status
		if status == http.StatusResetContent && string(body) != "true" {
			status = http.StatusNoContent
		}
		return answer{status: status}
	}
	if err != nil {
		a.log.ErrorContext(ctx, "rest: cannot extract result", "operation", op.Name, "err", err)
		return errorAnswer(http.StatusInternalServerError, "internal error")
	}
	if body == nil {
		// A null resource (a site's adaptive schema before one is set) is
		// one that does not exist.
		return errorAnswer(http.StatusNotFound, "not found")
	}
	status := route.Status
	if route.Created != "" {
		if created, _ := restBody(resp.Data, strings.Split(route.Created, ".")); string(created) == "true" {
			status = http.StatusCreated
		}
	}
	ans := answer{status: status, body: body}
	if status == http.StatusCreated {
		ans.location = locationOf(body)
	}
	return ans
}

// run executes op in-process against the shared executor: no HTTP hop, and
// the parsed document comes from the executor's cache.
func (a *adapter) run(ctx context.Context, op *operation, vars map[string]any) *graphql.Response {
	return a.engine.RunServerDocument(ctx, op.Source, op.Name, vars)
}

type requestError struct {
	status  int
	message string
}

// variables turns path parameters, query parameters and the JSON body into
// the operation's variables, converting strings by the declared type (the
// executor would reject "5" for an Int). The body must satisfy the
// reference's schema of it (body, nil for a route the reference does not
// have) and the GraphQL input type.
func variables(r *http.Request, schema *ast.Schema, op *operation, body *bodySchema) (map[string]any, *requestError) {
	vars := make(map[string]any, len(op.Variables))
	query := r.URL.Query()
	for name, def := range op.Variables {
		if name == "input" {
			continue
		}
		if v := r.PathValue(name); v != "" {
			vars[name] = v
			continue
		}
		values, ok := query[name]
		if !ok {
			continue
		}
		v, err := fromQuery(values, def.Type)
		if err != nil {
			return nil, &requestError{http.StatusBadRequest, fmt.Sprintf("query parameter %s: %v", name, err)}
		}
		vars[name] = v
	}
	if def, ok := op.Variables["input"]; ok {
		var input any
		var err *requestError
		if def.Type.Elem != nil {
			input, err = decodeListBody(r, body)
		} else if input, err = decodeBody(r); err == nil {
			if err = refusedField(op.Name, input); err == nil && body != nil {
				err = body.validate(input)
			}
		}
		if err != nil {
			return nil, err
		}
		if err := checkBody(schema, def.Type, input, ""); err != nil {
			return nil, &requestError{http.StatusBadRequest, err.Error()}
		}
		vars["input"] = input
	}
	return vars, nil
}

// decodeListBody reads the body of an operation whose input is a list (a
// batch, such as ingested conversations): a JSON array, or one object that
// stands for an array of one. The body as sent must satisfy schema (when
// not nil).
func decodeListBody(r *http.Request, schema *bodySchema) (any, *requestError) {
	raw, rerr := readBody(r)
	if rerr != nil {
		return nil, rerr
	}
	body, rerr := decodeJSON(raw)
	if rerr != nil {
		return nil, rerr
	}
	if schema != nil {
		if rerr := schema.validate(body); rerr != nil {
			return nil, rerr
		}
	}
	switch b := body.(type) {
	case []any:
		return b, nil
	case map[string]any:
		return []any{b}, nil
	}
	return nil, &requestError{http.StatusBadRequest, "request body must be a JSON object or an array of objects"}
}

// readBody reads the request body within its size limit.
func readBody(r *http.Request) ([]byte, *requestError) {
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return nil, &requestError{http.StatusRequestEntityTooLarge,
				fmt.Sprintf("request body exceeds %d bytes", tooLarge.Limit)}
		}
		return nil, &requestError{http.StatusBadRequest, "cannot read the request body"}
	}
	return raw, nil
}

// decodeJSON decodes one JSON value, numbers as json.Number. Bytes that are
// not UTF-8 are refused first: encoding/json would replace them with U+FFFD,
// and the server would store what the client did not send. (A NUL, which
// JSON can only escape, is refused with the variables it ends up in:
// engine.TextProblem.)
func decodeJSON(raw []byte) (any, *requestError) {
	if !utf8.Valid(raw) {
		return nil, &requestError{http.StatusBadRequest, "request body is not valid UTF-8"}
	}
	var body any
	if err := engine.DecodeJSON(raw, &body); err != nil {
		return nil, &requestError{http.StatusBadRequest, "request body is not valid JSON: " + err.Error()}
	}
	budget := maxBodyValues
	if at, err := bodyShape(body, &budget); err != nil {
		return nil, &requestError{err.status, strings.Replace(err.message, "%s", fieldPath(at), 1)}
	}
	return body, nil
}

// What a request body may hold: validating it costs as much as it holds,
// and an invalid body costs most (an error for each bad item).
const (
	// maxBodyValues bounds the values (objects, arrays, members' values,
	// items): a megabyte of real content (a document's blocks, their text
	// and marks) holds some 60,000; a megabyte of "1," 500,000.
	maxBodyValues = 100_000
	// maxBodyItems bounds an array (the reference's maxItems, when it has
	// one, is lower).
	maxBodyItems = 10_000
)

// bodyShape finds what passes the bounds of a body: budget is how many
// values may follow. The error's message has %s where the member's path
// (returned) goes.
func bodyShape(v any, budget *int) (ast.Path, *requestError) {
	if *budget--; *budget < 0 {
		return nil, &requestError{http.StatusRequestEntityTooLarge, fmt.Sprintf("request body holds more than %d JSON values", maxBodyValues)}
	}
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if at, err := bodyShape(e, budget); err != nil {
				return append(ast.Path{ast.PathName(k)}, at...), err
			}
		}
	case []any:
		if len(v) > maxBodyItems {
			return nil, &requestError{http.StatusBadRequest, fmt.Sprintf("%%s: must have at most %d items", maxBodyItems)}
		}
		for i, e := range v {
			if at, err := bodyShape(e, budget); err != nil {
				return append(ast.Path{ast.PathIndex(i)}, at...), err
			}
		}
	}
	return nil, nil
}

// decodeBody reads a JSON object. Numbers stay json.Number so the executor
// can coerce them to Int or Float as declared; an empty body is {}.
func decodeBody(r *http.Request) (map[string]any, *requestError) {
	raw, rerr := readBody(r)
	if rerr != nil {
		return nil, rerr
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		return map[string]any{}, nil
	}
	body, rerr := decodeJSON(raw)
	if rerr != nil {
		return nil, rerr
	}
	obj, ok := body.(map[string]any)
	if !ok {
		return nil, &requestError{http.StatusBadRequest, "request body must be a JSON object"}
	}
	return obj, nil
}

// fromQuery converts query string values to the variable's declared type.
func fromQuery(values []string, t *ast.Type) (any, error) {
	if t.Elem != nil {
		var out []any
		for _, v := range values {
			for _, part := range strings.Split(v, ",") {
				if part == "" {
					continue
				}
				x, err := scalarFromString(part, t.Elem.NamedType)
				if err != nil {
					return nil, err
				}
				out = append(out, x)
			}
		}
		return out, nil
	}
	return scalarFromString(values[len(values)-1], t.NamedType)
}

func scalarFromString(s, typeName string) (any, error) {
	switch typeName {
	case "Int":
		n, err := strconv.ParseInt(s, 10, 32)
		if err != nil {
			return nil, fmt.Errorf("%q is not an integer", s)
		}
		return int(n), nil
	case "Float":
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a number", s)
		}
		return f, nil
	case "Boolean":
		b, err := strconv.ParseBool(s)
		if err != nil {
			return nil, fmt.Errorf("%q is not true or false", s)
		}
		return b, nil
	}
	return s, nil
}

// rootKey is the response key of the operation's first root field.
func rootKey(def *ast.OperationDefinition) string {
	f := def.SelectionSet[0].(*ast.Field)
	return f.Alias
}

// locationOf is the urls.location of a created resource, for the Location header.
func locationOf(body []byte) string {
	start, end, err := valueAt(body, []string{"urls", "location"})
	if err != nil {
		return ""
	}
	var loc string
	if json.Unmarshal(body[start:end], &loc) != nil {
		return ""
	}
	return loc
}

// Documents are the sources of the route table's operation documents, for
// a registry of trusted documents: GraphQL clients may run them by id too.
func (a *API) Documents() []string {
	out := make([]string, 0, len(a.ops))
	for _, op := range a.ops {
		out = append(out, op.Source)
	}
	sort.Strings(out)
	return out
}
