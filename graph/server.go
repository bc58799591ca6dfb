package graph

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/executor"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/docsapi/docsapi/graph/generated"
	"github.com/docsapi/docsapi/store"
)

// NewExecutor builds the one executor that serves both /graphql and the REST
// adapter, so both get the same limits, caches and error presentation. It
// returns the schema too, against which REST documents are validated.
func NewExecutor(r *Resolver, debugStats bool) (*executor.Executor, *ast.Schema) {
	cfg := generated.Config{Resolvers: r}
	complexityOf(&cfg.Complexity)
	es := generated.NewExecutableSchema(cfg)
	ex := executor.New(es)
	parsed := lru.New[*ast.QueryDocument](1000)
	ex.SetQueryCache(parsed)
	ex.SetErrorPresenter(PresentError(r.Log))
	ex.SetRecoverFunc(func(ctx context.Context, p any) error {
		r.Log.ErrorContext(ctx, "panic in resolver", "panic", p, "stack", string(debug.Stack()))
		return errors.New("internal error")
	})
	ex.Use(extension.Introspection{})
	ex.SetParserTokenLimit(MaxTokens)
	ex.Use(extension.AutomaticPersistedQuery{Cache: lru.New[string](1000)})
	// After the persisted queries (which fill in the query), before
	// gqlgen's parsing and validation.
	ex.Use(mergeLimit{maxPairs: maxMergePairs, maxVisited: maxMergeVisited, parsed: parsed})
	// The shape limit first: it stops documents whose fragments would make
	// the complexity walk exponential.
	ex.Use(clientLimit{shapeLimit{maxDepth: MaxDepth, maxFields: MaxComplexity}})
	ex.Use(clientLimit{extension.FixedComplexityLimit(MaxComplexity)})
	ex.Use(projectionExtension{})
	ex.Use(newDirectWriter(r, es.Schema()))
	// Innermost, so it sees what each resolver returned (the direct writer
	// applies the same rules to the subtrees it writes).
	ex.Use(newAuthorizer(r, es.Schema()))
	if debugStats {
		ex.Use(statsExtension{})
	}
	return ex, es.Schema()
}

// statsExtension adds extensions.stats {sqlQueries, durationMs,
// directWrites} to every response (DOCSAPI_DEBUG=1), so the cost of a
// request is visible from outside; directWrites counts the fields the direct
// writer (direct.go) wrote.
type statsExtension struct{}

var _ interface {
	graphql.HandlerExtension
	graphql.ResponseInterceptor
} = statsExtension{}

func (statsExtension) ExtensionName() string                   { return "Stats" }
func (statsExtension) Validate(graphql.ExecutableSchema) error { return nil }
func (statsExtension) InterceptResponse(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	direct := new(atomic.Int64)
	resp := next(context.WithValue(ctx, directCountKey{}, direct))
	if resp == nil {
		return resp
	}
	var start time.Time
	if graphql.HasOperationContext(ctx) {
		start = graphql.GetOperationContext(ctx).Stats.OperationStart
	}
	stats := map[string]any{"durationMs": float64(time.Since(start).Microseconds()) / 1000, "directWrites": direct.Load()}
	if c := store.QueryCounterFrom(ctx); c != nil {
		stats["sqlQueries"] = c.Count()
	}
	if resp.Extensions == nil {
		resp.Extensions = map[string]any{}
	}
	resp.Extensions["stats"] = stats
	return resp
}

// HTTPHandler serves GraphQL over HTTP (POST, GET for queries, and
// multipart requests for uploads of at most maxUpload bytes) with ex, and
// over the transports of extra (the websocket of subscriptions), which come
// first.
func HTTPHandler(ex *executor.Executor, log *slog.Logger, maxUpload int64, extra ...graphql.Transport) http.Handler {
	transports := append(extra,
		transport.GET{},
		postTransport{},
		// The transport's bound leaves room for the form around the file, so
		// a file just too large gets the resolver's clear 400 (blob.Put).
		transport.MultipartForm{MaxUploadSize: maxUpload + 1<<20, MaxMemory: 8 << 20},
	)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if p := recover(); p != nil {
				log.ErrorContext(r.Context(), "panic serving graphql", "panic", p, "stack", string(debug.Stack()))
				WriteHTTPError(w, http.StatusInternalServerError, "INTERNAL", "internal error")
			}
		}()
		r = r.WithContext(graphql.StartOperationTrace(r.Context()))
		for _, t := range transports {
			if t.Supports(r) {
				t.Do(w, r, ex)
				return
			}
		}
		WriteHTTPError(w, http.StatusBadRequest, "BAD_REQUEST",
			"send the query as JSON in a POST body (Content-Type: application/json), or as ?query= in a GET")
	})
}

// WriteHTTPError writes a GraphQL-shaped error response (for failures before execution).
func WriteHTTPError(w http.ResponseWriter, status int, code, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	err := &gqlerror.Error{Message: message, Extensions: map[string]any{"code": code, "status": status}}
	_ = json.NewEncoder(w).Encode(graphql.Response{Errors: gqlerror.List{err}})
}
