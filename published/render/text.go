package render

import (
	"strings"
	"unicode/utf8"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
)

// What other pages show of a page: the id of a heading, to link into it,
// and its text without markup, to quote it (search results).

// AnchorOf is the id Render gives a heading written as heading (its
// markdown after the #s): the id GitBook's empty anchor keeps, else a slug
// of its text. A page with two headings alike suffixes the second (-1),
// which a lone heading cannot know.
func AnchorOf(heading string) string {
	doc, src := parseMarkdown("## " + strings.ReplaceAll(heading, "\n", " "))
	hd := processHeadings(doc, src)
	if len(hd.outline) == 0 {
		return ""
	}
	return hd.outline[0].ID
}

// PlainText is what a reader reads of markdown, without its markup, its
// blocks' tags or its code, in at most max characters (an ellipsis ends
// what was cut).
func PlainText(markdown string, max int) string {
	doc, src := parseMarkdown(markdown)
	var b strings.Builder
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.FencedCodeBlock, *ast.CodeBlock, *ast.HTMLBlock, *ast.RawHTML:
			return ast.WalkSkipChildren, nil
		case *ast.Text:
			b.Write(n.Segment.Value(src))
			b.WriteByte(' ')
		case *ast.String:
			b.Write(n.Value)
		}
		return ast.WalkContinue, nil
	})
	out := strings.Join(strings.Fields(b.String()), " ")
	if utf8.RuneCountInString(out) <= max {
		return out
	}
	runes := []rune(out)[:max]
	if i := strings.LastIndexByte(string(runes), ' '); i > len(string(runes))/2 {
		return string(runes)[:i] + " …"
	}
	return string(runes) + "…"
}

// parseMarkdown parses markdown as Render does, its blocks' tags recognised.
func parseMarkdown(markdown string) (ast.Node, []byte) {
	if len(markdown) > maxInput {
		markdown = markdown[:maxInput]
	}
	sc := scan(markdown)
	pc := parser.NewContext()
	pc.Set(tagsKey, sc.tags)
	doc := engine().Parser().Parse(text.NewReader(sc.src), parser.WithContext(pc))
	normalizeBlocks(doc, sc.src, &stats{blocks: map[string]int{}})
	return doc, sc.src
}
