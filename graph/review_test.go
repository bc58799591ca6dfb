package graph

import "testing"

func TestDocumentText(t *testing.T) {
	leaf := func(s string) map[string]any {
		return map[string]any{"object": "text", "leaves": []any{map[string]any{"object": "leaf", "text": s, "marks": []any{}}}}
	}
	block := func(nodes ...any) map[string]any {
		return map[string]any{"object": "block", "type": "paragraph", "nodes": nodes}
	}
	for _, c := range []struct {
		doc  map[string]any
		want string
	}{
		{map[string]any{"object": "document", "nodes": []any{}}, ""},
		{map[string]any{"object": "document", "nodes": []any{block(leaf("Looks "), leaf("good."))}}, "Looks good.\n\n"},
		{map[string]any{"object": "document", "nodes": []any{block(leaf("One")), block(leaf("Two"))}}, "One\n\nTwo\n\n"},
		{map[string]any{"object": "document", "nodes": []any{block(block(leaf("Nested")), block())}}, "Nested\n\n"},
		{map[string]any{"object": "document", "nodes": []any{"junk", 5, block(map[string]any{"object": "text", "text": "Plain"})}}, "Plain\n\n"},
	} {
		if got := documentText(c.doc); got != c.want {
			t.Errorf("documentText(%v) = %q, want %q", c.doc, got, c.want)
		}
	}
	// The same document as markdownToDocument makes gives its text back.
	if got := documentText(markdownToDocument("Hello *there*\n\nSecond")); got != "Hello there\n\nSecond\n\n" {
		t.Errorf("round trip: %q", got)
	}
}
