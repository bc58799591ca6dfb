package published

import (
	"bytes"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/docsapi/docsapi/graph"
	"github.com/docsapi/docsapi/published/render"
)

// Machines (assistants, their crawlers and tools) read a site as Markdown:
// llms.txt (llmstxt.org: the site's title, then a section per site space
// with a link to each page's Markdown and its description), llms-full.txt
// (every page's Markdown, one after the other) and each page at its
// address with .md appended. They list what the sitemap lists (content.
// listed), on a site of any audience: a visitor reads them as they read
// the site's pages. llms.txt and llms-full.txt are bounded (bounds): what
// would go beyond is left out, and a note at the end says so.

// markdownType is the media type of a page's Markdown (RFC 7763).
const markdownType = "text/markdown; charset=utf-8"

// llmsType is that of llms.txt and llms-full.txt: Markdown, which
// browsers and tools show as the text it is.
const llmsType = "text/plain; charset=utf-8"

// makeLLMs makes site a's llms.txt for visitor v.
func (rd *Reader) makeLLMs(w http.ResponseWriter, r *http.Request, v *graph.Visitor, a address) *rendered {
	l, err := rd.loadSiteListing(r.Context(), v, a)
	if err != nil {
		rd.failed(w, r, err)
		return nil
	}
	// Not for search engines' indexes: they have the pages.
	return textAnswer(l.site, llmsType, true, rd.llmsText(l))
}

// llmsText is the llms.txt of listing l.
func (rd *Reader) llmsText(l *listing) []byte {
	s := l.site
	title := s.title
	if sec := s.defaultSection(); sec != nil && s.defaultSiteSpace(sec) != nil {
		title = s.titleOf(s.defaultSiteSpace(sec)) // the title its front page shows
	}
	text := newBoundedText(bounds.llmsBytes)
	text.b.WriteString("# " + oneLine(title) + "\n")
pages:
	for _, ls := range l.spaces {
		heading := "\n## " + oneLine(headingOf(ls.ss)) + "\n\n"
		for i, p := range ls.pages {
			line := "- [" + linkText(p.Title) + "](" + rd.absolute(s, rd.pageURL(s, ls.ss, p)+markdownSuffix) + ")"
			if d := oneLine(deref(p.Description)); d != "" {
				line += ": " + d
			}
			line += "\n"
			if i == 0 {
				line = heading + line
			}
			if !text.add(line) {
				break pages
			}
		}
	}
	if total := l.count(); text.pages < total {
		fmt.Fprintf(&text.b, "\nThis list stops at %s: it names %d of the %d pages. Each page reads as Markdown at its address with .md appended.\n",
			sizeOf(bounds.llmsBytes), text.pages, total)
	}
	return text.b.Bytes()
}

// boundedText is a text of pages, bounded in bytes: a page that would go
// beyond is left out, with every page after it, and room is kept at the
// end for a note that says so.
type boundedText struct {
	b     bytes.Buffer
	room  int
	pages int
}

// noteRoom is the room kept for the note.
const noteRoom = 512

func newBoundedText(maxBytes int) *boundedText { return &boundedText{room: maxBytes - noteRoom} }

// add adds a page, and tells whether it fitted.
func (t *boundedText) add(page string) bool {
	if t.b.Len()+len(page) > t.room {
		return false
	}
	t.b.WriteString(page)
	t.pages++
	return true
}

// headingOf names site space ss in llms.txt: its section, after the groups
// holding it, then its own title when the section has several (versions,
// languages); in a site without sections, the site space's title.
func headingOf(ss *siteSpace) string {
	sec := ss.section
	if sec.isRoot {
		if ss.title != "" {
			return ss.title
		}
		return ss.space.Title
	}
	parts := append(slices.Clone(sec.groups), sec.title)
	if len(sec.siteSpaces) > 1 {
		parts = append(parts, ss.title)
	}
	return strings.Join(parts, " › ")
}

// makeLLMsFull makes site a's llms-full.txt for visitor v: the Markdown of
// each listed page, in the site's order, each under its title with its
// address, until the next would not fit.
func (rd *Reader) makeLLMsFull(w http.ResponseWriter, r *http.Request, v *graph.Visitor, a address) *rendered {
	ctx := r.Context()
	l, err := rd.loadSiteListing(ctx, v, a)
	if err != nil {
		rd.failed(w, r, err)
		return nil
	}
	s := l.site
	text := newBoundedText(bounds.llmsFullBytes)
pages:
	for _, ls := range l.spaces {
		for _, p := range ls.pages {
			at := &located{s: s, ss: ls.ss, c: ls.c, p: p}
			body, err := rd.loadBody(ctx, at)
			if notFound(err) {
				continue // gone since the listing was read
			} else if err != nil {
				rd.failed(w, r, err)
				return nil
			}
			md := rd.pageMarkdown(at, body, rd.canonicalURL(s, at.ss, at.c, at.p))
			if text.pages > 0 {
				md = "\n" + md
			}
			if !text.add(md) {
				break pages
			}
		}
	}
	if total := l.count(); text.pages < total {
		fmt.Fprintf(&text.b, "\n---\n\nThis file stops at %s: it holds %d of the %d pages. %s lists them all, each at its address with .md appended.\n",
			sizeOf(bounds.llmsFullBytes), text.pages, total, rd.absolute(s, s.base+"/"+llmsFile))
	}
	return textAnswer(s, llmsType, true, text.b.Bytes())
}

// makeMarkdownPage makes the page whose address is segments without the
// last one's .md, as Markdown: a group's leads to its first page's.
func (rd *Reader) makeMarkdownPage(w http.ResponseWriter, r *http.Request, v *graph.Visitor, a address, segments []string) *rendered {
	segments = slices.Clone(segments)
	last := len(segments) - 1
	segments[last] = strings.TrimSuffix(segments[last], markdownSuffix)
	if segments[last] == "" {
		rd.notFound(w, r)
		return nil
	}
	at, err := rd.locate(r.Context(), v, a, segments)
	if err != nil {
		rd.failed(w, r, err)
		return nil
	}
	if at.first != nil {
		http.Redirect(w, r, rd.pageURL(at.s, at.ss, at.first)+markdownSuffix, http.StatusFound)
		return nil
	}
	if at.p == nil {
		rd.notFound(w, r)
		return nil
	}
	body, err := rd.loadBody(r.Context(), at)
	if err != nil {
		rd.failed(w, r, err)
		return nil
	}
	p := textAnswer(at.s, markdownType, at.p.NoIndex || at.p.NoRobotsIndex, []byte(rd.pageMarkdown(at, body, "")))
	// The page's HTML is the one to index: this is another form of it.
	p.header.Set("Link", "<"+rd.canonicalURL(at.s, at.ss, at.c, at.p)+`>; rel="canonical"`)
	return p
}

// pageMarkdown is page at.p as Markdown for machines: its markdown as
// stored (GitBook's blocks are markdown too), under a "# Title" line when
// it has none of its own (with the page's description below it), with
// its relative links made absolute published addresses. source, when
// given, is named under the title (llms-full.txt tells each page's
// address).
func (rd *Reader) pageMarkdown(at *located, body *pageBody, source string) string {
	md := render.Markdown(deref(body.Markdown), render.Options{Links: rd.linksOf(at.s, at.ss, at.c, at.p, true)})
	md = strings.TrimLeft(md, "\r\n")
	var b strings.Builder
	description := ""
	if title, rest, ok := cutTitle(md); ok {
		b.WriteString(title + "\n")
		md = rest
	} else {
		b.WriteString("# " + oneLine(at.p.Title) + "\n")
		description = oneLine(deref(at.p.Description))
	}
	if source != "" {
		b.WriteString("\nSource: " + source + "\n")
	}
	if description != "" {
		b.WriteString("\n" + description + "\n")
	}
	if md = strings.TrimLeft(md, "\r\n"); md != "" {
		b.WriteString("\n" + md)
		if !strings.HasSuffix(md, "\n") {
			b.WriteString("\n")
		}
	}
	return b.String()
}

// cutTitle cuts a leading "# Title" line off md.
func cutTitle(md string) (title, rest string, ok bool) {
	line, rest, _ := strings.Cut(md, "\n")
	line = strings.TrimRight(line, "\r")
	t := strings.TrimLeft(line, " ")
	if len(line)-len(t) <= 3 && (strings.HasPrefix(t, "# ") || t == "#") {
		return t, rest, true
	}
	return "", md, false
}

// sizeOf is a size in bytes as people read it.
func sizeOf(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// oneLine is s on one line, its runs of white space made one space.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// linkText is a title as a Markdown link's text.
func linkText(s string) string {
	return strings.NewReplacer(`\`, `\\`, "[", `\[`, "]", `\]`).Replace(oneLine(s))
}
