package graph

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"strconv"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/docsapi/docsapi/store"
)

// Error is an error a client caused or should know about. Resolvers return it;
// the error presenter turns it into a GraphQL error whose extensions carry
// `code` and `status`, and the REST adapter into `{"error": {code, message}}`
// with that status. Any other error is internal: logged, never shown.
type Error struct {
	Status  int
	Code    string
	Message string
	// Field is the input field at fault, for bad requests.
	Field string
	// Extensions are more members of the GraphQL error's extensions, for
	// what a client acts on (a stale base revision's currentRevision).
	Extensions map[string]any
}

func (e *Error) Error() string { return e.Message }

// NotFound is answered for resources that do not exist and, identically, for
// resources the caller may not see.
func NotFound(what string) *Error {
	return &Error{Status: http.StatusNotFound, Code: "NOT_FOUND", Message: what + " not found"}
}

// orNotFound is err with the store's ErrNotFound answered as NotFound(what),
// a 404 "<what> not found"; any other error, and nil, pass through as they
// are. It is how a resolver reads one thing by id:
//
//	s, err := store.GetSite(ctx, r.DB, orgID, id)
//	if err != nil {
//		return nil, orNotFound(err, "site")
//	}
func orNotFound(err error, what string) error {
	if errors.Is(err, store.ErrNotFound) {
		return NotFound(what)
	}
	return err
}

// isNotFound reports whether err is a NotFound error.
// IsNotFound tells whether err is a not found (404), for the adapters.
func IsNotFound(err error) bool { return isNotFound(err) }

func isNotFound(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Status == 404
}

// Invalid is a bad request naming the input field at fault.
func Invalid(field, format string, args ...any) *Error {
	return &Error{Status: http.StatusBadRequest, Code: "BAD_REQUEST", Field: field,
		Message: field + ": " + fmt.Sprintf(format, args...)}
}

// BadRequest is a bad request not tied to one field.
func BadRequest(format string, args ...any) *Error {
	return &Error{Status: http.StatusBadRequest, Code: "BAD_REQUEST", Message: fmt.Sprintf(format, args...)}
}

// OverLimit is a request this server will not carry out because what it
// names is past one of the server's limits (a git repository too large to
// import): 422, naming the input field at fault. The request is well
// formed, and nothing in it is too large (413): what it points to is.
func OverLimit(field, format string, args ...any) *Error {
	return &Error{Status: http.StatusUnprocessableEntity, Code: "LIMIT_EXCEEDED", Field: field,
		Message: field + ": " + fmt.Sprintf(format, args...)}
}

// Forbidden is answered when the caller can see a resource but may not do this to it.
func Forbidden(format string, args ...any) *Error {
	return &Error{Status: http.StatusForbidden, Code: "FORBIDDEN", Message: fmt.Sprintf(format, args...)}
}

// Conflict is answered when the request clashes with the current state.
func Conflict(format string, args ...any) *Error {
	return &Error{Status: http.StatusConflict, Code: "CONFLICT", Message: fmt.Sprintf(format, args...)}
}

// StaleBase is the conflict of a content edit based on a revision that is
// no longer the content's current one (baseRevision): the edit would undo
// the changes made since. It names the current revision, in the message and
// as extensions.currentRevision.
func StaleBase(base, current string) *Error {
	e := Conflict("baseRevision %s is not the current revision %s: the content changed since; read it again and retry", base, current)
	e.Extensions = map[string]any{"currentRevision": current}
	return e
}

// PreconditionFailed is answered when the resource is not in a state that
// allows this (a space published by a site cannot change organization).
func PreconditionFailed(format string, args ...any) *Error {
	return &Error{Status: http.StatusPreconditionFailed, Code: "PRECONDITION_FAILED", Message: fmt.Sprintf(format, args...)}
}

// ErrUnauthenticated is answered when the request carries no valid credential.
var ErrUnauthenticated = &Error{Status: http.StatusUnauthorized, Code: "UNAUTHENTICATED",
	Message: "authentication required: send Authorization: Bearer <API token>"}

// ErrTimeout is answered when PostgreSQL cut a statement of the request (the
// statement timeout, DOCSAPI_STATEMENT_TIMEOUT): a lock held too long or an
// overloaded database, which passes. 503 rather than 504: this server is the
// origin, not a gateway, and 503 is the status whose Retry-After clients and
// proxies know to honour.
var ErrTimeout = &Error{Status: http.StatusServiceUnavailable, Code: "TIMEOUT",
	Message: "the database did not answer in time; try again"}

// ErrUnavailable is answered when the database is out of reach: the pool
// cannot connect (the server is down, starting or restarting) or a
// connection broke under the request (store.IsUnavailable). The pool
// reconnects by itself once the server is back.
var ErrUnavailable = &Error{Status: http.StatusServiceUnavailable, Code: "UNAVAILABLE",
	Message: "the database is unavailable; try again shortly"}

// RetryAfterSeconds is the Retry-After of a 503 (ErrTimeout, ErrUnavailable).
const RetryAfterSeconds = 2

// DatabaseError is the answer to err when it is the database failing the
// request through no fault of the request's, to be retried: ErrTimeout
// for a statement PostgreSQL cut, ErrUnavailable for a database out of
// reach; nil otherwise. The error presenter, the REST writer and the
// authentication of requests all answer these through it, and log them as
// warnings, not as internal errors.
func DatabaseError(err error) *Error {
	switch {
	case store.IsTimeout(err):
		return ErrTimeout
	case store.IsUnavailable(err):
		return ErrUnavailable
	}
	return nil
}

// Codes of errors raised by gqlgen itself, and the HTTP status each maps to.
var protocolStatus = map[string]int{
	errcode.ValidationFailed:    http.StatusBadRequest,
	errcode.ParseFailed:         http.StatusBadRequest,
	"COMPLEXITY_LIMIT_EXCEEDED": http.StatusBadRequest,
	"DEPTH_LIMIT_EXCEEDED":      http.StatusBadRequest,
	"PERSISTED_QUERY_NOT_FOUND": http.StatusBadRequest,
}

// ErrorStatus is the HTTP status of a presented GraphQL error.
func ErrorStatus(e *gqlerror.Error) int {
	if s, ok := e.Extensions["status"].(int); ok {
		return s
	}
	if code, ok := e.Extensions["code"].(string); ok {
		if s, ok := protocolStatus[code]; ok {
			return s
		}
	}
	return http.StatusInternalServerError
}

// PresentError is the one place that decides what a client sees of an error.
func PresentError(log *slog.Logger) graphql.ErrorPresenterFunc {
	return func(ctx context.Context, err error) *gqlerror.Error {
		var gqlErr *gqlerror.Error
		var e *Error
		switch {
		case errors.As(err, &e):
		case errors.Is(err, store.ErrNotFound):
			e = NotFound("resource")
		case DatabaseError(err) != nil:
			e = DatabaseError(err)
			log.WarnContext(ctx, "the database failed the request", "code", e.Code, "err", err, "path", graphql.GetPath(ctx))
		case errors.As(err, &gqlErr) && gqlErr.Err == nil:
			// Raised by gqlgen (validation, parsing, coercion, limits): safe to show.
			return presentProtocolError(ctx, log, gqlErr)
		case errors.As(err, new(*store.InvalidValueError)):
			// An argument that is not a valid value of its type (an unknown
			// language, say): the client's mistake. The message names the
			// argument member, as REST clients know it ("language", not
			// "updateSpace.input.language").
			out := graphql.DefaultErrorPresenter(ctx, err)
			if field := argumentPath(out.Path); field != "" {
				out.Message = field + ": " + out.Message
				out.Extensions = map[string]any{"field": field}
			}
			setCode(out, "BAD_REQUEST", http.StatusBadRequest)
			return out
		}
		if e == nil {
			if ctx.Err() != nil && errors.Is(err, context.Canceled) {
				// The client ended the operation (completed it, or went
				// away): no failure of the server's, and no one to tell.
				log.DebugContext(ctx, "operation cancelled by its client", "err", err, "path", graphql.GetPath(ctx))
			} else {
				log.ErrorContext(ctx, "internal error", "err", err, "path", graphql.GetPath(ctx))
			}
			out := graphql.DefaultErrorPresenter(ctx, errors.New("internal error"))
			setCode(out, "INTERNAL", http.StatusInternalServerError)
			return out
		}
		out := graphql.DefaultErrorPresenter(ctx, e)
		out.Message = e.Message
		setCode(out, e.Code, e.Status)
		if e.Field != "" {
			out.Extensions["field"] = e.Field
		}
		for k, v := range e.Extensions {
			out.Extensions[k] = v
		}
		return out
	}
}

// presentProtocolError gives an error gqlgen raised its code and status:
// those of protocolStatus for its codes; BAD_REQUEST for a request it
// refused without a code (an automatic persisted query whose hash does not
// match); INTERNAL for one raised while executing a field without a code (a
// resolver that returned null for a non-null field: a bug of ours).
func presentProtocolError(ctx context.Context, log *slog.Logger, e *gqlerror.Error) *gqlerror.Error {
	out := *e
	out.Extensions = maps.Clone(e.Extensions)
	code, _ := out.Extensions["code"].(string)
	status, known := protocolStatus[code]
	given, hasStatus := out.Extensions["status"].(int)
	switch {
	case known:
	case code != "" && hasStatus && given >= 400 && given < 600:
		// Raised with its status by the engine (RATE_LIMITED,
		// TRUSTED_DOCUMENT_REQUIRED).
		status = given
	case code != "":
		status = http.StatusBadRequest
	case graphql.GetFieldContext(ctx) != nil:
		log.ErrorContext(ctx, "internal error", "err", e.Message, "path", graphql.GetPath(ctx))
		code, status = "INTERNAL", http.StatusInternalServerError
	default:
		code, status = "BAD_REQUEST", http.StatusBadRequest
	}
	setCode(&out, code, status)
	return &out
}

// argumentPath renders an argument's path below its root field, dropping the
// "input" argument that stands for a REST body: [updateSpace input language]
// is "language".
func argumentPath(path ast.Path) string {
	if len(path) < 2 {
		return ""
	}
	var b strings.Builder
	for i, p := range path[1:] {
		switch p := p.(type) {
		case ast.PathName:
			if i == 0 && p == "input" && len(path) > 2 {
				continue
			}
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(string(p))
		case ast.PathIndex:
			b.WriteString("[" + strconv.Itoa(int(p)) + "]")
		}
	}
	return b.String()
}

func setCode(e *gqlerror.Error, code string, status int) {
	if e.Extensions == nil {
		e.Extensions = map[string]any{}
	}
	e.Extensions["code"] = code
	e.Extensions["status"] = status
}
