// Package engine runs GraphQL operations for the resolvers of package graph:
// the executor and its caches, the limits on what one operation may cost,
// projection, the direct writer of hot subtrees, debug statistics, and the
// HTTP transports (POST and GET, multipart uploads, and the websocket of
// subscriptions). It knows nothing of the API's domain: the resolvers hand
// it their schema, error presenter, direct-writer tables, read rules and
// projections through Config, and /graphql and the REST adapter run every
// operation through the one Engine it builds.
package engine

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"reflect"
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

	"github.com/docsapi/docsapi/graph/budget"
	"github.com/docsapi/docsapi/store"
)

// Config is what the resolvers give the engine.
type Config struct {
	// Schema is the executable schema: gqlgen's, with the resolvers and
	// the costs of list fields.
	Schema graphql.ExecutableSchema
	// Presenter decides what a client sees of an error.
	Presenter graphql.ErrorPresenterFunc
	Log       *slog.Logger
	// Debug adds extensions.stats {sqlQueries, durationMs, directWrites}
	// to every response.
	Debug bool
	// GenericExecution, when it answers true, turns the direct writer off:
	// every field runs through gqlgen (asked at each request, so a test can
	// compare both on one server).
	GenericExecution func() bool
	// Direct declares the direct writer's entries and object types.
	Direct func(*DirectWriter)
	// ReadRule is the read rule objects of a Go type pass before the direct
	// writer writes them (nil: none), as Inner applies it to gqlgen's fields.
	ReadRule func(goType reflect.Type) func(ctx context.Context, obj any) (bool, error)
	// RunContext, when set, adds to the context of a subtree the direct
	// writer writes the values its resolvers look up for every object
	// (the request's loaders): found at the top of the context, not at
	// the bottom of the field's chain.
	RunContext func(context.Context) context.Context
	// Summaries are the projections decided once per operation
	// (SummariesSuffice).
	Summaries []Summary
	// Inner are field interceptors run innermost, on what each resolver
	// returned: the resolvers' authorizer.
	Inner []graphql.HandlerExtension
	// Trusted, when set, are the only documents clients other than
	// developers may run (trusted.go); automatic persisted queries are off.
	Trusted *TrustedDocuments
	// Budget, when set, charges each operation its complexity to its
	// caller's rate budget (budget.go).
	Budget *budget.Budget
	// Traced gives operations and their root fields spans (tracing.go),
	// under the request's when it records one; off, the engine has no
	// extension for them (each costs an allocation per operation).
	Traced bool
}

// Engine is the one executor that serves both /graphql and the REST
// adapter, so both get the same limits, caches and error presentation.
type Engine struct {
	*executor.Executor
	// Schema is the parsed schema, against which the REST adapter's
	// documents are validated.
	Schema *ast.Schema
	log    *slog.Logger
}

// New builds the engine.
func New(cfg Config) *Engine {
	ex := executor.New(cfg.Schema)
	parsed := lru.New[*ast.QueryDocument](1000)
	ex.SetQueryCache(parsed)
	ex.SetErrorPresenter(cfg.Presenter)
	ex.SetRecoverFunc(func(ctx context.Context, p any) error {
		cfg.Log.ErrorContext(ctx, "panic in resolver", "panic", p, "stack", string(debug.Stack()))
		return errors.New("internal error")
	})
	ex.Use(extension.Introspection{})
	if cfg.Traced {
		// Outermost: an operation's span covers all that runs it.
		ex.Use(operationSpans{})
	}
	ex.SetParserTokenLimit(MaxTokens)
	// First: nothing else sees, or keeps, text the database cannot store.
	ex.Use(textCheck{parsed: parsed})
	if cfg.Trusted != nil {
		ex.Use(trustedOnly{docs: cfg.Trusted})
	} else {
		ex.Use(extension.AutomaticPersistedQuery{Cache: lru.New[string](1000)})
	}
	// After the persisted queries (which fill in the query), before
	// gqlgen's parsing and validation.
	ex.Use(mergeLimit{maxPairs: maxMergePairs, maxVisited: maxMergeVisited, parsed: parsed})
	// The shape limit first: it stops documents whose fragments would make
	// the complexity walk exponential.
	ex.Use(clientLimit{shapeLimit{maxDepth: MaxDepth, maxFields: MaxComplexity}})
	ex.Use(clientLimit{extension.FixedComplexityLimit(MaxComplexity)})
	// After the limits: what they refuse costs nothing.
	if cfg.Budget != nil {
		ex.Use(newBudgetCharge(cfg.Budget, cfg.Schema))
	}
	if len(cfg.Summaries) > 0 {
		ex.Use(summariesExtension{cfg.Summaries})
	}
	schema := cfg.Schema.Schema()
	d := newDirectWriter(schema, cfg)
	if cfg.Direct != nil {
		cfg.Direct(d)
	}
	ex.Use(d)
	// Innermost, so they see what each resolver returned (the direct writer
	// applies the read rules to the subtrees it writes).
	for _, ext := range cfg.Inner {
		ex.Use(ext)
	}
	if cfg.Debug {
		ex.Use(statsExtension{})
	}
	return &Engine{Executor: ex, Schema: schema, log: cfg.Log}
}

// statsExtension adds extensions.stats {sqlQueries, durationMs,
// directWrites} to every response (Config.Debug), so the cost of a request
// is visible from outside; directWrites counts the fields the direct writer
// wrote.
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

// Handler serves GraphQL over HTTP (POST, GET for queries, and multipart
// requests for uploads of at most maxUpload bytes), and over the transports
// of extra (the websocket of subscriptions), which come first.
func (e *Engine) Handler(maxUpload int64, extra ...graphql.Transport) http.Handler {
	transports := append(extra,
		getTransport{},
		postTransport{},
		// The transport's bound leaves room for the form around the file, so
		// a file just too large gets the resolver's clear 400.
		multipartTransport{transport.MultipartForm{MaxUploadSize: maxUpload + 1<<20, MaxMemory: 8 << 20}},
	)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if p := recover(); p != nil {
				e.log.ErrorContext(r.Context(), "panic serving graphql", "panic", p, "stack", string(debug.Stack()))
				WriteHTTPError(w, r, http.StatusInternalServerError, "INTERNAL", "internal error")
			}
		}()
		ctx := graphql.StartOperationTrace(r.Context())
		if r.Method == http.MethodGet {
			ctx = withDocumentID(ctx, r.URL.Query().Get("documentId"))
		}
		r = r.WithContext(ctx)
		for _, t := range transports {
			if t.Supports(r) {
				t.Do(w, r, e.Executor)
				return
			}
		}
		WriteHTTPError(w, r, http.StatusBadRequest, "BAD_REQUEST",
			"send the query as JSON in a POST body (Content-Type: application/json), or as ?query= in a GET")
	})
}

// RunServerDocument runs operation name of source, a document of the
// server's own (the REST adapter's, the reader's), in-process with vars:
// no HTTP hop, the parsed document from the executor's cache, and the
// shape and complexity limits meant for clients' documents skipped. A
// panic below is answered as an internal error.
func (e *Engine) RunServerDocument(ctx context.Context, source, name string, vars map[string]any) (resp *graphql.Response) {
	defer func() {
		if p := recover(); p != nil {
			e.log.ErrorContext(ctx, "panic in a server document", "operation", name, "panic", p, "stack", string(debug.Stack()))
			resp = &graphql.Response{Errors: gqlerror.List{{Message: "internal error",
				Extensions: map[string]any{"code": "INTERNAL", "status": http.StatusInternalServerError}}}}
		}
	}()
	ctx = WithServerDocument(graphql.StartOperationTrace(ctx))
	params := &graphql.RawParams{Query: source, OperationName: name, Variables: vars}
	opCtx, errs := e.CreateOperationContext(ctx, params)
	if errs != nil {
		return e.DispatchError(graphql.WithOperationContext(ctx, opCtx), errs)
	}
	h, ctx := e.DispatchOperation(ctx, opCtx)
	return h(ctx)
}
