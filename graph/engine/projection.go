package engine

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// Projection: reading only the columns an operation shows.
//
// A front end's navigation reads a site's whole tree and, of each space it
// publishes, little more than the title. Whole rows of such a type are many
// columns; reading a thousand of them spends most of the request in
// PostgreSQL and pgx turning columns nobody asked for into values. So the
// resolvers may declare a Summary of a type (the fields a summary row
// carries all the data of), and read summaries when SummariesSuffice.
//
// The decision is made once per operation, from its whole document, and it
// is conservative: a single field of the type anywhere in the operation
// (whichever parent it hangs from, fragments included) that selects
// something else makes every object of the type whole. The summary rows
// only ever reach the resolvers of the fields allowed.

// Summary declares that objects of the GraphQL type Type can be read as
// summaries carrying Fields.
type Summary struct {
	Type   string
	Fields map[string]bool
}

// summariesExtension makes the decisions for each operation, before it
// runs, and records them in the operation's context: whether each type's
// summary suffices, by type name.
type summariesExtension struct{ summaries []Summary }

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
} = summariesExtension{}

// summariesKey is where an operation's context records the decisions. One
// constant key, looked up once per object of a thousand-object tree, where
// a key per type was a string built at every look.
const summariesKey = "Summaries"

func (summariesExtension) ExtensionName() string                   { return summariesKey }
func (summariesExtension) Validate(graphql.ExecutableSchema) error { return nil }

func (e summariesExtension) MutateOperationContext(_ context.Context, rc *graphql.OperationContext) *gqlerror.Error {
	if rc.Operation != nil {
		suffice := make(map[string]bool, len(e.summaries))
		for _, s := range e.summaries {
			suffice[s.Type] = s.Suffices(rc.Operation.SelectionSet)
		}
		rc.Stats.SetExtension(summariesKey, suffice)
	}
	return nil
}

// Suffices reports whether every field of the summary's type in sel, at any
// depth and fragments included, selects only the summary's fields.
func (s Summary) Suffices(sel ast.SelectionSet) bool {
	w := fieldsWalk{typeName: s.Type, allowed: s.Fields}
	return w.only(sel)
}

// SummariesSuffice reports whether the operation of ctx selects nothing of
// the objects of typeName but their Summary's fields. Outside an operation
// (HTTP handlers of their own, jobs) it is false: whole rows.
func SummariesSuffice(ctx context.Context, typeName string) bool {
	if !graphql.HasOperationContext(ctx) {
		return false
	}
	suffice, _ := graphql.GetOperationContext(ctx).Stats.GetExtension(summariesKey).(map[string]bool)
	return suffice[typeName]
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
