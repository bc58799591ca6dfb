package graph

import (
	"context"
	"fmt"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/parser"

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
	// MaxTokens bounds a document's length in tokens (names, punctuation,
	// values): far above any written query (GraphiQL's introspection query
	// is some 500), a bound on the work of parsing.
	MaxTokens = 10_000
	// What a document's validation is bounded by (mergeLimit): pairs of
	// fields to compare, and fields and spreads walked to count them.
	maxMergePairs   = 100_000
	maxMergeVisited = 200_000
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

// mergeLimit rejects, before validation, documents whose validation would
// be costly. GraphQL requires fields of one response name at one place of
// the response to be mergeable, and gqlparser checks it
// (OverlappingFieldsCanBeMerged) by comparing every pair of fields that
// end at the same response path, through fragments and through the
// sub-selections of fields that merge: "viewer { id }" repeated a few
// thousand times, or four levels of a field repeated eight times each,
// took seconds to minutes of CPU here. mergeWalk counts those pairs in a
// walk that stops at maxPairs (about 25 ms of validation) or after
// maxVisited fields and spreads, so the count itself stays cheap whatever
// the document.
type mergeLimit struct {
	maxPairs, maxVisited int
	// parsed is gqlgen's cache of parsed and validated documents: a
	// document in it passed this limit when it was first sent, and is not
	// parsed again.
	parsed graphql.Cache[*ast.QueryDocument]
}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationParameterMutator
} = mergeLimit{}

func (mergeLimit) ExtensionName() string                   { return "MergeLimit" }
func (mergeLimit) Validate(graphql.ExecutableSchema) error { return nil }

// MutateOperationParameters parses a document gqlgen has not yet parsed
// (linear; gqlgen parses it again and reports syntax errors itself) and
// counts its pairs. The REST adapter's own documents are not measured.
func (l mergeLimit) MutateOperationParameters(ctx context.Context, p *graphql.RawParams) *gqlerror.Error {
	if serverDocument(ctx) || p.Query == "" {
		return nil
	}
	if l.parsed != nil {
		if _, ok := l.parsed.Get(ctx, p.Query); ok {
			return nil
		}
	}
	doc, err := parser.ParseQueryWithTokenLimit(&ast.Source{Input: p.Query}, MaxTokens)
	if err != nil {
		return nil
	}
	w := mergeWalk{fragments: doc.Fragments, maxPairs: l.maxPairs, maxVisited: l.maxVisited}
	for _, op := range doc.Operations {
		if !w.merge([]ast.SelectionSet{op.SelectionSet}) {
			e := gqlerror.Errorf("the operation repeats fields at the same place of the response too often (more than %d pairs of them to check), or is too large to check", l.maxPairs)
			e.Extensions = map[string]any{"code": "COMPLEXITY_LIMIT_EXCEEDED"}
			return e
		}
	}
	return nil
}

// mergeWalk counts the pairs of fields that validation compares: fields of
// the same response name merged at the same path.
type mergeWalk struct {
	fragments            ast.FragmentDefinitionList
	pairs, visited       int
	maxPairs, maxVisited int
	// expanding are the fragments being expanded: a cycle (which validation
	// rejects) is not followed.
	expanding map[string]bool
}

// merge adds the pairs of the selection sets merged at one path, then of
// each response name's merged sub-selections; false once a limit is passed.
func (w *mergeWalk) merge(sets []ast.SelectionSet) bool {
	counts := map[string]int{}
	subs := map[string][]ast.SelectionSet{}
	var add func(set ast.SelectionSet) bool
	add = func(set ast.SelectionSet) bool {
		for _, sel := range set {
			if w.visited++; w.visited > w.maxVisited {
				return false
			}
			switch s := sel.(type) {
			case *ast.Field:
				name := s.Alias
				if name == "" {
					name = s.Name
				}
				// The k-th field of a name makes k-1 new pairs.
				w.pairs += counts[name]
				counts[name]++
				if w.pairs > w.maxPairs {
					return false
				}
				if len(s.SelectionSet) > 0 {
					subs[name] = append(subs[name], s.SelectionSet)
				}
			case *ast.InlineFragment:
				if !add(s.SelectionSet) {
					return false
				}
			case *ast.FragmentSpread:
				f := w.fragments.ForName(s.Name)
				if f == nil || w.expanding[s.Name] {
					continue
				}
				if w.expanding == nil {
					w.expanding = map[string]bool{}
				}
				w.expanding[s.Name] = true
				ok := add(f.SelectionSet)
				delete(w.expanding, s.Name)
				if !ok {
					return false
				}
			}
		}
		return true
	}
	for _, set := range sets {
		if !add(set) {
			return false
		}
	}
	for _, list := range subs {
		if !w.merge(list) {
			return false
		}
	}
	return true
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
