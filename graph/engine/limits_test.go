package engine

import (
	"fmt"
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"
)

func TestSelectionShape(t *testing.T) {
	for _, tc := range []struct {
		query         string
		depth, fields int
	}{
		{"{ a }", 1, 1},
		{"{ a { b { c } } d }", 3, 4},
		{"{ a { ...F } } fragment F on T { b { c { d } } }", 4, 4},
		{"{ a { ...F ...F } b { ...F } } fragment F on T { c d }", 2, 8},
		{"{ a { ... on T { b { c } } } }", 3, 3},
		{"{ __schema { types { fields { type { ofType { ofType { name } } } } } } a }", 1, 8},
		{"{ " + strings.Repeat("a { ", 20) + "b" + strings.Repeat(" }", 20) + " }", 21, 21},
	} {
		doc, err := parser.ParseQuery(&ast.Source{Input: tc.query})
		if err != nil {
			t.Fatal(err)
		}
		w := shapeWalk{fragments: doc.Fragments}
		if got := w.measure(doc.Operations[0].SelectionSet); got != (selectionShape{tc.depth, tc.fields}) {
			t.Errorf("%s: %+v, want depth %d and %d fields", tc.query, got, tc.depth, tc.fields)
		}
	}
}

// A document whose fragments each spread the next twice selects 2^n
// fields: measured in a walk linear in the document, saturating rather
// than overflowing.
func TestSelectionShapeOfFragmentBomb(t *testing.T) {
	const levels = 80
	var q strings.Builder
	q.WriteString("{ a { ...F0 } }")
	for i := range levels - 1 {
		fmt.Fprintf(&q, " fragment F%d on T { ...F%d ...F%d }", i, i+1, i+1)
	}
	fmt.Fprintf(&q, " fragment F%d on T { b }", levels-1)
	doc, err := parser.ParseQuery(&ast.Source{Input: q.String()})
	if err != nil {
		t.Fatal(err)
	}
	w := shapeWalk{fragments: doc.Fragments}
	if got := w.measure(doc.Operations[0].SelectionSet); got.fields != maxShapeFields || got.depth != 2 {
		t.Fatalf("%+v", got)
	}
}

// The pairs of fields validation compares: fields of one response name
// merged at one path, through inline fragments, fragments and merged
// sub-selections.
func TestMergeWalk(t *testing.T) {
	for _, tc := range []struct {
		query string
		pairs int
	}{
		{"{ a b c }", 0},
		{"{ a a a }", 3},
		{"{ x: a x: b }", 1},
		{"{ a { b } a { b c } }", 2},
		{"{ a { b } ... on T { a { b } } }", 2},
		{"{ ...F ...F } fragment F on T { a }", 1},
		{"{ a { ...F } a { ...F } } fragment F on T { b { c } }", 3},
		{"{ ...F } fragment F on T { a ...F }", 0}, // a cycle, which validation rejects, is not followed
	} {
		doc, err := parser.ParseQuery(&ast.Source{Input: tc.query})
		if err != nil {
			t.Fatal(err)
		}
		w := mergeWalk{fragments: doc.Fragments, maxPairs: 1000, maxVisited: 1000}
		if !w.merge([]ast.SelectionSet{doc.Operations[0].SelectionSet}) || w.pairs != tc.pairs {
			t.Errorf("%s: %d pairs, want %d", tc.query, w.pairs, tc.pairs)
		}
	}
	// A fragment bomb of distinct names has no pairs: the walk stops at its
	// bound on fields visited, not after 2^40 of them.
	var q strings.Builder
	q.WriteString("{ ...F0 }")
	for i := range 39 {
		fmt.Fprintf(&q, " fragment F%d on T { ...F%d ...F%d }", i, i+1, i+1)
	}
	q.WriteString(" fragment F39 on T { a }")
	doc, err := parser.ParseQuery(&ast.Source{Input: q.String()})
	if err != nil {
		t.Fatal(err)
	}
	w := mergeWalk{fragments: doc.Fragments, maxPairs: 1 << 30, maxVisited: 10_000}
	if w.merge([]ast.SelectionSet{doc.Operations[0].SelectionSet}) || w.visited != 10_001 {
		t.Fatalf("the walk of a bomb stopped after %d visits", w.visited)
	}
}
