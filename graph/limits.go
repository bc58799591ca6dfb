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

// shapeLimit rejects operations whose selections nest deeper than maxDepth,
// or that select more than maxFields fields once their fragments are
// expanded. It runs before gqlgen's complexity limit, whose walk expands
// every fragment spread where it stands: a document of 30 fragments each
// spreading the next twice is a kilobyte, and 2^30 fields to that walk
// (measured here: 24 levels took 1.4 s). This walk measures each fragment
// once, so it is linear in the document, and it stops such a document
// before the complexity walk sees it.
//
// Introspection fields do not count toward the depth: GraphiQL's own
// schema query nests type references a dozen levels deep.
type shapeLimit struct{ maxDepth, maxFields int }

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
} = shapeLimit{}

func (shapeLimit) ExtensionName() string                   { return "ShapeLimit" }
func (shapeLimit) Validate(graphql.ExecutableSchema) error { return nil }
func (l shapeLimit) MutateOperationContext(_ context.Context, op *graphql.OperationContext) *gqlerror.Error {
	if op.Operation == nil {
		return nil
	}
	m := shapeWalk{fragments: op.Doc.Fragments}
	shape := m.measure(op.Operation.SelectionSet)
	if shape.fields > l.maxFields {
		err := gqlerror.Errorf("operation selects more than %d fields once its fragments are expanded, which exceeds the complexity limit", l.maxFields)
		err.Extensions = map[string]any{"code": "COMPLEXITY_LIMIT_EXCEEDED"}
		return err
	}
	if shape.depth > l.maxDepth {
		err := gqlerror.Errorf("operation nests %d levels deep, which exceeds the limit of %d", shape.depth, l.maxDepth)
		err.Extensions = map[string]any{"code": "DEPTH_LIMIT_EXCEEDED"}
		return err
	}
	return nil
}

// selectionShape is how deep a selection set nests and how many fields it
// selects, fragments expanded (saturating at maxShapeFields).
type selectionShape struct{ depth, fields int }

const maxShapeFields = 1 << 40

// shapeWalk measures selection sets, each fragment once.
type shapeWalk struct {
	fragments ast.FragmentDefinitionList
	// measured holds the shapes of the fragments measured so far; a
	// fragment being measured is in it as zero, so a cycle (which
	// validation rejects before this runs) cannot recurse forever.
	measured map[string]selectionShape
}

func (w *shapeWalk) measure(set ast.SelectionSet) selectionShape {
	var out selectionShape
	for _, sel := range set {
		var s selectionShape
		switch sel := sel.(type) {
		case *ast.Field:
			s = w.measure(sel.SelectionSet)
			s.fields++
			if len(sel.Name) < 2 || sel.Name[:2] != "__" {
				s.depth++
			} else {
				s.depth = 0
			}
		case *ast.InlineFragment:
			s = w.measure(sel.SelectionSet)
		case *ast.FragmentSpread:
			s = w.fragment(sel.Name)
		default:
			panic(fmt.Sprintf("unexpected selection %T", sel))
		}
		out.depth = max(out.depth, s.depth)
		out.fields = min(out.fields+s.fields, maxShapeFields)
	}
	return out
}

func (w *shapeWalk) fragment(name string) selectionShape {
	if s, ok := w.measured[name]; ok {
		return s
	}
	f := w.fragments.ForName(name)
	if f == nil {
		return selectionShape{}
	}
	if w.measured == nil {
		w.measured = map[string]selectionShape{}
	}
	w.measured[name] = selectionShape{}
	s := w.measure(f.SelectionSet)
	w.measured[name] = s
	return s
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
