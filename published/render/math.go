package render

import (
	"bytes"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// GitBook writes TeX between $$ and $$, as a block on lines of its own or
// inline. The page may run no math library (its CSP allows only its own
// script), so math is shown as preformatted TeX, which readers of technical
// documentation can read, rather than as markdown mangled by emphasis.

type mathBlock struct {
	ast.BaseBlock
	closed bool // its closing $$ has been read
}

var kindMathBlock = ast.NewNodeKind("MathBlock")

func (n *mathBlock) Kind() ast.NodeKind { return kindMathBlock }
func (n *mathBlock) IsRaw() bool        { return true }
func (n *mathBlock) Dump(source []byte, level int) {
	ast.DumpHelper(n, source, level, nil, nil)
}

// mathBlockParser reads "$$" … "$$" blocks, and "$$…$$" alone on a line.
type mathBlockParser struct{}

func (mathBlockParser) Trigger() []byte { return []byte{'$'} }

func (mathBlockParser) Open(parent ast.Node, reader text.Reader, pc parser.Context) (ast.Node, parser.State) {
	line, seg := reader.PeekLine()
	w, pos := util.IndentWidth(line, reader.LineOffset())
	if w > 3 {
		return nil, parser.NoChildren
	}
	body := util.TrimRightSpace(line[pos:])
	if !bytes.HasPrefix(body, []byte("$$")) {
		return nil, parser.NoChildren
	}
	node := &mathBlock{}
	start := seg.Start + pos - seg.Padding + 2
	if len(body) > 4 && bytes.HasSuffix(body, []byte("$$")) {
		// One line: "$$ x $$".
		node.Lines().Append(text.NewSegment(start, start+len(body)-4))
		reader.AdvanceToEOL()
		node.closed = true
		return node, parser.NoChildren
	}
	if len(body) != 2 {
		return nil, parser.NoChildren // "$$x" then text: inline math in a paragraph
	}
	reader.AdvanceToEOL()
	return node, parser.NoChildren
}

func (mathBlockParser) Continue(node ast.Node, reader text.Reader, pc parser.Context) parser.State {
	n := node.(*mathBlock)
	if n.closed {
		return parser.Close
	}
	line, seg := reader.PeekLine()
	if line == nil {
		return parser.Close
	}
	body := util.TrimRightSpace(util.TrimLeftSpace(line))
	if bytes.HasSuffix(body, []byte("$$")) {
		if len(body) > 2 {
			// "x $$": the last line holds TeX too.
			i := bytes.LastIndex(line, []byte("$$"))
			node.Lines().Append(text.NewSegment(seg.Start, seg.Start+i))
		}
		reader.AdvanceToEOL()
		n.closed = true
		return parser.Close
	}
	node.Lines().Append(seg)
	reader.AdvanceToEOL()
	return parser.Continue | parser.NoChildren
}

func (mathBlockParser) Close(node ast.Node, reader text.Reader, pc parser.Context) {}
func (mathBlockParser) CanInterruptParagraph() bool                                { return true }
func (mathBlockParser) CanAcceptIndentedLine() bool                                { return false }

type mathInline struct {
	ast.BaseInline
	tex []byte
}

var kindMathInline = ast.NewNodeKind("MathInline")

func (n *mathInline) Kind() ast.NodeKind { return kindMathInline }
func (n *mathInline) Dump(source []byte, level int) {
	ast.DumpHelper(n, source, level, map[string]string{"TeX": string(n.tex)}, nil)
}

// mathInlineParser reads "$$…$$" within a line of text.
type mathInlineParser struct{}

func (mathInlineParser) Trigger() []byte { return []byte{'$'} }

func (mathInlineParser) Parse(parent ast.Node, block text.Reader, pc parser.Context) ast.Node {
	line, _ := block.PeekLine()
	if !bytes.HasPrefix(line, []byte("$$")) {
		return nil
	}
	end := bytes.Index(line[2:], []byte("$$"))
	if end <= 0 {
		return nil
	}
	tex := bytes.TrimSpace(line[2 : 2+end])
	block.Advance(end + 4)
	return &mathInline{tex: append([]byte(nil), tex...)}
}
