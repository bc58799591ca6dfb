package document

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestFromMarkdown(t *testing.T) {
	for _, c := range []struct {
		name, markdown string
		want           []string // substrings of the document's JSON
	}{
		{"empty", "", []string{`"nodes":[]`, `"object":"document"`}},
		{"heading and paragraph", "## Title\n\nText", []string{`"type":"heading-2"`, `"type":"paragraph"`, `"text":"Text"`}},
		{"marks", "**b** _i_ `c` ~~s~~", []string{`"type":"bold"`, `"type":"italic"`, `"type":"code"`, `"type":"strikethrough"`}},
		{"link", "[here](https://x.test/a)", []string{`"type":"link"`, `"url":"https://x.test/a"`, `"text":"here"`}},
		{"ordered list", "1. a\n2. b", []string{`"type":"list-ordered"`, `"type":"list-item"`}},
		{"code block", "```sh\necho 1\necho 2\n```", []string{`"syntax":"sh"`, `"type":"code-line"`, `"text":"echo 2"`}},
		{"quote and divider", "> q\n\n---", []string{`"type":"blockquote"`, `"type":"divider"`, `"isVoid":true`}},
		{"table", "| a | b |\n|---|---|\n| 1 | 2 |", []string{`"type":"table"`, `"type":"table-cell"`, `"text":"2"`}},
	} {
		raw, err := json.Marshal(FromMarkdown(c.markdown))
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range c.want {
			if !strings.Contains(string(raw), w) {
				t.Errorf("%s: no %s in %s", c.name, w, raw)
			}
		}
	}
	// The same markdown gives the same document (keys included).
	a, _ := json.Marshal(FromMarkdown("# A\n\nB"))
	b, _ := json.Marshal(FromMarkdown("# A\n\nB"))
	if string(a) != string(b) {
		t.Error("documents differ between two derivations")
	}
}

func TestText(t *testing.T) {
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
		if got := Text(c.doc); got != c.want {
			t.Errorf("Text(%v) = %q, want %q", c.doc, got, c.want)
		}
	}
	// The same document as FromMarkdown makes gives its text back.
	if got := Text(FromMarkdown("Hello *there*\n\nSecond")); got != "Hello there\n\nSecond\n\n" {
		t.Errorf("round trip: %q", got)
	}
}
