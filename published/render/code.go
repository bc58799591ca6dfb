package render

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/alecthomas/chroma/v2"
	"github.com/alecthomas/chroma/v2/lexers"
	"github.com/alecthomas/chroma/v2/styles"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/util"
)

// Code blocks are highlighted on the server by chroma, with classes rather
// than inline styles (the sanitizer allows no style attribute, and the
// page's theme switches colours through CSS custom properties). Line
// numbers come from a CSS counter, so that copying code never copies them.

const (
	maxHighlightBlock = 128 << 10 // larger blocks are shown plain
	maxHighlightPage  = 512 << 10 // so is code past this much on one page
	plainAttr         = "gb-plain"
)

// limitHighlighting marks the code blocks past the page's budget to be
// shown plain: lexers are regular expressions, and a page must not take
// seconds to render whatever it holds.
func limitHighlighting(doc ast.Node) {
	total := 0
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n.(type) {
		case *ast.FencedCodeBlock, *ast.CodeBlock:
			size := 0
			for i := 0; i < n.Lines().Len(); i++ {
				s := n.Lines().At(i)
				size += s.Len()
			}
			total += size
			if size > maxHighlightBlock || total > maxHighlightPage {
				n.SetAttributeString(plainAttr, true)
			}
			return ast.WalkSkipChildren, nil
		}
		return ast.WalkContinue, nil
	})
}

func (r nodeRenderer) codeBlock(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkSkipChildren, nil
	}
	lang := ""
	if fc, ok := node.(*ast.FencedCodeBlock); ok {
		lang = strings.ToLower(string(fc.Language(source)))
	}
	var code strings.Builder
	for i := 0; i < node.Lines().Len(); i++ {
		s := node.Lines().At(i)
		code.Write(s.Value(source))
	}

	// Inside {% code %} the figure around is written by the block; a bare
	// fence gets a plain wrapper, so that every code block has the same
	// frame (and copy button).
	numbered := false
	parent, inCode := node.Parent().(*tagBlock)
	inCode = inCode && parent.tag.name == "code"
	if inCode {
		numbered = parent.tag.attr("lineNumbers") == "true"
	} else {
		_, _ = w.WriteString(`<div class="gb-code">`)
	}
	_, _ = w.WriteString(`<pre class="gb-pre" tabindex="0"><code>`)
	_, plain := node.AttributeString(plainAttr)
	if plain {
		lang = ""
	}
	highlight(w, code.String(), lang, numbered)
	_, _ = w.WriteString("</code></pre>")
	if !inCode {
		_, _ = w.WriteString("</div>")
	}
	_ = w.WriteByte('\n')
	return ast.WalkSkipChildren, nil
}

// highlight writes code as HTML, highlighted when lang names a lexer.
func highlight(w util.BufWriter, code, lang string, numbered bool) {
	var tokens []chroma.Token
	if lexer := lexerFor(lang); lexer != nil {
		if it, err := chroma.Coalesce(lexer).Tokenise(nil, code); err == nil {
			tokens = it.Tokens()
		}
	}
	if tokens == nil {
		tokens = []chroma.Token{{Type: chroma.Text, Value: code}}
	}
	if !numbered {
		writeTokens(w, tokens)
		return
	}
	for _, line := range chroma.SplitTokensIntoLines(tokens) {
		_, _ = w.WriteString(`<span class="gb-line">`)
		writeTokens(w, line)
		_, _ = w.WriteString("</span>")
	}
}

func lexerFor(lang string) chroma.Lexer {
	if lang == "" {
		return nil
	}
	lang = strings.TrimPrefix(strings.TrimPrefix(lang, "language-"), "lang-")
	return lexers.Get(lang)
}

func writeTokens(w util.BufWriter, tokens []chroma.Token) {
	for _, t := range tokens {
		if cls := tokenClass(t.Type); cls != "" {
			_, _ = w.WriteString(`<span class="hl-` + cls + `">` + esc(t.Value) + "</span>")
		} else {
			_, _ = w.WriteString(esc(t.Value))
		}
	}
}

// tokenClass is chroma's short class of a token type ("k" for keywords),
// falling back to the type's parents.
func tokenClass(t chroma.TokenType) string {
	for t > 0 {
		if cls, ok := chroma.StandardTypes[t]; ok {
			return cls
		}
		t = t.Parent()
	}
	return ""
}

// highlightCSS is the CSS of the classes writeTokens emits: rules using
// custom properties, and those properties for light and dark, from chroma's
// "github" and "github-dark" styles, darkened or lightened where needed to
// reach WCAG AA contrast on the code background (var(--bg-subtle), assumed
// to be near white, or near black in dark mode).
func highlightCSS() (rules, lightVars, darkVars string) {
	light, dark := styles.Get("github"), styles.Get("github-dark")
	lightBgs := []rgb{{0xff, 0xff, 0xff}, {0xf6, 0xf8, 0xfa}, {0xea, 0xee, 0xf2}}
	darkBgs := []rgb{{0x0d, 0x11, 0x17}, {0x16, 0x1b, 0x22}, {0x26, 0x2c, 0x36}}
	lightText, darkText := light.Get(chroma.Text).Colour, dark.Get(chroma.Text).Colour

	types := make([]chroma.TokenType, 0, len(chroma.StandardTypes))
	for t, cls := range chroma.StandardTypes {
		if t > 0 && cls != "" {
			types = append(types, t)
		}
	}
	sort.Slice(types, func(i, j int) bool { return types[i] < types[j] })

	var r, lv, dv strings.Builder
	for _, t := range types {
		cls := chroma.StandardTypes[t]
		le, de := light.Get(t), dark.Get(t)
		lc := le.Colour.IsSet() && le.Colour != lightText
		dc := de.Colour.IsSet() && de.Colour != darkText
		decl := ""
		if lc || dc {
			decl += "color:var(--gb-hl-" + cls + ")"
			lv.WriteString(varDecl(cls, le.Colour, lc, lightBgs, false))
			dv.WriteString(varDecl(cls, de.Colour, dc, darkBgs, true))
		}
		if le.Bold == chroma.Yes {
			decl = joinDecl(decl, "font-weight:600")
		}
		if le.Italic == chroma.Yes {
			decl = joinDecl(decl, "font-style:italic")
		}
		if le.Underline == chroma.Yes {
			decl = joinDecl(decl, "text-decoration:underline")
		}
		if decl != "" {
			fmt.Fprintf(&r, ".content .hl-%s{%s}\n", cls, decl)
		}
	}
	return r.String(), lv.String(), dv.String()
}

func joinDecl(a, b string) string {
	if a == "" {
		return b
	}
	return a + ";" + b
}

func varDecl(cls string, c chroma.Colour, set bool, bgs []rgb, dark bool) string {
	if !set {
		return "--gb-hl-" + cls + ":var(--text);"
	}
	fixed := ensureContrast(rgb{c.Red(), c.Green(), c.Blue()}, bgs, 4.6, dark)
	return "--gb-hl-" + cls + ":" + fixed.String() + ";"
}

type rgb [3]uint8

func (c rgb) String() string { return fmt.Sprintf("#%02x%02x%02x", c[0], c[1], c[2]) }

func (c rgb) luminance() float64 {
	ch := func(v uint8) float64 {
		s := float64(v) / 255
		if s <= 0.04045 {
			return s / 12.92
		}
		return math.Pow((s+0.055)/1.055, 2.4)
	}
	return 0.2126*ch(c[0]) + 0.7152*ch(c[1]) + 0.0722*ch(c[2])
}

func contrast(a, b rgb) float64 {
	la, lb := a.luminance(), b.luminance()
	if la < lb {
		la, lb = lb, la
	}
	return (la + 0.05) / (lb + 0.05)
}

// ensureContrast mixes c toward black (or white, for dark backgrounds)
// until it reaches min against every background.
func ensureContrast(c rgb, bgs []rgb, min float64, dark bool) rgb {
	target := 0.0
	if dark {
		target = 255
	}
	for step := 0; step <= 20; step++ {
		f := float64(step) / 20
		m := rgb{}
		for i := range c {
			m[i] = uint8(math.Round(float64(c[i])*(1-f) + target*f))
		}
		ok := true
		for _, bg := range bgs {
			if contrast(m, bg) < min {
				ok = false
				break
			}
		}
		if ok {
			return m
		}
	}
	if dark {
		return rgb{255, 255, 255}
	}
	return rgb{0, 0, 0}
}
