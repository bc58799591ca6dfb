package graph

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestMarkdownToDocument(t *testing.T) {
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
		raw, err := json.Marshal(markdownToDocument(c.markdown))
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
	a, _ := json.Marshal(markdownToDocument("# A\n\nB"))
	b, _ := json.Marshal(markdownToDocument("# A\n\nB"))
	if string(a) != string(b) {
		t.Error("documents differ between two derivations")
	}
}
