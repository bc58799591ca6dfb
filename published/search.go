package published

import (
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/docsapi/docsapi/graph"
	"github.com/docsapi/docsapi/published/render"
)

// The search box of every page leads to {base}/~gitbook/search?q=…, a page
// of results made on the server (it works without script): the site's
// search (Site.search) run as the visitor, so it finds what the visitor
// may read and nothing else, from the site space the visitor was reading
// (ss) and the default ones of the other sections.

// searchData is PublishedSearch's answer.
type searchData struct {
	Site struct {
		Search struct {
			Items []struct {
				ID        string  `json:"id"`
				Title     string  `json:"title"`
				SiteSpace *string `json:"siteSpace"`
				Pages     []struct {
					ID        string `json:"id"`
					Title     string `json:"title"`
					Path      string `json:"path"`
					Ancestors []struct {
						Title string `json:"title"`
					} `json:"ancestors"`
					Sections []struct {
						ID    string `json:"id"`
						Title string `json:"title"`
						Body  string `json:"body"`
					} `json:"sections"`
				} `json:"pages"`
			} `json:"items"`
		} `json:"search"`
	} `json:"site"`
}

// searchView is a page of search results.
type searchView struct {
	Query   string
	Results []searchResult
	// Problem says why there are no results to show (a query too long).
	Problem string
}

type searchResult struct {
	Title    string
	URL      string
	Where    string // the space, and the pages above it
	Sections []searchSection
}

type searchSection struct {
	Title, URL, Snippet string
}

const (
	// maxSearchQuery is the site search's own bound (graph: 512).
	maxSearchQuery = 512
	// searchSpaces bounds the spaces of results shown, snippetLength a
	// section's quoted text.
	searchSpaces  = 20
	snippetLength = 200
)

// serveSearch answers {base}/~gitbook/search for visitor v of site a.
func (rd *Reader) serveSearch(w http.ResponseWriter, r *http.Request, v *graph.Visitor, a address) {
	ctx := r.Context()
	s, err := rd.loadSite(ctx, v, a)
	if err != nil {
		rd.failed(w, r, err)
		return
	}
	q := r.URL.Query()
	ss := s.siteSpaceByID(q.Get("ss"))
	if ss == nil {
		if ss, _, _ = s.route(nil); ss == nil {
			rd.notFound(w, r)
			return
		}
	}
	c, err := rd.loadContent(ctx, ss.space.ID)
	if err != nil {
		rd.failed(w, r, err)
		return
	}
	view := rd.newView(s, ss, c, a)
	view.Tree = rd.navTree(s, ss, c, c.top, nil)
	view.PageTitle, view.NoIndex = "Search", true
	query := strings.TrimSpace(q.Get("q"))
	view.Search = &searchView{Query: query}
	switch {
	case query == "":
	case utf8.RuneCountInString(query) > maxSearchQuery:
		view.Search.Problem = "The search is too long: at most 512 characters."
	default:
		view.PageTitle = "Search: " + query
		var d searchData
		input := map[string]any{"query": query, "scope": map[string]any{"mode": "default", "currentSiteSpace": ss.id}}
		err := rd.run(ctx, "PublishedSearch", map[string]any{"organizationId": v.Site().OrganizationID, "siteId": v.Site().ID,
			"input": input, "limit": searchSpaces}, &d)
		if err != nil {
			rd.failed(w, r, err)
			return
		}
		view.Search.Results = rd.searchResults(s, &d)
	}
	p := rd.renderPage(s, http.StatusOK, view)
	// A page of results is the visitor's own: not indexed, not kept.
	p.header.Set("X-Robots-Tag", "noindex")
	p.header.Set("Cache-Control", "private, no-store")
	p.write(w, r)
}

// searchResults are d's pages at their published addresses, with their
// sections at their headings' anchors.
func (rd *Reader) searchResults(s *site, d *searchData) []searchResult {
	var out []searchResult
	for _, item := range d.Site.Search.Items {
		ss := s.siteSpaceByID(deref(item.SiteSpace))
		if ss == nil {
			continue
		}
		base := s.addressOf(ss)
		for _, p := range item.Pages {
			res := searchResult{Title: p.Title, URL: base + "/" + escapePath(p.Path)}
			where := []string{item.Title}
			for _, anc := range p.Ancestors {
				where = append(where, anc.Title)
			}
			res.Where = strings.Join(where, " › ")
			for _, sec := range p.Sections {
				u := res.URL
				if sec.ID != p.ID {
					u += "#" + render.AnchorOf(sec.Title)
				}
				res.Sections = append(res.Sections, searchSection{Title: sec.Title, URL: u,
					Snippet: render.PlainText(sec.Body, snippetLength)})
			}
			out = append(out, res)
		}
	}
	return out
}

// siteSpaceByID is the site space id of the site, as the visitor sees it.
func (s *site) siteSpaceByID(id string) *siteSpace {
	if id == "" {
		return nil
	}
	for _, ss := range s.siteSpaces() {
		if ss.id == id {
			return ss
		}
	}
	return nil
}
