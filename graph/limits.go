package graph

import (
	"context"
	"fmt"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/docsapi/docsapi/graph/generated"
)

// Limits that keep one query from costing the server what thousands of
// ordinary ones do.
const (
	// MaxDepth is how deeply selections may nest. The deepest useful read, a
	// site's groups → children → site spaces → space → its fields, is 8.
	MaxDepth = 15
	// MaxComplexity bounds the estimated number of fields a query resolves:
	// lists count as their page size times their items' fields.
	MaxComplexity = 250_000
	// nestedListEstimate is the assumed size of lists that have no limit
	// argument (a section's site spaces, a group's children).
	nestedListEstimate = 25
)

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
	_ = nestedListEstimate
	c.Query.Organizations = func(child int, _ *string, limit *int) int { return paged(child, limit) }
}

// depthLimit rejects operations whose selections nest deeper than max.
// Introspection fields are not counted: GraphiQL's own schema query nests
// type references a dozen levels deep.
type depthLimit struct{ max int }

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
} = depthLimit{}

func (depthLimit) ExtensionName() string                   { return "DepthLimit" }
func (depthLimit) Validate(graphql.ExecutableSchema) error { return nil }
func (d depthLimit) MutateOperationContext(_ context.Context, op *graphql.OperationContext) *gqlerror.Error {
	if op.Operation == nil {
		return nil
	}
	if depth := selectionDepth(op.Operation.SelectionSet, op.Doc.Fragments, 0); depth > d.max {
		err := gqlerror.Errorf("operation nests %d levels deep, which exceeds the limit of %d", depth, d.max)
		err.Extensions = map[string]any{"code": "DEPTH_LIMIT_EXCEEDED"}
		return err
	}
	return nil
}

// selectionDepth is the depth of set. Fragment cycles are rejected by
// validation before this runs; the visited guard is only a second fence.
func selectionDepth(set ast.SelectionSet, fragments ast.FragmentDefinitionList, seen int) int {
	if seen > 64 {
		return seen
	}
	depth := 0
	for _, sel := range set {
		d := 0
		switch s := sel.(type) {
		case *ast.Field:
			if len(s.Name) > 1 && s.Name[:2] == "__" {
				continue
			}
			d = 1 + selectionDepth(s.SelectionSet, fragments, seen+1)
		case *ast.InlineFragment:
			d = selectionDepth(s.SelectionSet, fragments, seen+1)
		case *ast.FragmentSpread:
			if f := fragments.ForName(s.Name); f != nil {
				d = selectionDepth(f.SelectionSet, fragments, seen+1)
			}
		default:
			panic(fmt.Sprintf("unexpected selection %T", sel))
		}
		depth = max(depth, d)
	}
	return depth
}

// clientLimit applies a limit to the operations clients write, not to the
// REST adapter's own documents (WithServerDocument): those are fixed,
// reviewed with the code, and bounded by their variables' validation (a page
// is at most 1,000 items), so measuring them again on every request (a walk
// of the whole document, the costliest step of a small REST read) buys
// nothing.
type clientLimit struct {
	limit interface {
		graphql.HandlerExtension
		graphql.OperationContextMutator
	}
}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
} = clientLimit{}

func (c clientLimit) ExtensionName() string                     { return c.limit.ExtensionName() }
func (c clientLimit) Validate(s graphql.ExecutableSchema) error { return c.limit.Validate(s) }
func (c clientLimit) MutateOperationContext(ctx context.Context, op *graphql.OperationContext) *gqlerror.Error {
	if serverDocument(ctx) {
		return nil
	}
	return c.limit.MutateOperationContext(ctx, op)
}

type serverDocumentKey struct{}

// WithServerDocument marks ctx as running one of the server's own operation
// documents (the REST adapter's), which the limits on client-written
// operations leave alone.
func WithServerDocument(ctx context.Context) context.Context {
	return context.WithValue(ctx, serverDocumentKey{}, true)
}

func serverDocument(ctx context.Context) bool {
	v, _ := ctx.Value(serverDocumentKey{}).(bool)
	return v
}
