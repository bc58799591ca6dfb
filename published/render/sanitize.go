package render

import (
	"regexp"
	"sync"

	"github.com/microcosm-cc/bluemonday"
)

// The sanitizer has the last word on every page. Its policy starts from
// bluemonday's UGCPolicy (formatting, links, images, lists, tables, no
// style, no script, no forms, no frames, no SVG, URLs limited to http,
// https, mailto and relative ones, with javascript:, vbscript: and data:
// rejected in every form) and adds exactly what this package emits: its
// classes, the ARIA it writes, read-only task-list checkboxes, <picture>
// sources, focusable scroll containers, target=_blank with rel.

var classListRE = regexp.MustCompile(`^(?:(?:gb|hl)-[a-z0-9-]+|anchor|button|primary|secondary|expression|footnotes|footnote-ref|footnote-backref|gitbook-drawing)(?: (?:(?:gb|hl)-[a-z0-9-]+|anchor|button|primary|secondary|expression|footnotes|footnote-ref|footnote-backref|gitbook-drawing))*$`)

var policy = sync.OnceValue(func() *bluemonday.Policy {
	p := bluemonday.UGCPolicy()

	// The page belongs to its publisher, not to anonymous commenters: its
	// own links are followed; links to other sites are not vouched for
	// and do not leak the reader's address.
	p.RequireNoFollowOnLinks(false)
	p.RequireNoFollowOnFullyQualifiedLinks(true)
	p.RequireNoReferrerOnFullyQualifiedLinks(true)

	p.AllowAttrs("class").Matching(classListRE).Globally()
	p.AllowAttrs("id").Matching(regexp.MustCompile(`^[A-Za-z0-9_-]+$`)).Globally()
	p.AllowAttrs("role").Matching(regexp.MustCompile(`^(note|doc-noteref|doc-endnotes|doc-backlink)$`)).Globally()
	p.AllowAttrs("aria-label").Matching(regexp.MustCompile(`^[^\x00-\x1f]*$`)).OnElements("div", "a", "input", "pre", "section")
	p.AllowAttrs("tabindex").Matching(regexp.MustCompile(`^0$`)).OnElements("div", "pre")

	p.AllowElements("kbd", "del", "ins", "s", "picture", "figure", "figcaption", "details", "summary", "section", "time", "mark")
	// srcset is not checked by bluemonday: tidy keeps only safe URLs in it.
	p.AllowAttrs("srcset").OnElements("source", "img")
	p.AllowAttrs("media").Matching(regexp.MustCompile(`^\(prefers-color-scheme: ?(dark|light)\)$`)).OnElements("source")
	p.AllowAttrs("loading").Matching(regexp.MustCompile(`^lazy$`)).OnElements("img")

	p.AllowAttrs("type").Matching(regexp.MustCompile(`^checkbox$`)).OnElements("input")
	p.AllowAttrs("checked", "disabled").Matching(regexp.MustCompile(`^(|checked|disabled)$`)).OnElements("input")

	p.AllowAttrs("target").Matching(regexp.MustCompile(`^_blank$`)).OnElements("a")
	p.AllowAttrs("rel").Matching(regexp.MustCompile(`^(noopener|noreferrer|nofollow)( (noopener|noreferrer|nofollow))*$`)).OnElements("a")
	return p
})

func sanitize(s string) string {
	return policy().Sanitize(s)
}
