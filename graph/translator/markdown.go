package translator

import (
	"slices"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/text"
)

// Segment is a run of prose in a markdown source: the bytes [Start, Stop)
// that a translation replaces. Everything outside the segments (syntax,
// code blocks, inline code, link and image targets, raw HTML, autolinks,
// front matter) is kept byte for byte.
type Segment struct {
	Start, Stop int
	Text        string
}

var parser = goldmark.New(goldmark.WithExtensions(extension.Table, extension.Strikethrough)).Parser()

// Segments finds the prose of markdown. Text runs of one block separated
// only by line breaks make one segment, so a sentence wrapped over lines is
// translated whole.
func Segments(markdown string) []Segment {
	src := []byte(markdown)
	offset := frontMatterEnd(markdown)
	body := src[offset:]
	doc := parser.Parse(text.NewReader(body))
	var out []Segment
	var lastParent ast.Node
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n.Kind() {
		case ast.KindCodeBlock, ast.KindFencedCodeBlock, ast.KindHTMLBlock,
			ast.KindCodeSpan, ast.KindRawHTML, ast.KindAutoLink:
			return ast.WalkSkipChildren, nil
		case ast.KindText:
			seg := n.(*ast.Text).Segment
			start, stop := offset+seg.Start, offset+seg.Stop
			if strings.TrimSpace(markdown[start:stop]) == "" {
				return ast.WalkContinue, nil
			}
			if k := len(out) - 1; k >= 0 && lastParent == n.Parent() && isSpace(markdown[out[k].Stop:start]) {
				out[k].Stop = stop
				out[k].Text = markdown[out[k].Start:stop]
				return ast.WalkContinue, nil
			}
			out = append(out, Segment{Start: start, Stop: stop, Text: markdown[start:stop]})
			lastParent = n.Parent()
		}
		return ast.WalkContinue, nil
	})
	return out
}

// Apply replaces each segment of markdown with its translation, keeping the
// segment's leading and trailing spaces.
func Apply(markdown string, segs []Segment, translated []string) string {
	order := make([]int, len(segs))
	for i := range order {
		order[i] = i
	}
	// From the end, so earlier offsets stay valid.
	slices.SortFunc(order, func(a, b int) int { return segs[b].Start - segs[a].Start })
	out := markdown
	for _, i := range order {
		s := segs[i]
		lead := s.Text[:len(s.Text)-len(strings.TrimLeft(s.Text, " \t\n"))]
		trail := s.Text[len(strings.TrimRight(s.Text, " \t\n")):]
		out = out[:s.Start] + lead + strings.TrimSpace(translated[i]) + trail + out[s.Stop:]
	}
	return out
}

// frontMatterEnd is the offset just past a leading YAML front matter block
// (--- ... ---), or 0.
func frontMatterEnd(markdown string) int {
	if !strings.HasPrefix(markdown, "---\n") {
		return 0
	}
	if i := strings.Index(markdown[4:], "\n---\n"); i >= 0 {
		return 4 + i + len("\n---\n")
	}
	if strings.HasSuffix(markdown, "\n---") {
		return len(markdown)
	}
	return 0
}

func isSpace(s string) bool { return strings.TrimSpace(s) == "" }

// Words counts the words of texts.
func Words(texts ...string) int {
	n := 0
	for _, t := range texts {
		n += len(strings.Fields(t))
	}
	return n
}
