package engine

import (
	"fmt"
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2"

	"github.com/docsapi/docsapi/graph/generated"
)

// A document spreading fragments within fragments is walked once per
// fragment: 40 levels of two spreads each would be 2^40 visits otherwise.
func TestFieldsWalkVisitsFragmentsOnce(t *testing.T) {
	var q strings.Builder
	q.WriteString(`{ viewer { ...F0 } }`)
	const levels = 40
	for i := range levels {
		if i == levels-1 {
			q.WriteString(" fragment F39 on User { id }")
			break
		}
		fmt.Fprintf(&q, " fragment F%d on User { ...F%d ...F%d }", i, i+1, i+1)
	}
	schema := generated.NewExecutableSchema(generated.Config{}).Schema()
	doc, errs := gqlparser.LoadQueryWithRules(schema, q.String(), nil)
	if errs != nil {
		t.Fatal(errs)
	}
	w := fieldsWalk{typeName: "Space", allowed: map[string]bool{"id": true}}
	if !w.only(doc.Operations[0].SelectionSet) || len(w.seenOnly) != levels {
		t.Fatalf("walked %d fragments, want %d", len(w.seenOnly), levels)
	}
}
