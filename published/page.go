package published

import (
	"bytes"
	"context"
	"errors"
	"html/template"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/docsapi/docsapi/graph"
	"github.com/docsapi/docsapi/published/render"
)

// servePage serves the page segments name in the site visitor v reads,
// with the operations run as v (the context's caller): from the cache when
// it has it fresh, else made and kept. seq is the number of published
// changes heard before v was admitted (pageCache).
func (rd *Reader) servePage(w http.ResponseWriter, r *http.Request, v *graph.Visitor, a address, segments []string, seq uint64) {
	path := strings.Join(segments, "/")
	if p := rd.cache.get(rd.cache.key(v, a.base, path)); p != nil {
		p.write(w, r)
		return
	}
	p := rd.makePage(w, r, v, a, segments)
	if p == nil {
		return // answered otherwise: a redirect, an error
	}
	if p.status == http.StatusOK {
		rd.cache.put(v, seq, a.base, path, p)
	}
	p.write(w, r)
}

// makePage makes the page segments name, or answers r otherwise and
// returns nil.
func (rd *Reader) makePage(w http.ResponseWriter, r *http.Request, v *graph.Visitor, a address, segments []string) *rendered {
	ctx := r.Context()
	s, err := rd.loadSite(ctx, v, a.base)
	if err != nil {
		rd.failed(w, r, err)
		return nil
	}
	s.hostname = a.hostname
	// What the site shows of its spaces is part of its pages: a change to
	// one of them is a change to the site.
	rd.res.PublishedChanges.Shows(s.id, s.spaceIDs())
	ss, pagePath, ok := s.route(segments)
	if !ok {
		// A site whose every section is hidden from this visitor.
		rd.notFound(w, r)
		return nil
	}
	c, err := rd.loadContent(ctx, ss.space.ID)
	if err != nil {
		rd.failed(w, r, err)
		return nil
	}
	var p *page
	if pagePath == "" {
		p = c.frontPage()
	} else {
		p = c.byPath[pagePath]
	}
	if p != nil && p.Type != pageDocument {
		// A group has no body: its address leads to its first page.
		if first := c.firstDocumentUnder(p); first != nil {
			http.Redirect(w, r, rd.pageURL(s, ss, first), http.StatusFound)
			return nil
		}
		p = nil
	}
	view := rd.newView(s, ss, c, a)
	if p == nil {
		view.NotFound = true
		view.PageTitle = "Page not found"
		view.Tree = rd.navTree(s, ss, c, c.top, nil)
		return rd.renderPage(s, http.StatusNotFound, view)
	}
	body, err := rd.loadPage(ctx, c, p)
	if errors.Is(err, errRevisionMoved) {
		// The space changed between the two reads: read both again.
		if c, err = rd.loadContent(ctx, ss.space.ID); err == nil {
			if p = c.byPath[p.Path]; p == nil {
				rd.notFound(w, r)
				return nil
			}
			view = rd.newView(s, ss, c, a)
			body, err = rd.loadPage(ctx, c, p)
		}
	}
	if err == nil {
		err = rd.fillPage(view, s, ss, c, p, body)
	}
	if err != nil {
		rd.failed(w, r, err)
		return nil
	}
	return rd.renderPage(s, http.StatusOK, view)
}

// loadSite reads the site visitor v reads, as it sees it.
func (rd *Reader) loadSite(ctx context.Context, v *graph.Visitor, base string) (*site, error) {
	var d siteData
	err := rd.run(ctx, "PublishedSite", map[string]any{"organizationId": v.Site().OrganizationID, "siteId": v.Site().ID}, &d)
	if err != nil {
		return nil, err
	}
	return newSite(&d, base), nil
}

// loadContent reads the live content of space spaceID: which revision it
// is, as the visitor of ctx may read it, then that revision's pages and
// files, from the revisions already read (they never change) or by read.
func (rd *Reader) loadContent(ctx context.Context, spaceID string) (*content, error) {
	var live struct {
		Space *struct {
			Content struct{ ID string } `json:"content"`
		} `json:"space"`
	}
	if err := rd.run(ctx, "PublishedRevision", map[string]any{"spaceId": spaceID}, &live); err != nil {
		return nil, err
	}
	if live.Space == nil {
		return nil, &operationError{status: http.StatusNotFound, message: "space not found"}
	}
	if c, ok := rd.revisions.Get(live.Space.Content.ID); ok {
		return c, nil
	}
	var d contentData
	if err := rd.run(ctx, "PublishedContent", map[string]any{"spaceId": spaceID}, &d); err != nil {
		return nil, err
	}
	if d.Space == nil {
		return nil, &operationError{status: http.StatusNotFound, message: "space not found"}
	}
	c := newContent(&d)
	rd.revisions.Add(c.revisionID, c)
	return c, nil
}

// errRevisionMoved: the space's content is no longer the revision read.
var errRevisionMoved = errors.New("the space's revision moved")

// loadPage reads page p's body, of c's revision.
func (rd *Reader) loadPage(ctx context.Context, c *content, p *page) (*pageBody, error) {
	var d pageData
	err := rd.run(ctx, "PublishedPage", map[string]any{"spaceId": c.spaceID, "revisionId": c.revisionID, "path": p.Path}, &d)
	if notFound(err) {
		return nil, errRevisionMoved
	} else if err != nil {
		return nil, err
	}
	if d.Space == nil || d.Space.Revision == nil || d.Space.Revision.Page == nil {
		return nil, errRevisionMoved
	}
	return d.Space.Revision.Page, nil
}

// pageURL is the address of page p of site space ss.
func (rd *Reader) pageURL(s *site, ss *siteSpace, p *page) string {
	return s.addressOf(ss) + "/" + escapePath(p.Path)
}

// fileURL is the address of file f: made of its content, so it is cached
// for good and changes only with its bytes.
func (rd *Reader) fileURL(s *site, f *fileRef) string {
	return s.base + "/" + gitbookDir + "/files/" + f.SHA256 + "/" + url.PathEscape(f.Name)
}

// absolute is the absolute form of address u of site s: on its custom
// hostname, https (the addresses the API gives for it); else on the
// published URL's origin.
func (rd *Reader) absolute(s *site, u string) string {
	if strings.Contains(u, "://") {
		return u
	}
	if s.hostname != "" {
		return "https://" + s.hostname + u
	}
	return rd.publishedScheme + "://" + rd.host + u
}

// escapePath escapes each segment of a slash-separated path.
func escapePath(p string) string {
	var b bytes.Buffer
	for i, seg := range splitPath(p) {
		if i > 0 {
			b.WriteByte('/')
		}
		b.WriteString(url.PathEscape(seg))
	}
	return b.String()
}

func splitPath(p string) []string {
	if p == "" {
		return nil
	}
	var out []string
	for {
		dir, file := path.Split(p)
		out = append([]string{file}, out...)
		if dir == "" {
			return out
		}
		p = dir[:len(dir)-1]
	}
}

// view is what the page template shows.
type view struct {
	Lang        string
	SiteTitle   string
	SiteURL     string
	PageTitle   string
	Description string
	Canonical   string
	NoIndex     bool
	StyleURL    string
	ScriptURL   string
	Theme       theme
	Logo        *logo
	FaviconURL  string

	Sections []tab
	Variants []link
	Variant  string
	Tree     []*navPage

	NotFound    bool
	Emoji       string
	ShowTitle   bool
	ShowDesc    bool
	Breadcrumbs []link
	Content     template.HTML
	Outline     []render.Heading
	Prev, Next  *link
	UpdatedAt   time.Time
}

type link struct {
	Title   string
	URL     string
	Current bool
}

// tab is a tab of the header: a section, or a group of sections (Items).
type tab struct {
	link
	Items []link
}

type navPage struct {
	Title   string
	Emoji   string
	URL     string
	Group   bool
	Current bool
	Open    bool // the current page is at or under it
	// HasChildren: pages are under it, shown when it is open.
	HasChildren bool
	Children    []*navPage
}

type logo struct{ Light, Dark string }

// newView is the part of a page's view that the site and site space
// decide: the site's chrome and navigation.
func (rd *Reader) newView(s *site, ss *siteSpace, c *content, a address) *view {
	v := &view{SiteTitle: s.title, SiteURL: s.base + "/", Lang: languageOf(s, ss),
		NoIndex:  s.visibility != "public",
		StyleURL: s.base + "/" + gitbookDir + "/static/" + rd.assets.style, ScriptURL: s.base + "/" + gitbookDir + "/static/" + rd.assets.script}
	if v.SiteURL == "/" && s.base == "" {
		v.SiteURL = "/"
	}
	settings := s.settingsOf(ss)
	if title := stringMember(settings, "title"); title != "" {
		v.SiteTitle = title // the customization's title, over the site's
	}
	v.Theme = themeOf(settings)
	v.Logo = logoOf(settings)
	v.FaviconURL = faviconOf(settings, s.base+"/"+gitbookDir+"/static/"+rd.assets.icon)
	if len(s.sections) > 1 {
		v.Sections = sectionTabs(s, ss)
	}
	if len(ss.section.siteSpaces) > 1 {
		v.Variant = ss.title
		for _, other := range ss.section.siteSpaces {
			v.Variants = append(v.Variants, link{Title: other.title, URL: s.addressOf(other) + "/", Current: other == ss})
		}
	}
	return v
}

// sectionTabs are the header's tabs: a section outside any group is a tab;
// the sections of a group (at any depth) are listed under their outermost
// group's tab, named with the groups between.
func sectionTabs(s *site, current *siteSpace) []tab {
	var tabs []tab
	groupAt := map[string]int{}
	for _, sec := range s.sections {
		l := link{Title: sec.title, URL: s.addressOf(s.defaultSiteSpace(sec)) + "/", Current: sec == current.section}
		if len(sec.groups) == 0 {
			tabs = append(tabs, tab{link: l})
			continue
		}
		if len(sec.groups) > 1 {
			l.Title = strings.Join(append(slices.Clone(sec.groups[1:]), sec.title), " › ")
		}
		i, ok := groupAt[sec.groups[0]]
		if !ok {
			i = len(tabs)
			groupAt[sec.groups[0]] = i
			tabs = append(tabs, tab{link: link{Title: sec.groups[0]}})
		}
		tabs[i].Items = append(tabs[i].Items, l)
		tabs[i].Current = tabs[i].Current || l.Current
	}
	return tabs
}

// navTree is the page tree of the sidebar: hidden pages left out, and
// the pages under a page only for the pages on the way to the current one
// (and under it), as readers unfold a tree; a group shows its pages. A
// space of a thousand pages then names a few dozen, not a thousand, on
// every page.
func (rd *Reader) navTree(s *site, ss *siteSpace, c *content, pages []*page, current *page) []*navPage {
	open := map[string]bool{}
	if current != nil {
		open[current.ID] = true
		for _, anc := range c.ancestors(current) {
			open[anc.ID] = true
		}
	}
	var walk func(pages []*page) []*navPage
	walk = func(pages []*page) []*navPage {
		var out []*navPage
		for _, p := range pages {
			if p.Hidden {
				continue
			}
			n := &navPage{Title: p.Title, Emoji: deref(p.Emoji), Group: p.Type == pageGroup, Open: open[p.ID],
				Current: current != nil && p.ID == current.ID, HasChildren: len(p.children) > 0}
			if !n.Group {
				n.URL = rd.pageURL(s, ss, p)
			}
			if n.Group || n.Open {
				n.Children = walk(p.children)
			}
			out = append(out, n)
		}
		return out
	}
	return walk(pages)
}

// fillPage adds page p of c, with its body, to the view.
func (rd *Reader) fillPage(v *view, s *site, ss *siteSpace, c *content, p *page, body *pageBody) error {
	v.PageTitle = p.Title
	v.Emoji = deref(p.Emoji)
	v.Description = deref(p.Description)
	v.ShowTitle, v.ShowDesc = body.Layout.Title, body.Layout.Description && v.Description != ""
	v.UpdatedAt = body.UpdatedAt
	// The canonical address is absolute, and the one the site's
	// navigation uses for the page.
	v.Canonical = rd.absolute(s, rd.pageURL(s, ss, p))
	if p == c.frontPage() {
		v.Canonical = rd.absolute(s, s.addressOf(ss)+"/")
	}
	v.Tree = rd.navTree(s, ss, c, c.top, p)
	for _, anc := range c.ancestors(p) {
		l := link{Title: anc.Title}
		if anc.Type == pageDocument {
			l.URL = rd.pageURL(s, ss, anc)
		}
		v.Breadcrumbs = append(v.Breadcrumbs, l)
	}
	out, err := render.Render(deref(body.Markdown), render.Options{Links: links{c: c, from: path.Dir(p.SourcePath),
		pageURL: func(p *page) string { return rd.pageURL(s, ss, p) },
		fileURL: func(f *fileRef) string { return rd.fileURL(s, f) }}})
	if err != nil {
		return err
	}
	v.Content = out.HTML
	if body.Layout.Outline {
		v.Outline = out.Outline
	}
	if body.Layout.Pagination && paginationOn(s.settingsOf(ss)) {
		reading := c.reading()
		for i, q := range reading {
			if q != p {
				continue
			}
			if i > 0 {
				v.Prev = &link{Title: reading[i-1].Title, URL: rd.pageURL(s, ss, reading[i-1])}
			}
			if i+1 < len(reading) {
				v.Next = &link{Title: reading[i+1].Title, URL: rd.pageURL(s, ss, reading[i+1])}
			}
		}
	}
	return nil
}

// renderPage renders view with status, with the headers of a page of s.
func (rd *Reader) renderPage(s *site, status int, v *view) *rendered {
	var b bytes.Buffer
	if err := rd.pages.ExecuteTemplate(&b, "page.html", v); err != nil {
		// The templates are the reader's own and their data is made here:
		// a failure is a bug, answered as one.
		rd.log.Error("published: rendering a page failed", "err", err)
		return &rendered{status: http.StatusInternalServerError, header: http.Header{"Content-Type": {"text/plain"}},
			body: []byte("internal error\n")}
	}
	h := http.Header{}
	setPageHeaders(h, v.Theme.css)
	if v.NoIndex {
		h.Set("X-Robots-Tag", "noindex")
	}
	if s.visibility == "public" || s.visibility == "unlisted" {
		h.Set("Cache-Control", "public, max-age=0, must-revalidate")
	} else {
		// Pages of a restricted audience are their visitors' own.
		h.Set("Cache-Control", "private, no-cache")
		h.Set("Vary", "Cookie")
	}
	return newRendered(status, h, b.Bytes())
}
