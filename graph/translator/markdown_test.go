package translator

import (
	"strings"
	"testing"
)

// upper "translates" by upper-casing: whatever changed case was translated.
func upper(segs []Segment) []string {
	out := make([]string, len(segs))
	for i, s := range segs {
		out[i] = strings.ToUpper(s.Text)
	}
	return out
}

func TestTranslationKeepsMarkdownStructure(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"heading and paragraph", "# Getting started\n\nInstall the tool.\n", "# GETTING STARTED\n\nINSTALL THE TOOL.\n"},
		{"wrapped sentence is one segment", "A sentence that\nwraps over lines.\n", "A SENTENCE THAT\nWRAPS OVER LINES.\n"},
		{"inline code", "Run `make build` now.\n", "RUN `make build` NOW.\n"},
		{"link target", "See [the guide](https://example.com/guide) here.\n", "SEE [THE GUIDE](https://example.com/guide) HERE.\n"},
		{"code block", "Text.\n\n```go\nfunc main() {}\n```\n", "TEXT.\n\n```go\nfunc main() {}\n```\n"},
		{"indented code", "Text.\n\n    keep me\n", "TEXT.\n\n    keep me\n"},
		{"front matter", "---\ntitle: keep\n---\nBody text.\n", "---\ntitle: keep\n---\nBODY TEXT.\n"},
		{"emphasis", "Some *very* important text.\n", "SOME *VERY* IMPORTANT TEXT.\n"},
		{"list and quote", "- first item\n- second item\n\n> quoted words\n", "- FIRST ITEM\n- SECOND ITEM\n\n> QUOTED WORDS\n"},
		{"autolink and html", "Mail <https://x.test/a> and <b>bold</b>.\n", "MAIL <https://x.test/a> AND <b>BOLD</b>.\n"},
		{"table", "| name | value |\n|---|---|\n| left | right |\n", "| NAME | VALUE |\n|---|---|\n| LEFT | RIGHT |\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			segs := Segments(tc.in)
			if got := Apply(tc.in, segs, upper(segs)); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestWords(t *testing.T) {
	if n := Words("one two", " three\nfour "); n != 4 {
		t.Errorf("Words = %d, want 4", n)
	}
}
