package published

import (
	"context"
	"net/http"
	"strconv"
	"strings"

	"github.com/docsapi/docsapi/graph"
)

// What search engines and machines read of a site, at its base: a sitemap
// and robots.txt (search_engines.go), llms.txt and llms-full.txt, and each
// page at its address with .md appended (llms.go). They are answered as
// pages are: the request is admitted as a visitor of the site first, then
// the reader's operations run as that visitor, so each lists exactly what
// that visitor may read (the site's audience and the conditions that hold
// for the visitor decide, in graph/); and each is kept in the pages' cache
// under its own path, fresh the same way.

// The files at a site's base for search engines and machines.
const (
	sitemapFile  = "sitemap.xml"
	robotsFile   = "robots.txt"
	llmsFile     = "llms.txt"
	llmsFullFile = "llms-full.txt"
	// A sitemap too long for one file is an index of parts, at
	// sitemap-1.xml, sitemap-2.xml...
	sitemapPartPrefix = "sitemap-"
	// markdownSuffix, after a page's address, is the page as Markdown.
	markdownSuffix = ".md"
)

// bounds are the sizes of what machines are answered. They are variables
// so that tests can make them small.
var bounds = struct {
	// sitemapURLs and sitemapBytes bound one sitemap file, as the
	// protocol does (sitemaps.org): beyond them, an index of several.
	sitemapURLs, sitemapBytes int
	// llmsBytes and llmsFullBytes bound llms.txt and llms-full.txt: what
	// would go beyond is left out, with a note saying so.
	llmsBytes, llmsFullBytes int
}{sitemapURLs: 50_000, sitemapBytes: 50 << 20, llmsBytes: 1 << 20, llmsFullBytes: 5 << 20}

// siteFile is the maker of the file called name at a site's base, for
// visitor v of site a, or nil when name is none of them.
func (rd *Reader) siteFile(w http.ResponseWriter, r *http.Request, v *graph.Visitor, a address, name string) func() *rendered {
	switch name {
	case sitemapFile:
		return func() *rendered { return rd.makeSitemap(w, r, v, a, 0) }
	case robotsFile:
		return func() *rendered { return rd.makeRobots(w, r, v, a) }
	case llmsFile:
		return func() *rendered { return rd.makeLLMs(w, r, v, a) }
	case llmsFullFile:
		return func() *rendered { return rd.makeLLMsFull(w, r, v, a) }
	}
	if n, ok := strings.CutPrefix(name, sitemapPartPrefix); ok {
		// sitemap-1.xml and on: exactly the names the index gives.
		n, isXML := strings.CutSuffix(n, ".xml")
		if part, err := strconv.Atoi(n); isXML && err == nil && part >= 1 && strconv.Itoa(part) == n {
			return func() *rendered { return rd.makeSitemap(w, r, v, a, part) }
		}
	}
	return nil
}

// listing is what a site shows one visitor and offers to be found, site
// space by site space in the site's order: the documents of each that
// are in its navigation and do not ask to stay out of indexes
// (content.listed).
type listing struct {
	site   *site
	spaces []listedSpace
}

type listedSpace struct {
	ss    *siteSpace
	c     *content
	pages []*page
}

// loadSiteListing reads site a and its listing, as visitor v reads them.
func (rd *Reader) loadSiteListing(ctx context.Context, v *graph.Visitor, a address) (*listing, error) {
	s, err := rd.loadSite(ctx, v, a)
	if err != nil {
		return nil, err
	}
	return rd.loadListing(ctx, s)
}

// loadListing reads the listing of site s, as the visitor of ctx reads it.
func (rd *Reader) loadListing(ctx context.Context, s *site) (*listing, error) {
	l := &listing{site: s}
	for _, ss := range s.siteSpaces() {
		c, err := rd.loadContent(ctx, ss.space.ID)
		if err != nil {
			return nil, err
		}
		l.spaces = append(l.spaces, newListedSpace(ss, c))
	}
	return l, nil
}

// newListedSpace lists the pages of site space ss, of content c.
func newListedSpace(ss *siteSpace, c *content) listedSpace {
	ls := listedSpace{ss: ss, c: c}
	for _, p := range c.ordered {
		if c.listed(p) {
			ls.pages = append(ls.pages, p)
		}
	}
	return ls
}

// count is the number of pages listed.
func (l *listing) count() int {
	n := 0
	for _, ls := range l.spaces {
		n += len(ls.pages)
	}
	return n
}

// textAnswer is a text answer of site s for machines, of type contentType:
// nothing in it runs in a browser, and its audience decides who keeps it.
func textAnswer(s *site, contentType string, noIndex bool, body []byte) *rendered {
	h := http.Header{}
	h.Set("Content-Type", contentType)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'")
	setAudienceHeaders(h, s, noIndex)
	return newRendered(http.StatusOK, h, body)
}
