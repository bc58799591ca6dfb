// Package render turns the markdown of one page of documentation, as
// GitBook's git sync writes it, into safe HTML for a published page.
//
// GitBook pages are CommonMark plus GitHub's extensions, raw HTML (figures,
// card tables, <details> blocks) and Liquid-like tags such as
// {% hint style="info" %} … {% endhint %} or {% tabs %}{% tab %} … that nest
// freely. Readers must see those blocks as what they are (callouts, tabs,
// steps, cards), never as raw {% … %} text, and the page is public, so the
// output must never run script whatever the markdown says.
//
// The pipeline, one file per step:
//
//  1. scan.go: strip the front matter, put every {% tag %} that is not inside
//     code on its own line and pair openers with their end tags;
//  2. blocks.go, math.go: goldmark (GFM + footnotes) parses the page in one
//     pass, with a block parser that turns tags into container nodes, so
//     nesting, footnotes and link references work across blocks;
//  3. headings.go: heading ids, self-links, the outline and the title;
//  4. blocks_html.go, code.go: goldmark renders, with our renderers for the
//     tag blocks and chroma for code;
//  5. tidy.go, links.go, cards.go: the HTML is parsed into a tree that is
//     balanced whatever the raw HTML was, links are resolved through
//     Options.Links, GitBook's card tables become cards, and the markup is
//     normalised for the sanitizer;
//  6. sanitize.go: bluemonday, with a policy that allows exactly what the
//     steps above emit, has the last word.
//
// Beside it, markdown.go resolves the same destinations in the markdown
// itself, for readers that take markdown (Markdown).
//
// Render is pure: no network, no database, no mutable globals. CSS and JS
// are the styles and the small progressive-enhancement script of
// everything Render produces.
package render

import (
	"bytes"
	"errors"
	"html/template"
	"sync"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer"
	gmhtml "github.com/yuin/goldmark/renderer/html"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// Links resolves the destinations a page names: link hrefs and image srcs of
// markdown and of raw HTML, the url of {% content-ref %}, the src of
// {% file %} (and the url of {% embed %} and the target and cover of card
// tables). dest is the destination as written, with markdown's escaping
// undone (percent-decoding of what goldmark encoded, angle brackets
// removed): e.g. "../getting-started/quickstart.md", "quickstart.md#anchor",
// "../.gitbook/assets/image (1).png", "https://example.com", "#section".
// It returns the address to put in the page and true, or false to keep dest
// as written. Whatever it returns goes through the sanitizer like any other
// URL.
type Links interface {
	Resolve(dest string) (href string, ok bool)
}

// Titles may be implemented by the same value as Links: it names the page a
// {% content-ref %} card points to (dest as for Resolve). Without it, or
// when it returns false, the card shows the link text GitBook wrote, or a
// title made from the file name when that text is only a file name.
type Titles interface {
	Title(dest string) (title string, ok bool)
}

// Options configure one Render call.
type Options struct {
	Links Links // nil Links: keep every destination as written
}

// Heading is one entry of a page outline.
type Heading struct {
	Level int
	ID    string
	Text  string
}

// Result is a rendered page.
type Result struct {
	HTML    template.HTML // sanitized; safe to put in an html/template page as is
	Outline []Heading     // the h2 and h3 headings, in order, for a page outline ("on this page")
	// Title is the text of a leading h1, if the markdown starts with one
	// (after any front matter). That h1 is then left out of HTML, so that
	// the page can place its title itself.
	Title string
	// Description is the front matter's description, if any (GitBook writes
	// the page description there).
	Description string
	Unknown     int // how many {% ... %} tags were not recognised (rendered generically, never as raw text)
}

// maxInput bounds the work one call can cause; larger input is an error
// rather than a slow page.
const maxInput = 8 << 20

// ErrTooLarge is returned for markdown over 8 MiB.
var ErrTooLarge = errors.New("render: markdown too large")

// Render turns markdown into a sanitized page. It is safe for concurrent use.
func Render(markdown string, opts Options) (*Result, error) {
	res, _, err := render(markdown, opts)
	return res, err
}

// stats are what a render saw, for tests and benchmarks.
type stats struct {
	blocks  map[string]int // tag blocks rendered, by tag name
	unknown []string       // names of unrecognised tags
}

func render(markdown string, opts Options) (*Result, *stats, error) {
	if len(markdown) > maxInput {
		return nil, nil, ErrTooLarge
	}
	sc := scan(markdown)

	pc := parser.NewContext()
	pc.Set(tagsKey, sc.tags)
	md := engine()
	doc := md.Parser().Parse(text.NewReader(sc.src), parser.WithContext(pc))

	st := &stats{blocks: map[string]int{}}
	normalizeBlocks(doc, sc.src, st)
	limitHighlighting(doc)
	hd := processHeadings(doc, sc.src)

	var buf bytes.Buffer
	buf.Grow(len(sc.src) * 2)
	if err := md.Renderer().Render(&buf, sc.src, doc); err != nil {
		return nil, nil, err
	}

	clean := sanitize(tidy(buf.Bytes(), opts.Links))

	return &Result{
		HTML:        template.HTML(clean),
		Outline:     hd.outline,
		Title:       hd.title,
		Description: sc.description,
		Unknown:     len(st.unknown),
	}, st, nil
}

// engine is the goldmark instance, built once: its parsers and renderers
// keep no per-document state (that lives in the parser.Context and the AST).
var engine = sync.OnceValue(func() goldmark.Markdown {
	return goldmark.New(
		goldmark.WithExtensions(extension.GFM, extension.Footnote),
		goldmark.WithParserOptions(
			parser.WithBlockParsers(
				util.Prioritized(tagBlockParser{}, 150),
				util.Prioritized(mathBlockParser{}, 160),
			),
			parser.WithInlineParsers(
				util.Prioritized(tagInlineParser{}, 150),
				util.Prioritized(mathInlineParser{}, 160),
			),
		),
		goldmark.WithRendererOptions(
			// Raw HTML is kept here and cleaned by tidy and the sanitizer,
			// which see the whole page.
			gmhtml.WithUnsafe(),
			renderer.WithNodeRenderers(util.Prioritized(nodeRenderer{}, 100)),
		),
	)
})
