// Package document derives the JSON document of a page from its markdown,
// and the text of a JSON document. Markdown is the stored form of a page;
// the JSON document GitBook's API serves ({object: document, data, nodes:
// [Block]}) is derived from it with goldmark, block by block, with inline
// text as leaves carrying marks. Keys are numbered in document order, so
// reading a page twice gives the same document.
package document

import (
	"strconv"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	extast "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/text"
)

// markdownParser is the parser of ParseMarkdown.
var markdownParser = goldmark.New(goldmark.WithExtensions(extension.Table, extension.Strikethrough)).Parser()

// ParseMarkdown parses source as pages are written: CommonMark with
// GitHub's tables and strikethrough.
func ParseMarkdown(source []byte) ast.Node {
	return markdownParser.Parse(text.NewReader(source))
}

// schemaVersion is data.schemaVersion of the documents served.
const schemaVersion = 1

// FromMarkdown derives the JSON document of markdown.
func FromMarkdown(markdown string) map[string]any {
	source := []byte(markdown)
	root := ParseMarkdown(source)
	c := &docConverter{source: source}
	return map[string]any{
		"object": "document",
		"data":   map[string]any{"schemaVersion": schemaVersion},
		"nodes":  c.blocks(root),
	}
}

type docConverter struct {
	source []byte
	keys   int
}

func (c *docConverter) key() string {
	c.keys++
	return "k" + strconv.Itoa(c.keys)
}

func (c *docConverter) block(typ string, data map[string]any, nodes []any) map[string]any {
	if data == nil {
		data = map[string]any{}
	}
	if nodes == nil {
		nodes = []any{}
	}
	return map[string]any{"object": "block", "type": typ, "key": c.key(), "isVoid": false, "data": data, "nodes": nodes}
}

// blocks converts the block children of n.
func (c *docConverter) blocks(n ast.Node) []any {
	out := []any{}
	for child := n.FirstChild(); child != nil; child = child.NextSibling() {
		if b := c.blockOf(child); b != nil {
			out = append(out, b)
		}
	}
	return out
}

func (c *docConverter) blockOf(n ast.Node) map[string]any {
	switch n := n.(type) {
	case *ast.Paragraph, *ast.TextBlock:
		return c.block("paragraph", map[string]any{"align": "start"}, c.inlines(n, nil))
	case *ast.Heading:
		level := min(n.Level, 3)
		return c.block("heading-"+strconv.Itoa(level), nil, c.inlines(n, nil))
	case *ast.List:
		typ := "list-unordered"
		if n.IsOrdered() {
			typ = "list-ordered"
		}
		return c.block(typ, nil, c.blocks(n))
	case *ast.ListItem:
		return c.block("list-item", nil, c.blocks(n))
	case *ast.Blockquote:
		return c.block("blockquote", nil, c.blocks(n))
	case *ast.FencedCodeBlock, *ast.CodeBlock:
		var syntax string
		if f, ok := n.(*ast.FencedCodeBlock); ok && f.Info != nil {
			syntax = strings.Fields(string(f.Info.Segment.Value(c.source)) + " ")[0]
		}
		lines := n.Lines()
		nodes := []any{}
		for i := range lines.Len() {
			seg := lines.At(i)
			line := strings.TrimRight(string(seg.Value(c.source)), "\n")
			nodes = append(nodes, c.block("code-line", nil, []any{textNode(line, nil)}))
		}
		data := map[string]any{}
		if syntax != "" {
			data["syntax"] = syntax
		}
		return c.block("code", data, nodes)
	case *ast.ThematicBreak:
		b := c.block("divider", nil, []any{textNode("", nil)})
		b["isVoid"] = true
		return b
	case *ast.HTMLBlock:
		var sb strings.Builder
		lines := n.Lines()
		for i := range lines.Len() {
			seg := lines.At(i)
			sb.Write(seg.Value(c.source))
		}
		return c.block("paragraph", map[string]any{"align": "start"}, []any{textNode(strings.TrimRight(sb.String(), "\n"), nil)})
	case *extast.Table:
		return c.block("table", nil, c.blocks(n))
	case *extast.TableHeader, *extast.TableRow:
		return c.block("table-row", nil, c.blocks(n))
	case *extast.TableCell:
		return c.block("table-cell", nil, []any{c.block("paragraph", map[string]any{"align": "start"}, c.inlines(n, nil))})
	}
	return nil
}

// inlines converts the inline children of n, with marks in force.
func (c *docConverter) inlines(n ast.Node, marks []string) []any {
	out := []any{}
	for child := n.FirstChild(); child != nil; child = child.NextSibling() {
		switch child := child.(type) {
		case *ast.Text:
			s := string(child.Segment.Value(c.source))
			if child.SoftLineBreak() || child.HardLineBreak() {
				s += "\n"
			}
			out = append(out, textNode(s, marks))
		case *ast.String:
			out = append(out, textNode(string(child.Value), marks))
		case *ast.CodeSpan:
			out = append(out, c.inlines(child, append(slicesClone(marks), "code"))...)
		case *ast.Emphasis:
			mark := "italic"
			if child.Level == 2 {
				mark = "bold"
			}
			out = append(out, c.inlines(child, append(slicesClone(marks), mark))...)
		case *extast.Strikethrough:
			out = append(out, c.inlines(child, append(slicesClone(marks), "strikethrough"))...)
		case *ast.Link:
			out = append(out, map[string]any{"object": "inline", "type": "link", "key": c.key(), "isVoid": false,
				"data":  map[string]any{"ref": map[string]any{"kind": "url", "url": string(child.Destination)}},
				"nodes": nonEmpty(c.inlines(child, marks))})
		case *ast.AutoLink:
			url := string(child.URL(c.source))
			out = append(out, map[string]any{"object": "inline", "type": "link", "key": c.key(), "isVoid": false,
				"data": map[string]any{"ref": map[string]any{"kind": "url", "url": url}}, "nodes": []any{textNode(url, marks)}})
		case *ast.Image:
			out = append(out, map[string]any{"object": "inline", "type": "image", "key": c.key(), "isVoid": true,
				"data": map[string]any{"ref": map[string]any{"kind": "url", "url": string(child.Destination)}}, "nodes": []any{textNode("", nil)}})
		case *ast.RawHTML:
			var sb strings.Builder
			for i := range child.Segments.Len() {
				seg := child.Segments.At(i)
				sb.Write(seg.Value(c.source))
			}
			out = append(out, textNode(sb.String(), marks))
		default:
			out = append(out, c.inlines(child, marks)...)
		}
	}
	return nonEmpty(out)
}

// textNode is a run of text with marks.
func textNode(s string, marks []string) map[string]any {
	ms := make([]any, len(marks))
	for i, m := range marks {
		ms[i] = map[string]any{"object": "mark", "type": m, "data": map[string]any{}}
	}
	return map[string]any{"object": "text", "leaves": []any{map[string]any{"object": "leaf", "text": s, "marks": ms}}}
}

// nonEmpty gives an empty block its one empty text, as documents require.
func nonEmpty(nodes []any) []any {
	if len(nodes) == 0 {
		return []any{textNode("", nil)}
	}
	return nodes
}

func slicesClone(s []string) []string { return append([]string(nil), s...) }

// Text is the text of a JSON document: its leaves' text, a blank line
// between blocks. A review's comment becomes a comment's markdown body this
// way; a translation's instructions go to the provider so.
func Text(doc map[string]any) string {
	var b strings.Builder
	var walk func(node any)
	walk = func(node any) {
		n, ok := node.(map[string]any)
		if !ok {
			return
		}
		if n["object"] == "leaf" {
			if s, ok := n["text"].(string); ok {
				b.WriteString(s)
			}
			return
		}
		if s, ok := n["text"].(string); ok && n["object"] == "text" {
			b.WriteString(s)
		}
		for _, key := range []string{"leaves", "nodes"} {
			children, _ := n[key].([]any)
			for _, c := range children {
				walk(c)
			}
		}
		if n["object"] == "block" && !strings.HasSuffix(b.String(), "\n\n") && b.Len() > 0 {
			b.WriteString("\n\n")
		}
	}
	walk(doc)
	return b.String()
}
