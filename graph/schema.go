package graph

import (
	"context"
	"reflect"
	"strings"
	"sync"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/docsapi/docsapi/graph/engine"
	"github.com/docsapi/docsapi/graph/generated"
	"github.com/docsapi/docsapi/store"
)

// Engine builds the engine that runs this resolver's operations, for
// /graphql and the REST adapter alike: the schema with the costs of its
// list fields, the one error presenter, and what the engine's direct writer,
// projection and authorizer need to know of the resolvers.
func (r *Resolver) Engine(debug bool) *engine.Engine {
	cfg := generated.Config{Resolvers: r, Complexity: listCosts()}
	es := generated.NewExecutableSchema(cfg)
	inner := []graphql.HandlerExtension{callerRequired{}, newAuthorizer(r, es.Schema()), newRelayPaging(es.Schema())}
	if r.DB.Replicated() {
		inner = append(inner, replicaReads{r.DB})
	}
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
		ReadRule: r.directReadRule,
		// The loaders hold the viewer, the memoized reads and the loads
		// themselves, asked for by every object of a site's tree.
		RunContext: func(ctx context.Context) context.Context { return WithLoaders(ctx, r.loaders(ctx)) },
		Summaries:  []engine.Summary{spaceSummary},
		Inner:      inner,
		Trusted:    r.TrustedDocuments,
		Budget:     r.Budget,
		Traced:     r.Tracing != nil,
	})
}

// listCosts is the schema's complexity functions (complexityOf), set once
// per process: the reflection over the schema is most of what building an
// engine costs, and a process may build many (the tests build hundreds).
var listCosts = sync.OnceValue(func() generated.ComplexityRoot {
	var c generated.ComplexityRoot
	complexityOf(&c)
	return c
})

// complexityOf sets the cost of list fields: gqlgen counts every field as 1
// unless told otherwise, which would let a page of 1,000 items cost what one
// item does. A list costs ListQueryCost for the queries it runs, plus its
// page size (`first` or `limit`, else the default) times what is selected
// of it (its items, its edges' nodes, its page info), so a selection of
// `edges { node }` costs what one of `items` does, plus TotalCountCost when
// its totalCount is selected. The functions are set by reflection, from
// the schema: every field taking `limit` gets one (TestListsAreConnections).
//
// gqlgen's walk hands a list's function the sum of what its selection
// costs, which the function multiplies by the page size: right for the
// items, wrong for a total computed once per list. So totalCount costs
// totalCountMark in the walk, far above anything the walk can add up below
// a list (a selection of at most MaxComplexity fields, each list in it at
// most 1 + ListQueryCost + MaxPageSize × (MaxComplexity + 1)), and the
// list's function takes the marks out of the sum and prices each once.
// A sum the walk saturated (a document far past the limit) reads as
// thousands of marks: refused all the same.
func complexityOf(c *generated.ComplexityRoot) {
	totalCounts(c)
	c.Query.Nodes = nodesCost
	defer searchCosts(c)
	schema := Schema()
	root := reflect.ValueOf(c).Elem()
	for i := range root.NumField() {
		def := byGoName(schema.Types, root.Type().Field(i).Name)
		if def == nil {
			continue
		}
		fields := root.Field(i)
		for j := range fields.NumField() {
			var f *ast.FieldDefinition
			for _, x := range def.Fields {
				if goName(x.Name) == goName(fields.Type().Field(j).Name) {
					f = x
				}
			}
			if f == nil || f.Arguments.ForName("limit") == nil {
				continue
			}
			// gqlgen passes the arguments in the schema's order, after
			// the complexity of the selection.
			size := []int{}
			for k, a := range f.Arguments {
				if a.Name == "first" || a.Name == "limit" {
					size = append(size, k+1)
				}
			}
			fields.Field(j).Set(reflect.MakeFunc(fields.Field(j).Type(), func(args []reflect.Value) []reflect.Value {
				n := DefaultPageSize
				for _, k := range size {
					if a := args[k]; !a.IsNil() && a.Elem().Int() > 0 {
						n = int(a.Elem().Int())
					}
				}
				totals, perItem := int(args[0].Int())/totalCountMark, int(args[0].Int())%totalCountMark
				// Saturated past the limit: nested lists multiply, and
				// an overflow would wrap around below it.
				child := min(perItem, engine.MaxComplexity+1)
				return []reflect.Value{reflect.ValueOf(1 + ListQueryCost + totals*TotalCountCost + n*child)}
			}))
		}
	}
}

// ListQueryCost is what a list costs besides its items: the SQL it runs for
// its page, whatever the page's size. Priced by their page alone, aliases
// and fragment spreads of one-item lists (`members(limit: 1) { count }`, 2
// each, when count was a query too) ran 10,000 list queries from some 2,000
// tokens, two seconds of database time, within the complexity limit; at 100
// a request runs at most some 2,500 of them (TestListsCostTheirQueries).
const ListQueryCost = 100

// TotalCountCost is what a list's totalCount costs, once per list whatever
// its page size: a query's worth, like the list's page (the totals are read
// from counts the database keeps, or known from a list read whole).
const TotalCountCost = ListQueryCost

// totalCountMark is the cost of totalCount in gqlgen's walk, which the
// list's function turns into TotalCountCost (complexityOf).
const totalCountMark = 1 << 50

// totalCounts gives every list's totalCount its mark.
func totalCounts(c *generated.ComplexityRoot) {
	root := reflect.ValueOf(c).Elem()
	for i := range root.NumField() {
		if f := root.Field(i).FieldByName("TotalCount"); f.IsValid() {
			f.Set(reflect.ValueOf(func(int) int { return totalCountMark }))
		}
	}
}

// searchCosts adds to the cost of the searches, a list's, the rows each
// ranks whatever page it answers (its page is cut from the ranked hits):
// priced by their page alone, aliases and fragment spreads of one-item
// searches ran 10,000 full-text searches of an organization for the cost
// of 20,000 fields.
func searchCosts(c *generated.ComplexityRoot) {
	org, space := c.Organization.Search, c.Space.Search
	c.Organization.Search = func(child int, query string, page *string, limit, first *int, after *string) int {
		return store.SearchRanked + org(child, query, page, limit, first, after)
	}
	c.Space.Search = func(child int, query string, page *string, limit, first *int, after *string) int {
		return store.SearchRanked + space(child, query, page, limit, first, after)
	}
}

// nodesCost is the cost of `nodes`: what is selected of each object, once
// per id.
func nodesCost(child int, ids []string) int {
	return 1 + len(ids)*min(child, engine.MaxComplexity+1)
}

// goName is how gqlgen's Go names and the schema's names compare: case and
// underscores aside.
func goName(name string) string { return strings.ToLower(strings.ReplaceAll(name, "_", "")) }

func byGoName(types map[string]*ast.Definition, name string) *ast.Definition {
	for n, def := range types {
		if goName(n) == goName(name) {
			return def
		}
	}
	return nil
}

// directReadRule is the read rule (authorize.go) of the objects of goType,
// as the direct writer applies it; nil for unguarded types.
func (r *Resolver) directReadRule(goType reflect.Type) func(context.Context, any) (bool, error) {
	rule := readRules[goType]
	if rule == nil {
		return nil
	}
	return func(ctx context.Context, obj any) (bool, error) {
		return r.viewer(ctx).decide(rule, obj)
	}
}

// Schema is the parsed schema, for what needs no resolvers: the REST route
// table's documentation and OpenAPI document, tests.
func Schema() *ast.Schema { return generated.NewExecutableSchema(generated.Config{}).Schema() }
