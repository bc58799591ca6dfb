package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// The HTTP transports of /graphql (POST, GET, multipart uploads) answer as
// the GraphQL over HTTP specification says, which graphql-http's audit
// checks (wholeserver, TestGraphQLOverHTTPAudit): in the media type the
// client accepts (responseMediaType), every error with extensions.code and .status, and
// these statuses (answerStatus):
//
//   - a request that is not a well-formed GraphQL-over-HTTP request (a body
//     that is not a JSON object of the right members, no query): 400, in
//     either media type;
//   - a GraphQL request error, raised before execution (parsing, validation,
//     variables, the limits, an unknown persisted query): 200 for
//     application/json, 400 for application/graphql-response+json, and no
//     data entry in either;
//   - an executed operation: 200 with its data and field errors;
//   - a request not permitted (UNAUTHENTICATED: a bad token, or no token for
//     an operation that needs one) and failures of the server's (503,
//     429...): the error's own status, in either media type, with no data
//     entry. For application/graphql-response+json the spec asks for 401;
//     for application/json it asks for 200 for well-formed requests, but a
//     401 is what HTTP clients, proxies and the REST surface agree on, and
//     JSON clients read the body whatever the status (Apollo Client's
//     ServerError carries it, urql and graphql-request parse it), so both
//     media types get 401 and bad and missing tokens answer alike.

const (
	mediaJSON            = "application/json"
	mediaGraphQLResponse = "application/graphql-response+json"
)

// BearerChallenge is the WWW-Authenticate of a 401.
const BearerChallenge = `Bearer realm="docsapi"`

// codeTooLarge is the code of a request body past the server's bound.
const codeTooLarge = "PAYLOAD_TOO_LARGE"

// codeUnauthenticated is the code of a request that carries no valid
// credential (graph.ErrUnauthenticated).
const codeUnauthenticated = "UNAUTHENTICATED"

// postTransport serves GraphQL requests POSTed as JSON. It writes the
// response without re-encoding its data: gqlgen's transport encodes the
// response with json.Marshal, and json.Marshal validates and compacts a
// json.RawMessage byte by byte: for the data of a site's whole tree (some
// 200 KB) that is a second pass over everything the executor has just
// written, about a sixth of the request's CPU. The executor's output is
// JSON it wrote itself, so this transport copies it as is and encodes only
// the small members around it.
type postTransport struct{}

var _ graphql.Transport = postTransport{}

func (postTransport) Supports(r *http.Request) bool {
	if r.Header.Get("Upgrade") != "" {
		return false
	}
	mediaType, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return err == nil && r.Method == http.MethodPost && mediaType == mediaJSON
}

func (postTransport) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	start := graphql.Now()
	body, err := io.ReadAll(r.Body)
	if err != nil {
		if tooLarge := (*http.MaxBytesError)(nil); errors.As(err, &tooLarge) {
			WriteHTTPError(w, r, http.StatusRequestEntityTooLarge, codeTooLarge, "the request body is too large")
			return
		}
		WriteHTTPError(w, r, http.StatusBadRequest, "BAD_REQUEST", "could not read the request body")
		return
	}
	if !utf8.Valid(body) {
		// Decoding would replace the bytes with U+FFFD (textCheck).
		WriteHTTPError(w, r, http.StatusBadRequest, "BAD_REQUEST", "the request body is not valid UTF-8")
		return
	}
	params := &graphql.RawParams{}
	// documentId: the persisted-documents draft's name for a registered
	// document (trusted.go), which RawParams has no member for.
	request := struct {
		*graphql.RawParams
		DocumentID string `json:"documentId"`
	}{RawParams: params}
	if err := DecodeJSON(body, &request); err != nil {
		WriteHTTPError(w, r, http.StatusBadRequest, "BAD_REQUEST",
			fmt.Sprintf(`the request body is not a JSON GraphQL request {"query": "...", "variables": {...}}: %v`, err))
		return
	}
	params.ReadTime = graphql.TraceTiming{Start: start, End: graphql.Now()}
	r = r.WithContext(withDocumentID(r.Context(), request.DocumentID))
	run(w, r, exec, params, false)
}

// getTransport serves queries sent as GET /graphql?query=...&variables=...
// (mutations and subscriptions: 405, as the specification says; they
// change things, and a GET may be repeated or prefetched).
type getTransport struct{}

var _ graphql.Transport = getTransport{}

func (getTransport) Supports(r *http.Request) bool {
	return r.Header.Get("Upgrade") == "" && r.Method == http.MethodGet
}

func (getTransport) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	start := graphql.Now()
	query, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		WriteHTTPError(w, r, http.StatusBadRequest, "BAD_REQUEST", "the query string is malformed: "+err.Error())
		return
	}
	// The parameters are checked before their JSON is decoded, which would
	// hide invalid UTF-8 (textCheck).
	for _, name := range []string{"query", "operationName", "variables", "extensions"} {
		if p := TextProblem(query.Get(name)); p != "" {
			WriteHTTPError(w, r, http.StatusBadRequest, "BAD_REQUEST", "the "+name+" parameter "+p)
			return
		}
	}
	params := &graphql.RawParams{Query: query.Get("query"), OperationName: query.Get("operationName")}
	for name, into := range map[string]*map[string]any{"variables": &params.Variables, "extensions": &params.Extensions} {
		raw := query.Get(name)
		if raw == "" {
			continue
		}
		if err := DecodeJSON([]byte(raw), into); err != nil {
			WriteHTTPError(w, r, http.StatusBadRequest, "BAD_REQUEST", name+" is not a JSON object: "+err.Error())
			return
		}
	}
	params.ReadTime = graphql.TraceTiming{Start: start, End: graphql.Now()}
	run(w, r, exec, params, true)
}

// run readies the operation of params and runs it, answering as the
// specification says. queriesOnly refuses other operations (GET).
func run(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor, params *graphql.RawParams, queriesOnly bool) {
	ctx := r.Context()
	media := responseMediaType(r)
	// A persisted query's hash (gqlgen's automatic persisted queries) or a
	// documentId (trusted documents) stands for its document; anything else
	// without a query is not a GraphQL request.
	if params.Query == "" && params.Extensions["persistedQuery"] == nil && ctx.Value(documentIDKey{}) == nil {
		WriteHTTPError(w, r, http.StatusBadRequest, "BAD_REQUEST", `the request has no query: send {"query": "..."}`)
		return
	}
	params.Headers = r.Header
	rc, opErr := exec.CreateOperationContext(ctx, params)
	if opErr != nil {
		writeAnswer(w, media, exec.DispatchError(graphql.WithOperationContext(ctx, rc), opErr), false)
		return
	}
	if queriesOnly && rc.Operation.Operation != ast.Query {
		w.Header().Set("Allow", http.MethodPost)
		WriteHTTPError(w, r, http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED",
			fmt.Sprintf("a %s cannot be sent by GET: POST it", rc.Operation.Operation))
		return
	}
	responses, ctx := exec.DispatchOperation(ctx, rc)
	writeAnswer(w, media, responses(ctx), true)
}

// multipartTransport serves uploads (the GraphQL multipart request
// specification) through gqlgen's transport, whose answer it takes in and
// gives again as the other transports answer: gqlgen's writes
// application/json whatever the client accepts, 422 for GraphQL request
// errors and errors without a code for a malformed form. Its answers are
// small (the files are in the request).
type multipartTransport struct{ base transport.MultipartForm }

var _ graphql.Transport = multipartTransport{}

func (t multipartTransport) Supports(r *http.Request) bool { return t.base.Supports(r) }

func (t multipartTransport) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	// gqlgen's answers a body declared too large with a 200.
	if r.ContentLength > t.base.MaxUploadSize {
		WriteHTTPError(w, r, http.StatusRequestEntityTooLarge, codeTooLarge, "the request body is too large")
		return
	}
	if err := checkMultipartForm(r); err != nil {
		code := "BAD_REQUEST"
		if err.status == http.StatusRequestEntityTooLarge {
			code = codeTooLarge
		}
		WriteHTTPError(w, r, err.status, code, err.message)
		return
	}
	rec := &answerRecorder{header: http.Header{}, status: http.StatusOK}
	ex := &executionSeen{GraphExecutor: exec}
	t.base.Do(rec, r, ex)
	var resp graphql.Response
	decoder := json.NewDecoder(&rec.body)
	decoder.UseNumber()
	if err := decoder.Decode(&resp); err != nil || len(resp.Errors) == 0 && !ex.executed {
		WriteHTTPError(w, r, http.StatusInternalServerError, "INTERNAL", "internal error")
		return
	}
	if !ex.executed && !ex.dispatchedError {
		// The form itself was refused, before any GraphQL: gqlgen's
		// messages, which carry no code.
		WriteHTTPError(w, r, http.StatusBadRequest, "BAD_REQUEST", resp.Errors[0].Message)
		return
	}
	writeAnswer(w, responseMediaType(r), &resp, ex.executed)
}

// executionSeen tells how a transport ended: an operation run, or a
// request error presented.
type executionSeen struct {
	graphql.GraphExecutor
	executed, dispatchedError bool
}

func (e *executionSeen) DispatchOperation(ctx context.Context, rc *graphql.OperationContext) (graphql.ResponseHandler, context.Context) {
	e.executed = true
	return e.GraphExecutor.DispatchOperation(ctx, rc)
}

func (e *executionSeen) DispatchError(ctx context.Context, list gqlerror.List) *graphql.Response {
	e.dispatchedError = true
	return e.GraphExecutor.DispatchError(ctx, list)
}

// answerRecorder keeps a transport's answer to be given again.
type answerRecorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (a *answerRecorder) Header() http.Header         { return a.header }
func (a *answerRecorder) WriteHeader(status int)      { a.status = status }
func (a *answerRecorder) Write(b []byte) (int, error) { return a.body.Write(b) }

// writeAnswer writes a response in media, with the status answerStatus
// gives it; executed tells an operation that ran from a request error.
func writeAnswer(w http.ResponseWriter, media string, resp *graphql.Response, executed bool) {
	if resp == nil {
		resp = &graphql.Response{}
	}
	status, withData := answerStatus(media, resp, executed)
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", BearerChallenge)
	}
	w.Header().Set("Content-Type", media)
	w.WriteHeader(status)
	writeResponse(w, resp, withData)
}

// answerStatus is the HTTP status of a response, and whether it has a data
// entry (see the top of this file).
func answerStatus(media string, resp *graphql.Response, executed bool) (status int, withData bool) {
	if executed {
		// An operation that needed a caller and had none: the request was
		// not permitted, whatever else it asked for (introspection).
		for _, e := range resp.Errors {
			if code, _ := e.Extensions["code"].(string); code == codeUnauthenticated {
				return http.StatusUnauthorized, false
			}
		}
		return http.StatusOK, true
	}
	status = http.StatusBadRequest
	for _, e := range resp.Errors {
		if s, ok := errorStatus(e); ok {
			status = s
			break
		}
	}
	// A GraphQL request error of a well-formed request (the client's
	// document, variables, limits); not a request refused before it was
	// parsed (BAD_REQUEST: text the database cannot store, textCheck),
	// which is 400 in both media types.
	if status == http.StatusBadRequest && media == mediaJSON && !IsBadRequest(resp.Errors) {
		return http.StatusOK, false
	}
	return status, false
}

// errorStatus is extensions.status of e, as the presenter set it or as
// decoded from JSON (multipartTransport).
func errorStatus(e *gqlerror.Error) (int, bool) {
	var status int
	switch s := e.Extensions["status"].(type) {
	case int:
		status = s
	case json.Number:
		n, err := s.Int64()
		if err != nil {
			return 0, false
		}
		status = int(n)
	case float64:
		status = int(s)
	default:
		return 0, false
	}
	return status, status >= 400 && status < 600
}

// responseMediaType is the media type of the answer, negotiated from the
// Accept header: application/graphql-response+json or application/json,
// whichever has the higher quality (the first listed of equal ones);
// application/json for */*, application/*, or no Accept (as the
// specification asks of servers that existing clients call); the GraphQL
// media type when Accept names neither (a client that asks for something
// else gets the type the specification defines for GraphQL).
func responseMediaType(r *http.Request) string {
	accept := r.Header.Get("Accept")
	if accept == "" {
		return mediaJSON
	}
	best, bestQ := "", 0.0
	for part := range strings.SplitSeq(accept, ",") {
		mediaType, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		q := 1.0
		if v, ok := params["q"]; ok {
			if q, err = strconv.ParseFloat(v, 64); err != nil {
				continue
			}
		}
		var offer string
		switch mediaType {
		case "*/*", "application/*", mediaJSON:
			offer = mediaJSON
		case mediaGraphQLResponse:
			offer = mediaGraphQLResponse
		default:
			continue
		}
		if q > bestQ {
			best, bestQ = offer, q
		}
	}
	if best == "" {
		return mediaGraphQLResponse
	}
	return best
}

// WriteHTTPError writes a GraphQL error response in the media type r
// accepts, for failures outside an operation (authentication, a malformed
// request, a panic): {"errors": [...]} with extensions.code and .status,
// and no data entry.
func WriteHTTPError(w http.ResponseWriter, r *http.Request, status int, code, message string) {
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", BearerChallenge)
	}
	w.Header().Set("Content-Type", responseMediaType(r))
	w.WriteHeader(status)
	err := &gqlerror.Error{Message: message, Extensions: map[string]any{"code": code, "status": status}}
	writeResponse(w, &graphql.Response{Errors: gqlerror.List{err}}, false)
}

// writeResponse writes resp as json.Marshal would (same members, same
// order, same omissions), without its data entry unless withData, and
// except that data, which the executor wrote as JSON,
// is written as it is rather than validated and compacted again, and
// without being copied: the members before and after it are put together
// apart, and the three parts written in turn (the response writer buffers
// them).
func writeResponse(w io.Writer, resp *graphql.Response, withData bool) {
	if resp == nil {
		resp = &graphql.Response{}
	}
	var b bytes.Buffer
	members := 0
	member := func(name string, value any) {
		raw, err := json.Marshal(value)
		if err != nil {
			// Errors and extensions are maps and lists of plain values;
			// should one ever fail to encode, the client still gets JSON.
			raw, _ = json.Marshal(err.Error())
		}
		if members > 0 {
			b.WriteByte(',')
		}
		members++
		b.WriteString(`"` + name + `":`)
		b.Write(raw)
	}
	b.WriteByte('{')
	if len(resp.Errors) > 0 {
		member("errors", resp.Errors)
	}
	if withData {
		if members > 0 {
			b.WriteByte(',')
		}
		members++
		b.WriteString(`"data":`)
		data := []byte(resp.Data)
		if len(data) == 0 {
			data = []byte("null")
		}
		_, _ = w.Write(b.Bytes())
		_, _ = w.Write(data)
		b.Reset()
	}
	if resp.Label != "" {
		member("label", resp.Label)
	}
	if len(resp.Path) > 0 {
		member("path", resp.Path)
	}
	if resp.HasNext != nil {
		member("hasNext", *resp.HasNext)
	}
	if len(resp.Extensions) > 0 {
		member("extensions", resp.Extensions)
	}
	b.WriteByte('}')
	_, _ = w.Write(b.Bytes())
}
