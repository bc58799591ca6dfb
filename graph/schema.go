package graph

import (
	"context"
	"reflect"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/docsapi/docsapi/graph/engine"
	"github.com/docsapi/docsapi/graph/generated"
)

// Engine builds the engine that runs this resolver's operations, for
// /graphql and the REST adapter alike: the schema with the costs of its
// list fields, the one error presenter, and what the engine's direct writer,
// projection and authorizer need to know of the resolvers.
func (r *Resolver) Engine(debug bool) *engine.Engine {
	cfg := generated.Config{Resolvers: r}
	complexityOf(&cfg.Complexity)
	es := generated.NewExecutableSchema(cfg)
	return engine.New(engine.Config{
		Schema:           es,
		Presenter:        PresentError(r.Log),
		Log:              r.Log,
		Debug:            debug,
		GenericExecution: func() bool { return r.GenericExecution },
		Direct: func(d *engine.DirectWriter) {
			r.siteStructureDirect(d)
			r.spaceDirect(d)
		},
		ReadRule:  r.directReadRule,
		Summaries: []engine.Summary{spaceSummary},
		Inner:     []graphql.HandlerExtension{newAuthorizer(r, es.Schema())},
		Trusted:   r.TrustedDocuments,
		Budget:    r.Budget,
	})
}

// complexityOf sets the cost of list fields: gqlgen counts every field as 1
// unless told otherwise, which would let a page of 1,000 items cost what one
// item does.
func complexityOf(c *generated.ComplexityRoot) {
	paged := func(child int, limit *int) int {
		n := DefaultPageSize
		if limit != nil && *limit > 0 {
			n = *limit
		}
		return 1 + n*child
	}
	c.Query.Organizations = func(child int, _ *string, limit *int) int { return paged(child, limit) }
}

// directReadRule is the read rule (authorize.go) of the objects of goType,
// as the direct writer applies it; nil for unguarded types.
func (r *Resolver) directReadRule(goType reflect.Type) func(context.Context, any) (bool, error) {
	rule := readRules[goType]
	if rule == nil {
		return nil
	}
	return func(ctx context.Context, obj any) (bool, error) {
		v := r.viewer(ctx)
		if v.caller == nil {
			return false, nil
		}
		return rule(v, obj)
	}
}

// Schema is the parsed schema, for what needs no resolvers: the REST route
// table's documentation and OpenAPI document, tests.
func Schema() *ast.Schema { return generated.NewExecutableSchema(generated.Config{}).Schema() }
