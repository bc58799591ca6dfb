package graph

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// Projection: reading only the columns an operation shows.
//
// A front end's navigation reads a site's whole tree and, of each space it
// publishes, little more than the title. Whole space rows are 24 columns; a
// site of a thousand spaces spends most of its read in PostgreSQL and pgx
// turning columns nobody asked for into values. So when nothing in the
// operation asks a space for more than its summary (spaceSummaryFields), the
// spaces of site spaces are read as summaries (store.SpaceSummaryColumns).
//
// The decision is made once per operation, from its whole document, and it
// is conservative: a single field of type Space anywhere in the operation
// (whichever parent it hangs from, fragments included) that selects
// something else makes every space of the operation whole. The summary rows
// only ever reach the resolvers of the fields allowed here.

// spaceSummaryFields are the fields of Space that a summary row carries all
// the data of: urls needs the id, icon and visibility.
var spaceSummaryFields = map[string]bool{
	"__typename":   true,
	"object":       true,
	"id":           true,
	"title":        true,
	"emoji":        true,
	"visibility":   true,
	"urls":         true,
	"organization": true,
	"parent":       true,
}

// projectionExtension makes the decision for each operation, before it runs,
// and records it in the operation's context.
type projectionExtension struct{}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
} = projectionExtension{}

const spaceSummariesExtension = "SpaceSummaries"

func (projectionExtension) ExtensionName() string                   { return spaceSummariesExtension }
func (projectionExtension) Validate(graphql.ExecutableSchema) error { return nil }

func (projectionExtension) MutateOperationContext(_ context.Context, rc *graphql.OperationContext) *gqlerror.Error {
	if rc.Operation != nil {
		w := fieldsWalk{typeName: "Space", allowed: spaceSummaryFields}
		rc.Stats.SetExtension(spaceSummariesExtension, w.only(rc.Operation.SelectionSet))
	}
	return nil
}

// spaceSummariesSuffice reports whether the operation of ctx selects nothing
// of its spaces but summary fields. Outside an operation (REST handlers of
// their own, jobs) it is false: whole rows.
func spaceSummariesSuffice(ctx context.Context) bool {
	if !graphql.HasOperationContext(ctx) {
		return false
	}
	ok, _ := graphql.GetOperationContext(ctx).Stats.GetExtension(spaceSummariesExtension).(bool)
	return ok
}

// fieldsWalk checks that every field of type typeName in a selection set,
// at any depth, selects only allowed fields directly below it.
type fieldsWalk struct {
	typeName string
	allowed  map[string]bool
	// The fragments already walked by only and by allowedBelow: a fragment
	// spread many times is checked once (its answer is the same everywhere),
	// so a document nesting spreads cannot make the walk exponential.
	seenOnly, seenAllowed map[*ast.FragmentDefinition]bool
}

func (w *fieldsWalk) only(sel ast.SelectionSet) bool {
	return everyField(sel, &w.seenOnly, func(f *ast.Field) bool {
		if f.Definition != nil && f.Definition.Type.Name() == w.typeName && !w.allowedBelow(f.SelectionSet) {
			return false
		}
		return w.only(f.SelectionSet)
	})
}

// allowedBelow reports whether the fields of sel (an object of typeName's
// selection), fragments included, are all allowed.
func (w *fieldsWalk) allowedBelow(sel ast.SelectionSet) bool {
	return everyField(sel, &w.seenAllowed, func(f *ast.Field) bool { return w.allowed[f.Name] })
}

// everyField reports whether ok holds for every field of sel, those of its
// inline fragments and fragments included. A fragment in seen is not walked
// again (a walk that stops at the first false has found it true); a spread
// without its definition (which validation rejects) fails.
func everyField(sel ast.SelectionSet, seen *map[*ast.FragmentDefinition]bool, ok func(*ast.Field) bool) bool {
	for _, s := range sel {
		switch s := s.(type) {
		case *ast.Field:
			if !ok(s) {
				return false
			}
		case *ast.InlineFragment:
			if !everyField(s.SelectionSet, seen, ok) {
				return false
			}
		case *ast.FragmentSpread:
			if s.Definition == nil {
				return false
			}
			if (*seen)[s.Definition] {
				continue
			}
			if *seen == nil {
				*seen = map[*ast.FragmentDefinition]bool{}
			}
			(*seen)[s.Definition] = true
			if !everyField(s.Definition.SelectionSet, seen, ok) {
				return false
			}
		}
	}
	return true
}
