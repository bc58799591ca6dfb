package render

import (
	"strings"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// This file reads GitBook's {% tag %} syntax and turns tags into goldmark
// nodes. A tag with an end tag ({% hint %} … {% endhint %}) becomes a
// container block whose children goldmark parses like any markdown, so
// blocks nest arbitrarily and code fences inside them stay code. A tag
// without one ({% embed url="…" %}, {% include "…" %}) becomes a leaf.

// tag is one {% … %} as written.
type tag struct {
	name  string            // "hint", "content-ref", "@mermaid/diagram"; for an end tag, the name it closes
	end   bool              // {% endNAME %}
	expr  bool              // an expression such as {% vars.support_email %}, shown inline
	attrs map[string]string // key="value" pairs
	args  []string          // other words and quoted strings: {% include "x.md" %}
}

func (t tag) attr(key string) string { return t.attrs[key] }

// knownTags are the tags GitBook writes, with what this package makes of
// them. Anything else is rendered generically and counted in
// Result.Unknown.
var knownTags = map[string]bool{
	"hint": true, "tabs": true, "tab": true, "stepper": true, "step": true,
	"code": true, "embed": true, "content-ref": true, "file": true,
	"include": true, "columns": true, "column": true, "updates": true,
	"update": true, "if": true, "prompt": true,
	"swagger": true, "swagger-description": true, "swagger-parameter": true,
	"swagger-response": true, "openapi": true, "openapi-schemas": true,
	"openapi-operation": true, "openapi-webhook": true,
}

func isKnown(name string) bool {
	// {% @mermaid/diagram … %} and the like are integration blocks.
	return knownTags[name] || strings.HasPrefix(name, "@")
}

// parseTag reads a tag at the start of s ("{% name attrs %}") and returns
// it with its length in bytes. A tag does not span lines.
func parseTag(s string) (t tag, n int, ok bool) {
	if !strings.HasPrefix(s, "{%") {
		return t, 0, false
	}
	if nl := strings.IndexByte(s, '\n'); nl >= 0 {
		s = s[:nl]
	}
	end := strings.Index(s[2:], "%}")
	if end < 0 {
		return t, 0, false
	}
	n = end + 4
	body := strings.TrimSpace(s[2 : end+2])
	// Liquid's whitespace control: {%- … -%}.
	body = strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(body, "-"), "-"))

	name, rest := body, ""
	if i := strings.IndexAny(body, " \t"); i >= 0 {
		name, rest = body[:i], body[i+1:]
	}
	if len(name) > 3 && strings.HasPrefix(name, "end") {
		t.end, name = true, name[3:]
	}
	t.name = name
	t.expr = !t.end && strings.Contains(name, ".") && !strings.HasPrefix(name, "@") && !knownTags[name]
	t.attrs, t.args = parseAttrs(rest)
	return t, n, true
}

// parseAttrs reads key="value" pairs (quotes may be ", ' or the curly ones
// editors put in), bare words and quoted strings.
func parseAttrs(s string) (map[string]string, []string) {
	var attrs map[string]string
	var args []string
	for i := 0; i < len(s); {
		if s[i] == ' ' || s[i] == '\t' {
			i++
			continue
		}
		if v, n, ok := quoted(s[i:]); ok {
			args = append(args, v)
			i += n
			continue
		}
		j := i
		for j < len(s) && s[j] != ' ' && s[j] != '\t' && s[j] != '=' {
			j++
		}
		word := s[i:j]
		k := j
		for k < len(s) && (s[k] == ' ' || s[k] == '\t') {
			k++
		}
		if k < len(s) && s[k] == '=' && word != "" {
			k++
			for k < len(s) && (s[k] == ' ' || s[k] == '\t') {
				k++
			}
			v, n, ok := quoted(s[k:])
			if !ok {
				n = strings.IndexAny(s[k:], " \t")
				if n < 0 {
					n = len(s) - k
				}
				v = s[k : k+n]
			}
			if attrs == nil {
				attrs = map[string]string{}
			}
			attrs[word] = v
			i = k + n
			continue
		}
		if word != "" {
			args = append(args, word)
		}
		i = max(j, i+1)
	}
	return attrs, args
}

// quoted reads a quoted string at the start of s.
func quoted(s string) (v string, n int, ok bool) {
	for _, q := range [...][2]string{{`"`, `"`}, {`'`, `'`}, {"\u201c", "\u201d"}} {
		if !strings.HasPrefix(s, q[0]) {
			continue
		}
		rest := s[len(q[0]):]
		end := strings.Index(rest, q[1])
		if q[0] == `"` {
			// A value opened with " and closed with ” (seen in real pages).
			if e := strings.Index(rest, "\u201d"); e >= 0 && (end < 0 || e < end) {
				return rest[:e], len(q[0]) + e + len("\u201d"), true
			}
		}
		if end < 0 {
			return rest, len(s), true
		}
		return rest[:end], len(q[0]) + end + len(q[1]), true
	}
	return "", 0, false
}

// tagBlock is a block made of a tag: a container when the tag has an end
// tag, else a leaf. A stray end tag (one with no open block) is a tagBlock
// too, which renders nothing.
type tagBlock struct {
	ast.BaseBlock
	tag    tag
	paired bool
	stray  bool
}

var kindTagBlock = ast.NewNodeKind("GitBookBlock")

func (n *tagBlock) Kind() ast.NodeKind { return kindTagBlock }

func (n *tagBlock) Dump(source []byte, level int) {
	ast.DumpHelper(n, source, level, map[string]string{"Name": n.tag.name}, nil)
}

func newTagBlock(t tag, paired bool) *tagBlock { return &tagBlock{tag: t, paired: paired} }

// isTag reports whether n is a tag block named name.
func isTag(n ast.Node, name string) bool {
	tb, ok := n.(*tagBlock)
	return ok && !tb.stray && tb.tag.name == name
}

// tagInline is a tag inside a paragraph: an expression, or a tag the scan
// could not put on its own line (it never shows as raw text).
type tagInline struct {
	ast.BaseInline
	tag tag
}

var kindTagInline = ast.NewNodeKind("GitBookTag")

func (n *tagInline) Kind() ast.NodeKind { return kindTagInline }

func (n *tagInline) Dump(source []byte, level int) {
	ast.DumpHelper(n, source, level, map[string]string{"Name": n.tag.name}, nil)
}

var tagsKey = parser.NewContextKey()

// tagBlockParser opens tag blocks and closes them on their end tag.
type tagBlockParser struct{}

func (tagBlockParser) Trigger() []byte { return []byte{'{'} }

func (tagBlockParser) Open(parent ast.Node, reader text.Reader, pc parser.Context) (ast.Node, parser.State) {
	line, seg := reader.PeekLine()
	w, pos := util.IndentWidth(line, reader.LineOffset())
	if w > 3 || pos >= len(line) {
		return nil, parser.NoChildren
	}
	t, n, ok := parseTag(string(line[pos:]))
	if !ok || t.expr {
		return nil, parser.NoChildren
	}
	if t.end {
		// Its block, if any, has been closed already (it ended a list item
		// the block was in, say): the tag itself shows nothing.
		reader.AdvanceToEOL()
		return &tagBlock{tag: t, stray: true}, parser.NoChildren
	}
	var info tagInfo
	if tags, _ := pc.Get(tagsKey).(map[int]tagInfo); tags != nil {
		info = tags[seg.Start+pos-seg.Padding]
	}
	if !info.paired || tooDeep(parent) {
		reader.AdvanceToEOL()
		return newTagBlock(t, false), parser.NoChildren
	}
	if rest := line[pos+n:]; util.IsBlank(rest) {
		reader.AdvanceToEOL()
	} else {
		reader.Advance(pos + n)
	}
	return newTagBlock(t, true), parser.HasChildren
}

// maxDepth bounds the nesting of blocks: real pages nest a few levels, and
// every open block costs work on every line, so a page nesting thousands
// would render slowly. Deeper tags become leaves (their content joins the
// enclosing block).
const maxDepth = 32

func tooDeep(parent ast.Node) bool {
	depth, ancestors := 0, 0
	for p := parent; p != nil; p = p.Parent() {
		if _, ok := p.(*tagBlock); ok {
			depth++
		}
		if ancestors++; depth >= maxDepth || ancestors > 8*maxDepth {
			return true
		}
	}
	return false
}

func (tagBlockParser) Continue(node ast.Node, reader text.Reader, pc parser.Context) parser.State {
	n := node.(*tagBlock)
	if !n.paired {
		return parser.Close
	}
	line, seg := reader.PeekLine()
	w, pos := util.IndentWidth(line, reader.LineOffset())
	if w <= 3 && pos < len(line) && line[pos] == '{' {
		if t, _, ok := parseTag(string(line[pos:])); ok && t.end && t.name == n.tag.name && closingBlock(t.name, seg.Start, pc) == node {
			reader.AdvanceToEOL()
			return parser.Close
		}
	}
	return parser.Continue | parser.HasChildren
}

// closing remembers, for the line being read, which block its end tag
// closes: every open block asks, and a page of deeply nested blocks must
// not make each of them scan all the others.
type closing struct {
	line int
	node ast.Node
}

var closingKey = parser.NewContextKey()

// closingBlock returns the block an end tag named name on the line at
// offset line closes: the innermost open block of that name, unless the
// innermost open block is code or raw HTML running to an explicit end,
// where the tag is literal text.
func closingBlock(name string, line int, pc parser.Context) ast.Node {
	if c, ok := pc.Get(closingKey).(*closing); ok && c.line == line {
		return c.node
	}
	c := &closing{line: line}
	opened := pc.OpenedBlocks()
	if len(opened) > 0 {
		switch d := opened[len(opened)-1].Node.(type) {
		case *ast.FencedCodeBlock:
			pc.Set(closingKey, c)
			return nil
		case *ast.HTMLBlock:
			if d.HTMLBlockType <= ast.HTMLBlockType5 {
				pc.Set(closingKey, c)
				return nil
			}
		}
	}
	for i := len(opened) - 1; i >= 0; i-- {
		if tb, ok := opened[i].Node.(*tagBlock); ok && tb.paired && tb.tag.name == name {
			c.node = tb
			break
		}
	}
	pc.Set(closingKey, c)
	return c.node
}

func (tagBlockParser) Close(node ast.Node, reader text.Reader, pc parser.Context) {}
func (tagBlockParser) CanInterruptParagraph() bool                                { return true }
func (tagBlockParser) CanAcceptIndentedLine() bool                                { return false }

// tagInlineParser turns a tag left inside a paragraph into a node, so that
// it never shows as raw text.
type tagInlineParser struct{}

func (tagInlineParser) Trigger() []byte { return []byte{'{'} }

func (tagInlineParser) Parse(parent ast.Node, block text.Reader, pc parser.Context) ast.Node {
	line, _ := block.PeekLine()
	t, n, ok := parseTag(string(line))
	if !ok {
		return nil
	}
	block.Advance(n)
	return &tagInline{tag: t}
}

// normalizeBlocks makes the tree of tag blocks render as valid HTML and
// counts what it holds: steps outside a stepper and tabs outside tabs get
// a parent, and content between the steps of a stepper joins a step (an
// <ol> may hold only <li>).
func normalizeBlocks(doc ast.Node, source []byte, st *stats) {
	var blocks []*tagBlock
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch t := n.(type) {
		case *tagBlock:
			blocks = append(blocks, t)
			if !isKnown(t.tag.name) {
				st.unknown = append(st.unknown, t.tag.name)
			} else if !t.stray {
				st.blocks[t.tag.name]++
			}
		case *tagInline:
			if !t.tag.expr && !isKnown(t.tag.name) {
				st.unknown = append(st.unknown, t.tag.name)
			}
		}
		return ast.WalkContinue, nil
	})
	for _, b := range blocks {
		switch {
		case b.tag.name == "step" && !b.stray && !isTag(b.Parent(), "stepper"):
			wrapRun(b, "stepper", "step")
		case b.tag.name == "tab" && !b.stray && !isTag(b.Parent(), "tabs"):
			wrapRun(b, "tabs", "tab")
		case b.tag.name == "stepper" && !b.stray:
			for c := b.FirstChild(); c != nil; {
				next := c.NextSibling()
				if !isTag(c, "step") {
					step, ok := c.PreviousSibling().(*tagBlock)
					if !ok || !isTag(step, "step") {
						step = newTagBlock(tag{name: "step"}, true)
						b.InsertBefore(b, c, step)
					}
					b.RemoveChild(b, c)
					step.AppendChild(step, c)
				}
				c = next
			}
		}
	}
}

// wrapRun puts n and the siblings of the same name that follow it into a
// new parent block named parentName.
func wrapRun(n ast.Node, parentName, name string) {
	if n.Parent() == nil {
		return
	}
	p := n.Parent()
	wrapper := newTagBlock(tag{name: parentName}, true)
	p.InsertBefore(p, n, wrapper)
	for c := ast.Node(n); c != nil && isTag(c, name); {
		next := c.NextSibling()
		p.RemoveChild(p, c)
		wrapper.AppendChild(wrapper, c)
		c = next
	}
}
