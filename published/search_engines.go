package published

import (
	"bytes"
	"encoding/xml"
	"net/http"
	"strconv"
	"time"

	"github.com/docsapi/docsapi/graph"
)

// Search engines read a site's sitemap.xml and robots.txt (RFC 9309).
//
// Only a public site is for search engines. The others (unlisted,
// share-link, visitor-auth) answer a robots.txt that disallows everything,
// their pages carry X-Robots-Tag: noindex, and they have no sitemap: their
// sitemap.xml is not found, as an address of nothing (an empty sitemap
// would claim the site has no pages, and the protocol's schema wants at
// least one URL; a list of the pages would only tell crawlers what to
// ask for against the site's wishes). A public site that offers its
// visitor no page has no sitemap either.

// sitemapNamespace is the sitemap protocol's XML namespace (0.9).
const sitemapNamespace = "http://www.sitemaps.org/schemas/sitemap/0.9"

// urlSet is a sitemap; sitemapIndex an index of sitemaps.
type urlSet struct {
	XMLName xml.Name     `xml:"http://www.sitemaps.org/schemas/sitemap/0.9 urlset"`
	URLs    []sitemapURL `xml:"url"`
}

type sitemapIndex struct {
	XMLName  xml.Name     `xml:"http://www.sitemaps.org/schemas/sitemap/0.9 sitemapindex"`
	Sitemaps []sitemapURL `xml:"sitemap"`
}

// sitemapURL is a page of a sitemap or a sitemap of an index: its
// absolute address, and when it last changed (W3C datetime).
type sitemapURL struct {
	Loc     string `xml:"loc"`
	LastMod string `xml:"lastmod,omitempty"`
}

// makeSitemap makes site a's sitemap for visitor v: the whole of it
// (part 0), which is an index when the pages do not fit in one sitemap,
// or one part of that index.
func (rd *Reader) makeSitemap(w http.ResponseWriter, r *http.Request, v *graph.Visitor, a address, part int) *rendered {
	s, err := rd.loadSite(r.Context(), v, a)
	if err != nil {
		rd.failed(w, r, err)
		return nil
	}
	if s.visibility != "public" {
		rd.notFound(w, r)
		return nil
	}
	l, err := rd.loadListing(r.Context(), s)
	if err != nil {
		rd.failed(w, r, err)
		return nil
	}
	parts := sitemapParts(rd.sitemapURLs(l))
	var doc any
	switch {
	case len(parts) == 0 || part > len(parts) || (part > 0 && len(parts) == 1):
		// No pages, or a part there is not (a sitemap that fits in one
		// file has no parts).
		rd.notFound(w, r)
		return nil
	case part > 0:
		doc = urlSet{URLs: parts[part-1]}
	case len(parts) == 1:
		doc = urlSet{URLs: parts[0]}
	default:
		index := sitemapIndex{}
		for i, urls := range parts {
			loc := rd.absolute(s, s.base+"/"+sitemapPartPrefix+strconv.Itoa(i+1)+".xml")
			index.Sitemaps = append(index.Sitemaps, sitemapURL{Loc: loc, LastMod: latest(urls)})
		}
		doc = index
	}
	body, err := xml.MarshalIndent(doc, "", "  ")
	if err != nil {
		rd.failed(w, r, err)
		return nil
	}
	return textAnswer(s, "application/xml; charset=utf-8", false, append([]byte(xml.Header), append(body, '\n')...))
}

// sitemapURLs are the listed pages of l at their canonical addresses, in
// the site's order, each with its last change: the page's, or its
// revision's when the page has none.
func (rd *Reader) sitemapURLs(l *listing) []sitemapURL {
	var out []sitemapURL
	for _, ls := range l.spaces {
		for _, p := range ls.pages {
			changed := p.UpdatedAt
			if changed.IsZero() {
				changed = ls.c.createdAt
			}
			out = append(out, sitemapURL{Loc: rd.canonicalURL(l.site, ls.ss, ls.c, p), LastMod: w3cDatetime(changed)})
		}
	}
	return out
}

// sitemapParts cuts urls into sitemaps within the protocol's bounds: a
// number of URLs and a size (an entry's size is over-estimated: its
// address could be longer escaped).
func sitemapParts(urls []sitemapURL) [][]sitemapURL {
	const overhead = 512 // the XML declaration and the urlset element
	var parts [][]sitemapURL
	start, size := 0, overhead
	for i, u := range urls {
		entry := 2*len(u.Loc) + len(u.LastMod) + 64
		if i > start && (i-start >= bounds.sitemapURLs || size+entry > bounds.sitemapBytes) {
			parts = append(parts, urls[start:i])
			start, size = i, overhead
		}
		size += entry
	}
	if start < len(urls) {
		parts = append(parts, urls[start:])
	}
	return parts
}

// latest is the latest last change of urls.
func latest(urls []sitemapURL) string {
	out := ""
	for _, u := range urls {
		if u.LastMod > out { // W3C datetimes in UTC sort as strings
			out = u.LastMod
		}
	}
	return out
}

func w3cDatetime(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// makeRobots makes site a's robots.txt for visitor v. A public site's
// allows everything but the pages that ask robots to stay away
// (noRobotsIndex), each at every address it has (with RFC 9309's $: that
// address only, not the pages under it), and names the sitemap.
func (rd *Reader) makeRobots(w http.ResponseWriter, r *http.Request, v *graph.Visitor, a address) *rendered {
	s, err := rd.loadSite(r.Context(), v, a)
	if err != nil {
		rd.failed(w, r, err)
		return nil
	}
	if s.visibility != "public" {
		return textAnswer(s, robotsType, false, closedRobots(a))
	}
	l, err := rd.loadListing(r.Context(), s)
	if err != nil {
		rd.failed(w, r, err)
		return nil
	}
	return textAnswer(s, robotsType, false, rd.robots(l))
}

const robotsType = "text/plain; charset=utf-8"

// robots is the robots.txt of a public site's listing l.
func (rd *Reader) robots(l *listing) []byte {
	s := l.site
	var b bytes.Buffer
	b.WriteString("User-agent: *\nAllow: " + s.base + "/\n")
	for _, ls := range l.spaces {
		for _, p := range ls.c.ordered {
			if !p.NoRobotsIndex || p.Type != pageDocument {
				continue
			}
			addresses := []string{rd.pageURL(s, ls.ss, p), rd.pageURL(s, ls.ss, p) + markdownSuffix}
			if p == ls.c.frontPage() {
				addresses = append(addresses, s.addressOf(ls.ss)+"/")
			}
			for _, u := range addresses {
				b.WriteString("Disallow: " + u + "$\n")
			}
		}
	}
	if l.count() > 0 {
		b.WriteString("\nSitemap: " + rd.absolute(s, s.base+"/"+sitemapFile) + "\n")
	}
	return b.Bytes()
}

// closedRobots is the robots.txt of a site that is not for search
// engines: nothing under its address may be crawled.
func closedRobots(a address) []byte {
	return []byte("User-agent: *\nDisallow: " + a.base + "/\n")
}

// writeClosedRobots answers the robots.txt of visitor-auth site a to a
// visitor admission refused (a crawler has no token).
func (rd *Reader) writeClosedRobots(w http.ResponseWriter, r *http.Request, a address) {
	h := http.Header{}
	h.Set("Content-Type", robotsType)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Robots-Tag", "noindex")
	newRendered(http.StatusOK, h, closedRobots(a)).write(w, r)
}
