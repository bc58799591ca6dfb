package graph

import (
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"
)

func TestSelectionDepth(t *testing.T) {
	for _, tc := range []struct {
		query string
		depth int
	}{
		{"{ a }", 1},
		{"{ a { b { c } } d }", 3},
		{"{ a { ...F } } fragment F on T { b { c { d } } }", 4},
		{"{ a { ... on T { b { c } } } }", 3},
		{"{ __schema { types { fields { type { ofType { ofType { name } } } } } } a }", 1},
		{"{ " + strings.Repeat("a { ", 20) + "b" + strings.Repeat(" }", 20) + " }", 21},
	} {
		doc, err := parser.ParseQuery(&ast.Source{Input: tc.query})
		if err != nil {
			t.Fatal(err)
		}
		if got := selectionDepth(doc.Operations[0].SelectionSet, doc.Fragments, 0); got != tc.depth {
			t.Errorf("%s: depth %d, want %d", tc.query, got, tc.depth)
		}
	}
}
