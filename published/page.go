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
	rd.serveKept(w, r, v, a, strings.Join(segments, "/"), seq, func() *rendered { return rd.makePage(w, r, v, a, segments) })
}

// serveKept answers r with what the address path of site a is for visitor
// v: kept in the cache while fresh, else made by makeAnswer (which reads the
// site's structure first, so that every condition of the site is part of
// what is kept: cache.go) and kept when it is a 200. makeAnswer answers
// otherwise (a redirect, an error) and returns nil.
func (rd *Reader) serveKept(w http.ResponseWriter, r *http.Request, v *graph.Visitor, a address, path string, seq uint64, makeAnswer func() *rendered) {
	if p := rd.cache.get(rd.cache.key(v, a.base, path)); p != nil {
		p.write(w, r)
		return
	}
	p := makeAnswer()
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
	at, err := rd.locate(ctx, v, a, segments)
	if err != nil {
		rd.failed(w, r, err)
		return nil
	}
	if at.first != nil {
		http.Redirect(w, r, rd.pageURL(at.s, at.ss, at.first), http.StatusFound)
		return nil
	}
	if at.p == nil {
		// An address where a page was, or that the site redirects.
		to, err := rd.redirectFor(r, v, at.s, at.ss, at.c, at.path, segments)
		if err != nil {
			rd.failed(w, r, err)
			return nil
		}
		if to != "" {
			rd.writeRedirect(w, r, at.s, to)
			return nil
		}
		view := rd.newView(at.s, at.ss, at.c, a)
		view.NotFound = true
		view.PageTitle = "Page not found"
		view.Tree = rd.navTree(at.s, at.ss, at.c, at.c.top, nil)
		return rd.renderPage(at.s, http.StatusNotFound, view)
	}
	body, err := rd.loadBody(ctx, at)
	if err != nil {
		rd.failed(w, r, err)
		return nil
	}
	view := rd.newView(at.s, at.ss, at.c, a)
	if err := rd.fillPage(view, at.s, at.ss, at.c, at.p, body); err != nil {
		rd.failed(w, r, err)
		return nil
	}
	return rd.renderPage(at.s, http.StatusOK, view)
}

// located is what an address under a site names for one visitor: the
// site, the site space, its content and the page (nil when there is none
// at that path); first, for a group's address, the first document under it
// (a group has no body: its address leads there).
type located struct {
	s     *site
	ss    *siteSpace
	c     *content
	p     *page
	first *page
	// path is the page path the address names in ss.
	path string
}

// errNothingShown: the site shows this visitor no site space at all (every
// section hidden by its condition); answered as not found.
var errNothingShown = &operationError{status: http.StatusNotFound, message: "the site shows nothing"}

// locate reads what segments name under site a, as visitor v reads it.
func (rd *Reader) locate(ctx context.Context, v *graph.Visitor, a address, segments []string) (*located, error) {
	s, err := rd.loadSite(ctx, v, a)
	if err != nil {
		return nil, err
	}
	ss, pagePath, ok := s.route(segments)
	if !ok {
		return nil, errNothingShown
	}
	c, err := rd.loadContent(ctx, ss.space.ID)
	if err != nil {
		return nil, err
	}
	at := &located{s: s, ss: ss, c: c, p: c.byPath[pagePath], path: pagePath}
	if pagePath == "" {
		at.p = c.frontPage()
	}
	if at.p != nil && at.p.Type != pageDocument {
		at.first, at.p = c.firstDocumentUnder(at.p), nil
	}
	return at, nil
}

// loadBody reads the body of the page at names. When the space changed
// between the reads of its content and of the page, both are read again
// (at then holds the new ones); a page gone since is not found.
func (rd *Reader) loadBody(ctx context.Context, at *located) (*pageBody, error) {
	body, err := rd.loadPage(ctx, at.c, at.p)
	if !errors.Is(err, errRevisionMoved) {
		return body, err
	}
	if at.c, err = rd.loadContent(ctx, at.ss.space.ID); err != nil {
		return nil, err
	}
	if at.p = at.c.byPath[at.p.Path]; at.p == nil {
		return nil, &operationError{status: http.StatusNotFound, message: "page not found"}
	}
	return rd.loadPage(ctx, at.c, at.p)
}

// loadSite reads the site visitor v reads at address a, as it sees it.
// What the site shows of its spaces is part of everything made of it: a
// change to one of them is a change to the site.
func (rd *Reader) loadSite(ctx context.Context, v *graph.Visitor, a address) (*site, error) {
	var d siteData
	err := rd.run(ctx, "PublishedSite", map[string]any{"organizationId": v.Site().OrganizationID, "siteId": v.Site().ID}, &d)
	if err != nil {
		return nil, err
	}
	s := newSite(&d, a.base)
	s.hostname = a.hostname
	rd.cache.showing(s.id, s.spaceIDs())
	return s, nil
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

// canonicalURL is the one absolute address of page p of site space ss
// (content c) that search engines are given: the one the site's
// navigation uses, the site space's own for its front page.
func (rd *Reader) canonicalURL(s *site, ss *siteSpace, c *content, p *page) string {
	if p == c.frontPage() {
		return rd.absolute(s, s.addressOf(ss)+"/")
	}
	return rd.absolute(s, rd.pageURL(s, ss, p))
}

// linksOf resolves the links of page p of site space ss (content c) to
// the site's addresses: absolute ones, for answers read away from the
// site (Markdown), else as the site's pages link.
func (rd *Reader) linksOf(s *site, ss *siteSpace, c *content, p *page, absolute bool) links {
	l := links{c: c, from: path.Dir(p.SourcePath),
		pageURL: func(p *page) string { return rd.pageURL(s, ss, p) },
		fileURL: func(f *fileRef) string { return rd.fileURL(s, f) }}
	if absolute {
		l.pageURL = func(p *page) string { return rd.absolute(s, rd.pageURL(s, ss, p)) }
		l.fileURL = func(f *fileRef) string { return rd.absolute(s, rd.fileURL(s, f)) }
	}
	return l
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
	// MarkdownURL is the page's address as Markdown (llms.go).
	MarkdownURL string
	StyleURL    string
	ScriptURL   string
	Theme       theme
	Logo        *logo
	FaviconURL  string

	Sections []tab
	Variants []link
	Variant  string
	Tree     []*navPage

	NotFound bool
	Search   *searchView
	// SearchURL is where the search box sends its query; SiteSpaceID the
	// site space it searches first.
	SearchURL   string
	SiteSpaceID string
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
	v := &view{SiteURL: s.base + "/", Lang: languageOf(s, ss),
		NoIndex:  s.visibility != "public",
		StyleURL: s.base + "/" + gitbookDir + "/static/" + rd.assets.style, ScriptURL: s.base + "/" + gitbookDir + "/static/" + rd.assets.script}
	if v.SiteURL == "/" && s.base == "" {
		v.SiteURL = "/"
	}
	v.SearchURL = s.base + "/" + gitbookDir + "/search"
	v.SiteSpaceID = ss.id
	v.SiteTitle = s.titleOf(ss)
	settings := s.settingsOf(ss)
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
	v.Canonical = rd.canonicalURL(s, ss, c, p)
	v.MarkdownURL = rd.pageURL(s, ss, p) + markdownSuffix
	// A page that asks to stay out of indexes says so to search engines.
	v.NoIndex = v.NoIndex || p.NoIndex || p.NoRobotsIndex
	v.Tree = rd.navTree(s, ss, c, c.top, p)
	for _, anc := range c.ancestors(p) {
		l := link{Title: anc.Title}
		if anc.Type == pageDocument {
			l.URL = rd.pageURL(s, ss, anc)
		}
		v.Breadcrumbs = append(v.Breadcrumbs, l)
	}
	out, err := render.Render(deref(body.Markdown), render.Options{Links: rd.linksOf(s, ss, c, p, false)})
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
	setAudienceHeaders(h, s, v.NoIndex)
	return newRendered(status, h, b.Bytes())
}

// setAudienceHeaders sets the headers of an answer of site s that its
// audience decides: who may keep it, and whether search engines may index
// it (never a site that is not public; noIndex: not this answer).
func setAudienceHeaders(h http.Header, s *site, noIndex bool) {
	if noIndex || s.visibility != "public" {
		h.Set("X-Robots-Tag", "noindex")
	}
	if s.visibility == "public" || s.visibility == "unlisted" {
		h.Set("Cache-Control", "public, max-age=0, must-revalidate")
	} else {
		// Answers for a restricted audience are their visitors' own.
		h.Set("Cache-Control", "private, no-cache")
		h.Set("Vary", "Cookie")
	}
}
