package published

import (
	"context"
	"net/http"
	"net/url"
	"strings"

	"github.com/docsapi/docsapi/graph"
	"github.com/docsapi/docsapi/graph/siteroute"
)

// Redirects: an address under a site where no page is may lead elsewhere,
// answered with a 301, as GitBook resolves an address:
//
//  1. a page of the site space's space was at that path (its automatic
//     redirect, left when the page was renamed or moved): the page's
//     address now;
//  2. the site has a redirect from that path (its source, the whole path
//     under the site's address, sections' and site spaces' paths
//     included): where that leads.
//
// A page at the address is always served first: no redirect hides one.
// Paths are matched whole, decoded, without empty segments (a trailing
// slash makes no difference), and with no regard to the query string,
// which is kept on the way to an address of the site and dropped on the
// way to another one (a share key or claims in it stay on the site). One
// redirect is served per request: a redirect that leads to another
// redirect's source is followed by the visitor's next request, as browsers
// do for at most some twenty hops; one that leads back to the address
// asked is not served at all.
//
// Both are read through the reader's operations as the visitor: the read
// rules hand it the redirects of its site that lead where it may go, and
// the automatic ones of the spaces it reads. Redirects are not kept in the
// page cache: each address without a page asks, so a redirect made or
// removed is served, or not, from the next request on.

// redirectData is PublishedSiteRedirect's answer.
type redirectData struct {
	Site *struct {
		Redirect *struct {
			Redirect struct {
				Destination struct {
					Kind          string  `json:"kind"`
					SiteSectionID *string `json:"siteSectionId"`
					SiteSpaceID   *string `json:"siteSpaceId"`
					PageID        *string `json:"pageId"`
					URL           *string `json:"url"`
				} `json:"destination"`
			} `json:"redirect"`
		} `json:"redirect"`
	} `json:"site"`
}

// redirectFor is where an address of site s with no page sends visitor v
// (the context's caller): segments are the address's under the site,
// which named pagePath in site space ss, of content c. "" when nowhere.
func (rd *Reader) redirectFor(r *http.Request, v *graph.Visitor, s *site, ss *siteSpace, c *content, pagePath string, segments []string) (string, error) {
	ctx := r.Context()
	to, onSite, err := rd.movedPage(ctx, s, ss, c, pagePath)
	if err == nil && to == "" {
		to, onSite, err = rd.siteRedirect(ctx, v, s, segments)
	}
	if err != nil || to == "" {
		return "", err
	}
	if onSite {
		if siteroute.SameAddress(to, r.URL.Path) {
			return "", nil // back to where the visitor is: no redirect
		}
		if r.URL.RawQuery != "" && !strings.ContainsAny(to, "?#") {
			to += "?" + r.URL.RawQuery
		}
	}
	return to, nil
}

// movedPage is the address of the page of site space ss that was at
// pagePath, when one was.
func (rd *Reader) movedPage(ctx context.Context, s *site, ss *siteSpace, c *content, pagePath string) (string, bool, error) {
	if pagePath == "" {
		return "", false, nil
	}
	var d struct {
		Space *struct {
			PageRedirect *struct {
				Page struct{ ID string } `json:"page"`
			} `json:"pageRedirect"`
		} `json:"space"`
	}
	err := rd.run(ctx, "PublishedPageRedirect", map[string]any{"spaceId": ss.space.ID, "path": pagePath}, &d)
	if noAnswer(err) || err == nil && (d.Space == nil || d.Space.PageRedirect == nil) {
		return "", false, nil
	} else if err != nil {
		return "", false, err
	}
	p := c.byID(d.Space.PageRedirect.Page.ID)
	if p == nil {
		return "", false, nil // the space changed since c was read: none
	}
	return rd.pageURL(s, ss, p), true, nil
}

// siteRedirect is where the site's redirect from the address segments
// name leads, when the site has one the visitor may follow; onSite tells
// an address of the site from another.
func (rd *Reader) siteRedirect(ctx context.Context, v *graph.Visitor, s *site, segments []string) (to string, onSite bool, err error) {
	if len(segments) == 0 {
		return "", false, nil
	}
	escaped := make([]string, len(segments))
	for i, seg := range segments {
		escaped[i] = url.PathEscape(seg)
	}
	var d redirectData
	err = rd.run(ctx, "PublishedSiteRedirect", map[string]any{"organizationId": v.Site().OrganizationID, "siteId": v.Site().ID,
		"source": "/" + strings.Join(escaped, "/")}, &d)
	if noAnswer(err) || err == nil && (d.Site == nil || d.Site.Redirect == nil) {
		return "", false, nil
	} else if err != nil {
		return "", false, err
	}
	dest := d.Site.Redirect.Redirect.Destination
	switch dest.Kind {
	case "url":
		u := deref(dest.URL)
		if strings.HasPrefix(u, "/") {
			return s.base + u, true, nil
		}
		return u, false, nil
	case "site-section":
		if sec := s.sectionByID(deref(dest.SiteSectionID)); sec != nil && s.defaultSiteSpace(sec) != nil {
			return s.addressOf(s.defaultSiteSpace(sec)) + "/", true, nil
		}
	case "site-space":
		if ss := s.siteSpaceByID(deref(dest.SiteSpaceID)); ss != nil {
			return s.addressOf(ss) + "/", true, nil
		}
	case "site-page":
		ss := s.siteSpaceByID(deref(dest.SiteSpaceID))
		if ss == nil {
			return "", false, nil
		}
		c, err := rd.loadContent(ctx, ss.space.ID)
		if notFound(err) {
			return "", false, nil
		} else if err != nil {
			return "", false, err
		}
		if p := c.byID(deref(dest.PageID)); p != nil {
			return rd.pageURL(s, ss, p), true, nil
		}
	}
	return "", false, nil
}

// noAnswer tells whether err is a lookup's "none": not found, or an
// address no redirect could be from (a path too long to be a source).
func noAnswer(err error) bool {
	oe, ok := err.(*operationError)
	return ok && (oe.status == http.StatusNotFound || oe.status == http.StatusBadRequest)
}

// sectionByID is the section id of the site as the visitor sees it, or nil.
func (s *site) sectionByID(id string) *section {
	for _, sec := range s.sections {
		if sec.id == id {
			return sec
		}
	}
	return nil
}

// writeRedirect answers r with a 301 to address to, with the headers of a
// page of s: browsers keep a 301, so it is kept as a page is (revalidated
// every time), and a restricted site's is its visitor's own.
func (rd *Reader) writeRedirect(w http.ResponseWriter, r *http.Request, s *site, to string) {
	setAudienceHeaders(w.Header(), s, false)
	http.Redirect(w, r, to, http.StatusMovedPermanently)
}
