package render

import (
	"html"
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"github.com/yuin/goldmark/ast"
	extast "github.com/yuin/goldmark/extension/ast"
	"golang.org/x/text/unicode/norm"
)

// Headings get ids that stay stable while the text around them changes, so
// that links into a page keep working. GitBook's git sync writes the id it
// uses as an empty anchor, "## Title <a href="#my-id" id="my-id"></a>":
// that id is kept (other pages link to it) and the anchor dropped. Other
// headings get a slug of their text.

type headingResult struct {
	outline []Heading
	title   string
}

// anchorLink is the self-link put at the end of each heading.
type anchorLink struct {
	ast.BaseInline
	id, label string
}

var kindAnchorLink = ast.NewNodeKind("HeadingAnchor")

func (n *anchorLink) Kind() ast.NodeKind { return kindAnchorLink }
func (n *anchorLink) Dump(source []byte, level int) {
	ast.DumpHelper(n, source, level, map[string]string{"ID": n.id}, nil)
}

var anchorIDRE = regexp.MustCompile(`(?is)^<a\s[^>]*?\bid\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))[^>]*>$`)

func processHeadings(doc ast.Node, source []byte) headingResult {
	var res headingResult
	var headings []*ast.Heading
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if h, ok := n.(*ast.Heading); ok && entering {
			headings = append(headings, h)
			return ast.WalkSkipChildren, nil
		}
		return ast.WalkContinue, nil
	})

	// A leading h1 is the page's title, which the page shows itself.
	if first, ok := doc.FirstChild().(*ast.Heading); ok && first.Level == 1 {
		explicitID(first, source)
		res.title = plainText(first, source)
		doc.RemoveChild(doc, first)
		headings = headings[1:]
	}

	explicit := make([]string, len(headings))
	reserved := map[string]bool{}
	for i, h := range headings {
		if id := cleanID(explicitID(h, source)); id != "" {
			explicit[i] = id
			reserved[id] = true
		}
	}
	used := map[string]bool{}
	for i, h := range headings {
		label := plainText(h, source)
		id := explicit[i]
		if id == "" || used[id] {
			base := id
			if base == "" {
				base = slug(label)
			}
			id = base
			for n := 1; used[id] || (explicit[i] == "" && reserved[id]); n++ {
				id = base + "-" + strconv.Itoa(n)
			}
		}
		used[id] = true
		h.SetAttributeString("id", []byte(id))
		h.AppendChild(h, &anchorLink{id: id, label: label})
		if h.Level == 2 || h.Level == 3 {
			res.outline = append(res.outline, Heading{Level: h.Level, ID: id, Text: label})
		}
	}
	return res
}

// explicitID removes GitBook's empty "<a … id="x"></a>" from a heading and
// returns x.
func explicitID(h *ast.Heading, source []byte) string {
	for c := h.FirstChild(); c != nil; c = c.NextSibling() {
		open, ok := c.(*ast.RawHTML)
		if !ok {
			continue
		}
		closing, ok := open.NextSibling().(*ast.RawHTML)
		if !ok || !strings.EqualFold(strings.TrimSpace(rawText(closing, source)), "</a>") {
			continue
		}
		m := anchorIDRE.FindStringSubmatch(rawText(open, source))
		if m == nil {
			continue
		}
		if t, ok := open.PreviousSibling().(*ast.Text); ok {
			t.Segment = t.Segment.TrimRightSpace(source)
		}
		h.RemoveChild(h, open)
		h.RemoveChild(h, closing)
		return html.UnescapeString(m[1] + m[2] + m[3])
	}
	return ""
}

func rawText(n *ast.RawHTML, source []byte) string {
	var b strings.Builder
	for i := 0; i < n.Segments.Len(); i++ {
		s := n.Segments.At(i)
		b.Write(s.Value(source))
	}
	return b.String()
}

// plainText is the text of an inline tree, as a reader sees it.
func plainText(n ast.Node, source []byte) string {
	var b strings.Builder
	var walk func(n ast.Node)
	walk = func(n ast.Node) {
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			switch t := c.(type) {
			case *ast.Text:
				b.Write(t.Segment.Value(source))
				if t.SoftLineBreak() || t.HardLineBreak() {
					b.WriteByte(' ')
				}
			case *ast.String:
				b.Write(t.Value)
			case *ast.RawHTML, *anchorLink, *extast.FootnoteLink:
			case *tagInline:
				if t.tag.expr {
					b.WriteString(t.tag.name)
				}
			case *mathInline:
				b.Write(t.tex)
			default:
				walk(c)
			}
		}
	}
	walk(n)
	return strings.Join(strings.Fields(b.String()), " ")
}

// cleanID keeps an id to [A-Za-z0-9_-], the characters that are safe in a
// URL fragment and in a CSS selector alike.
func cleanID(id string) string {
	var b strings.Builder
	dash := false
	for _, r := range id {
		switch {
		case r < 128 && (unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '-'):
			b.WriteRune(r)
			dash = false
		case !dash && b.Len() > 0:
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.TrimRight(b.String(), "-")
}

// slug makes an id from heading text: lowercase ASCII letters and digits
// separated by single hyphens, accents dropped ("Café au lait" →
// "cafe-au-lait").
func slug(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range norm.NFKD.String(strings.ToLower(s)) {
		switch {
		case unicode.Is(unicode.Mn, r):
			// a combining accent, dropped
		case r < 128 && (unicode.IsLetter(r) || unicode.IsDigit(r)):
			b.WriteRune(r)
			dash = false
		case !dash && b.Len() > 0:
			b.WriteByte('-')
			dash = true
		}
	}
	out := strings.TrimRight(b.String(), "-")
	if len(out) > 80 {
		out = strings.TrimRight(out[:80], "-")
	}
	if out == "" {
		out = "section"
	}
	return out
}
