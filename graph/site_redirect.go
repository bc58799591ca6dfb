package graph

import (
	"context"
	"errors"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/uptrace/bun"

	"github.com/docsapi/docsapi/graph/engine"
	"github.com/docsapi/docsapi/graph/generated"
	"github.com/docsapi/docsapi/graph/model"
	"github.com/docsapi/docsapi/store"
)

// Redirects of published sites.
//
// A site's own redirects (GitBook's SiteRedirect) are made, changed and
// listed by those who manage the site, as its share links are; its
// visitors read the one their address names (Site.redirect), when they see
// where it leads: the published site's reader asks it of an address where
// no page is, and answers 301. The automatic redirects of a space's pages
// (PageRedirect) are left by every new live revision in which a page's path
// changed (recordPageMoves), and read by whoever reads the space, visitors
// of the sites showing it included.
//
// A source is matched in one canonical form (canonicalPath): its path
// decoded, split on slashes with empty segments dropped (a trailing slash
// counts for nothing), and each segment percent-encoded again where it
// must be (upper-case hex). Query strings are no part of it.

const (
	// maxRedirectSource is the reference's SiteRedirectSourcePath.maxLength.
	maxRedirectSource = 512
	// maxRedirectURL bounds a destination URL, as a fallback URL is.
	maxRedirectURL = 2048
	// maxSiteRedirects bounds a site's redirects.
	maxSiteRedirects = 10_000
)

// redirectSource is the reference's SiteRedirectSourcePath.pattern: a
// slash, then segments of unreserved characters and percent-encoded bytes.
var redirectSource = regexp.MustCompile(`^/(?:[A-Za-z0-9\-._~]|%[0-9A-Fa-f]{2})+(?:/(?:[A-Za-z0-9\-._~]|%[0-9A-Fa-f]{2})+)*$`)

// canonicalPath is path p (a slash, then percent-encoded segments) in its
// canonical form: decoded, empty segments dropped, each segment encoded
// again with every byte but the unreserved ones as %XX. ok is false when p
// is no such path, or names no segment.
func canonicalPath(p string) (string, bool) {
	if !strings.HasPrefix(p, "/") {
		return "", false
	}
	decoded, err := url.PathUnescape(p)
	if err != nil {
		return "", false
	}
	var b strings.Builder
	for _, seg := range strings.Split(decoded, "/") {
		if seg == "" {
			continue
		}
		b.WriteByte('/')
		b.WriteString(EscapePathSegment(seg))
	}
	return b.String(), b.Len() > 0
}

// EscapePathSegment percent-encodes every byte of seg but the unreserved
// characters (RFC 3986: letters, digits, -._~), in upper-case hex: the form
// redirect sources are kept and matched in.
func EscapePathSegment(seg string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(seg); i++ {
		c := seg[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~' {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}

// checkRedirectSource checks a source given for a redirect and returns it
// in its canonical form: the reference's pattern and length, and a path
// the reader could answer (no dot segments, nothing under its own
// resources' directory).
func checkRedirectSource(field, source string) (string, error) {
	if err := checkLength(field, source, 2, maxRedirectSource); err != nil {
		return "", err
	}
	if !redirectSource.MatchString(source) {
		return "", Invalid(field, "must be a path under the site: / then segments of letters, digits, -._~ and percent-encoded bytes, with no trailing slash")
	}
	canonical, ok := canonicalPath(source)
	if !ok {
		return "", Invalid(field, "must name a path under the site, not the site's root")
	}
	for _, seg := range strings.Split(canonical[1:], "/") {
		if seg == "." || seg == ".." || seg == "%2E" || seg == "%2E%2E" {
			return "", Invalid(field, "must not hold . or .. segments")
		}
	}
	if first, _, _ := strings.Cut(canonical[1:], "/"); first == "~gitbook" {
		return "", Invalid(field, "must not be under /~gitbook, where the published site's own files are")
	}
	return canonical, nil
}

func (r *siteResolver) Redirects(ctx context.Context, s *store.Site, page *string, limit *int, _ *int, _ *string, search *string) (*model.SiteRedirectList, error) {
	if err := requireSiteManager(ctx, s.OrganizationID); err != nil {
		return nil, err
	}
	if search != nil {
		if err := checkLength("search", *search, 0, maxRedirectSource); err != nil {
			return nil, err
		}
		if problem := engine.TextProblem(*search); problem != "" {
			return nil, Invalid("search", "%s", problem)
		}
	}
	return paginate(page, limit, listQuery[*store.SiteRedirect]{
		read: func(p store.Page) ([]*store.SiteRedirect, error) {
			return store.ListSiteRedirects(ctx, r.DB, s.OrganizationID, s.ID, store.StringOf(search), p)
		},
		key: func(rd *store.SiteRedirect) store.Keyset { return store.Keyset{Time: rd.CreatedAt, ID: rd.ID} },
	})
}

func (r *siteResolver) Redirect(ctx context.Context, s *store.Site, source string) (*model.SiteRedirectMatch, error) {
	// SECURITY: the site's visitors read the redirect their address names
	// (the read rule then asks that they see where it leads); members, as
	// every redirect, only when they manage the site.
	if !visitorReads(ctx, s.OrganizationID, s.ID) {
		if err := requireSiteManager(ctx, s.OrganizationID); err != nil {
			return nil, err
		}
	}
	if err := checkLength("source", source, 1, maxRedirectURL); err != nil {
		return nil, err
	}
	canonical, ok := canonicalPath(source)
	if !ok {
		return nil, Invalid("source", "must be a path under the site, starting with /")
	}
	rd, err := store.SiteRedirectBySource(ctx, r.DB, s.OrganizationID, s.ID, canonical)
	if err != nil {
		return nil, orNotFound(err, "redirect")
	}
	if ok, err := r.viewer(ctx).mayRead(rd); err != nil {
		return nil, err
	} else if !ok {
		return nil, NotFound("redirect")
	}
	return &model.SiteRedirectMatch{Redirect: rd}, nil
}

type siteRedirectMatchResolver struct{ *Resolver }

var _ generated.SiteRedirectMatchResolver = (*siteRedirectMatchResolver)(nil)

func (r *Resolver) SiteRedirectMatch() generated.SiteRedirectMatchResolver {
	return &siteRedirectMatchResolver{r}
}

// Target is the published address the redirect leads to now, as the API
// gives the addresses of what it names (their urls.published).
func (r *siteRedirectMatchResolver) Target(ctx context.Context, m *model.SiteRedirectMatch) (*string, error) {
	rd := m.Redirect
	site, err := r.siteOf(ctx, rd.OrganizationID, rd.SiteID)
	if err != nil {
		return nil, err
	}
	to := rd.Destination
	switch to.Kind {
	case store.RedirectToURL:
		u := store.StringOf(to.URL)
		if !strings.HasPrefix(u, "/") {
			return &u, nil // an absolute URL
		}
		return r.publishedURLWithQuery(ctx, site, u), nil
	case store.RedirectToSiteSection:
		t, err := r.treeOf(ctx, rd.SiteID, false)
		if err != nil {
			return nil, err
		}
		section := t.section(store.StringOf(to.SiteSectionID))
		if section == nil {
			return nil, nil
		}
		return r.publishedURL(ctx, site, "/"+pathEscape(section.Path)), nil
	}
	ss, err := r.visibleSiteSpace(ctx, rd.SiteID, store.StringOf(to.SiteSpaceID))
	if err != nil || ss == nil {
		return nil, err
	}
	path, err := r.siteSpacePublishedPath(ctx, ss)
	if err != nil || to.Kind == store.RedirectToSiteSpace {
		return r.publishedURL(ctx, site, path), err
	}
	t, err := r.liveTreeOfSiteSpace(ctx, ss)
	if err != nil || t == nil {
		return nil, err
	}
	if t.Page(store.StringOf(to.PageID)) == nil {
		return nil, nil
	}
	return r.publishedURL(ctx, site, path+"/"+escapePagePath(t.Path(store.StringOf(to.PageID)))), nil
}

// publishedURLWithQuery is publishedURL for a path of the site that may
// carry a query and a fragment: a share key joins its query.
func (r *Resolver) publishedURLWithQuery(ctx context.Context, s *store.Site, path string) *string {
	path, fragment, hasFragment := strings.Cut(path, "#")
	path, query, hasQuery := strings.Cut(path, "?")
	u := r.publishedURL(ctx, s, path)
	if u == nil {
		return nil
	}
	out := *u
	if hasQuery {
		if strings.Contains(out, "?") {
			out += "&" + query
		} else {
			out += "?" + query
		}
	}
	if hasFragment {
		out += "#" + fragment
	}
	return &out
}

// visibleSiteSpace is site space id of site siteID, when the caller sees
// it (visibleSiteSpaces); nil otherwise.
func (r *Resolver) visibleSiteSpace(ctx context.Context, siteID, id string) (*store.SiteSpace, error) {
	set, err := r.visibleSiteSpaces(ctx, siteID)
	if err != nil {
		return nil, err
	}
	for _, ss := range set.list() {
		if ss.ID == id {
			return ss, nil
		}
	}
	return nil, nil
}

// liveTreeOfSiteSpace is the page tree of the live revision of the space
// site space ss publishes; nil when that space is gone.
func (r *Resolver) liveTreeOfSiteSpace(ctx context.Context, ss *store.SiteSpace) (*store.PageTree, error) {
	space, err := r.loaders(ctx).Space.Load(ctx, ss.SpaceID)()
	if isNotFound(err) || errors.Is(err, store.ErrNotFound) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	return r.loaders(ctx).PageTree.Load(ctx, orgKey(space.OrganizationID, space.RevisionID))()
}

// escapePagePath escapes each segment of a page's path.
func escapePagePath(p string) string {
	segments := strings.Split(p, "/")
	for i, s := range segments {
		segments[i] = pathEscape(s)
	}
	return strings.Join(segments, "/")
}

func (r *mutationResolver) CreateSiteRedirect(ctx context.Context, organizationID, siteID string, input model.CreateSiteRedirectInput) (*store.SiteRedirect, error) {
	if err := requireSiteManager(ctx, organizationID); err != nil {
		return nil, err
	}
	if err := r.requireSite(ctx, organizationID, siteID); err != nil {
		return nil, err
	}
	source, err := checkRedirectSource("source", input.Source)
	if err != nil {
		return nil, err
	}
	to, err := r.checkRedirectDestination(ctx, siteID, input.Destination)
	if err != nil {
		return nil, err
	}
	if err := checkNoLoop("destination.url", source, to); err != nil {
		return nil, err
	}
	now := r.now()
	rd := &store.SiteRedirect{ID: store.NewID(), OrganizationID: organizationID, SiteID: siteID, Source: source,
		Destination: to, CreatedAt: now, UpdatedAt: now}
	err = r.changeSiteRows(ctx, organizationID, siteID, func(ctx context.Context, tx bun.Tx) error {
		n, err := store.CountSiteRedirects(ctx, tx, organizationID, siteID)
		if err != nil {
			return err
		}
		if n >= maxSiteRedirects {
			return OverLimit("source", "the site has %d redirects, this server's limit", maxSiteRedirects)
		}
		return redirectConflict(store.CreateSiteRedirect(ctx, tx, rd), source)
	})
	if err != nil {
		return nil, err
	}
	return rd, nil
}

func (r *mutationResolver) UpdateSiteRedirect(ctx context.Context, organizationID, siteID, siteRedirectID string, input model.UpdateSiteRedirectInput) (*store.SiteRedirect, error) {
	if err := requireSiteManager(ctx, organizationID); err != nil {
		return nil, err
	}
	source, sourceSet, err := notNull("source", input.Source)
	if err != nil {
		return nil, err
	}
	destination, destinationSet, err := notNull("destination", input.Destination)
	if err != nil {
		return nil, err
	}
	if !sourceSet && !destinationSet {
		return nil, BadRequest("give at least one of source and destination")
	}
	if err := r.requireSite(ctx, organizationID, siteID); err != nil {
		return nil, err
	}
	if sourceSet {
		if source, err = checkRedirectSource("source", source); err != nil {
			return nil, err
		}
	}
	var to store.SiteRedirectDestination
	if destinationSet {
		if to, err = r.checkRedirectDestination(ctx, siteID, &destination); err != nil {
			return nil, err
		}
	}
	var updated *store.SiteRedirect
	err = r.changeSiteRows(ctx, organizationID, siteID, func(ctx context.Context, tx bun.Tx) error {
		rd, err := store.GetSiteRedirect(ctx, tx, organizationID, siteID, siteRedirectID)
		if err != nil {
			return orNotFound(err, "redirect")
		}
		var columns []string
		if sourceSet {
			rd.Source, columns = source, append(columns, "source")
		}
		loop := "source"
		if destinationSet {
			rd.Destination, loop = to, "destination.url"
			columns = append(columns, "destination_kind", "destination_site_section_id", "destination_site_space_id",
				"destination_page_id", "destination_url")
		}
		if err := checkNoLoop(loop, rd.Source, rd.Destination); err != nil {
			return err
		}
		rd.UpdatedAt, updated = r.now(), rd
		return redirectConflict(store.UpdateSiteRedirect(ctx, tx, rd, columns...), rd.Source)
	})
	if err != nil {
		return nil, err
	}
	return updated, nil
}

func (r *mutationResolver) DeleteSiteRedirect(ctx context.Context, organizationID, siteID, siteRedirectID string) (bool, error) {
	if err := requireSiteManager(ctx, organizationID); err != nil {
		return false, err
	}
	deleted := false
	err := r.changeSiteRows(ctx, organizationID, siteID, func(ctx context.Context, tx bun.Tx) error {
		var err error
		deleted, err = store.DeleteSiteRedirect(ctx, tx, organizationID, siteID, siteRedirectID)
		return err
	})
	if errors.Is(err, errSiteMissing) {
		return false, nil // nothing to delete
	}
	return deleted, err
}

// redirectConflict is err, with a second redirect from source told as a
// conflict.
func redirectConflict(err error, source string) error {
	if errors.Is(err, store.ErrConflict) {
		return Conflict("the site has a redirect from %s already", source)
	}
	return err
}

// requireSite checks site siteID of orgID is there, before what is asked
// of it is checked against its structure: a site that is not answers 404,
// whatever the body.
func (r *Resolver) requireSite(ctx context.Context, orgID, siteID string) error {
	_, err := store.GetSite(ctx, r.DB, orgID, siteID)
	return orNotFound(err, "site")
}

// checkRedirectDestination checks where a redirect is to lead, as the
// caller sees site siteID: the fields its kind names, and only those; a
// section, a site space, a page of it the caller sees; or a URL, a path of
// the site or an absolute http(s) address (checkNoLoop then checks the
// path is not the redirect's own source).
func (r *Resolver) checkRedirectDestination(ctx context.Context, siteID string, in *model.SiteRedirectDestinationInput) (store.SiteRedirectDestination, error) {
	to := store.SiteRedirectDestination{Kind: in.Kind}
	given := map[string]*string{}
	for name, field := range map[string]interface{ ValueOK() (*string, bool) }{
		"siteSectionId": in.SiteSectionID, "siteSpaceId": in.SiteSpaceID, "pageId": in.PageID, "url": in.URL,
	} {
		if v, _ := field.ValueOK(); v != nil {
			given[name] = v
		}
	}
	needs := map[store.SiteRedirectDestinationKind][]string{
		store.RedirectToSiteSection: {"siteSectionId"},
		store.RedirectToSiteSpace:   {"siteSpaceId"},
		store.RedirectToSitePage:    {"siteSpaceId", "pageId"},
		store.RedirectToURL:         {"url"},
	}[in.Kind]
	for _, name := range []string{"siteSectionId", "siteSpaceId", "pageId", "url"} {
		needed := slices.Contains(needs, name)
		switch v := given[name]; {
		case needed && (v == nil || *v == ""):
			return to, Invalid("destination."+name, "is required for a destination of kind %s", in.Kind)
		case !needed && v != nil:
			return to, Invalid("destination."+name, "is not for a destination of kind %s", in.Kind)
		}
	}
	to.SiteSectionID, to.SiteSpaceID, to.PageID, to.URL = given["siteSectionId"], given["siteSpaceId"], given["pageId"], given["url"]
	switch in.Kind {
	case store.RedirectToURL:
		return to, checkRedirectURL("destination.url", *to.URL)
	case store.RedirectToSiteSection:
		t, err := r.treeOf(ctx, siteID, false)
		if err != nil {
			return to, err
		}
		if t.section(*to.SiteSectionID) == nil {
			return to, Invalid("destination.siteSectionId", "the site has no section %s", *to.SiteSectionID)
		}
		return to, nil
	}
	ss, err := r.visibleSiteSpace(ctx, siteID, *to.SiteSpaceID)
	if err != nil {
		return to, err
	}
	if ss == nil {
		return to, Invalid("destination.siteSpaceId", "the site has no site space %s", *to.SiteSpaceID)
	}
	if in.Kind == store.RedirectToSitePage {
		t, err := r.liveTreeOfSiteSpace(ctx, ss)
		if err != nil {
			return to, err
		}
		if t == nil || t.Page(*to.PageID) == nil {
			return to, Invalid("destination.pageId", "the site space's content has no page %s", *to.PageID)
		}
	}
	return to, nil
}

// checkRedirectURL checks a destination URL: a path of the site, starting
// with a single slash (with a query or a fragment if any), or an absolute
// http(s) URL.
func checkRedirectURL(field, u string) error {
	if err := checkLength(field, u, 1, maxRedirectURL); err != nil {
		return err
	}
	if !strings.HasPrefix(u, "/") {
		return checkURL(field, u, maxRedirectURL)
	}
	// SECURITY: a path stays on the site: "//host" and "/\host" are
	// addresses of another host to a browser, and a visitor's browser must
	// never be sent off the site by what reads as a path.
	parsed, err := url.Parse(u)
	if strings.HasPrefix(u, "//") || strings.ContainsAny(u, "\\ ") || engine.TextProblem(u) != "" || err != nil ||
		parsed.Scheme != "" || parsed.Host != "" {
		return Invalid(field, "must be a path of the site (starting with a single /) or an absolute http or https URL")
	}
	for _, r := range u {
		if r < 0x20 || r == 0x7f {
			return Invalid(field, "must not hold control characters")
		}
	}
	return nil
}

// checkNoLoop refuses a redirect whose destination, a path of the site,
// is its own source: it would send visitors back to where they are.
func checkNoLoop(field, source string, to store.SiteRedirectDestination) error {
	if to.Kind != store.RedirectToURL || !strings.HasPrefix(store.StringOf(to.URL), "/") {
		return nil
	}
	path, _, _ := strings.Cut(store.StringOf(to.URL), "#")
	path, _, _ = strings.Cut(path, "?")
	if canonical, ok := canonicalPath(path); ok && canonical == source {
		return Invalid(field, "leads back to the redirect's own source")
	}
	return nil
}

// Automatic redirects of pages.

func (r *spaceResolver) PageRedirect(ctx context.Context, s *store.Space, path string) (*store.PageRedirect, error) {
	path = strings.Trim(path, "/")
	if path == "" || len(path) > maxRedirectURL {
		return nil, NotFound("page redirect")
	}
	rd, err := store.PageRedirectAt(ctx, r.DB, s.OrganizationID, s.ID, path)
	if err != nil {
		return nil, orNotFound(err, "page redirect")
	}
	// Kept so by every new revision (store.RecordPageMoves): the page is
	// in the current content, at another path.
	t, err := r.loaders(ctx).PageTree.Load(ctx, orgKey(s.OrganizationID, s.RevisionID))()
	if err != nil {
		return nil, err
	}
	if t.Page(rd.PageID) == nil || t.ByPath(path) != nil {
		return nil, NotFound("page redirect")
	}
	return rd, nil
}

type pageRedirectResolver struct{ *Resolver }

var _ generated.PageRedirectResolver = (*pageRedirectResolver)(nil)

func (r *Resolver) PageRedirect() generated.PageRedirectResolver { return &pageRedirectResolver{r} }

// Page is the page the redirect leads to, in the space's current content.
func (r *pageRedirectResolver) Page(ctx context.Context, rd *store.PageRedirect) (*model.PageNode, error) {
	s, err := r.loaders(ctx).Space.Load(ctx, rd.SpaceID)()
	if err != nil {
		return nil, err
	}
	rev, err := store.GetRevision(ctx, r.DB, s.OrganizationID, s.ID, s.RevisionID)
	if err != nil {
		return nil, err
	}
	t, err := r.tree(ctx, rev)
	if err != nil {
		return nil, err
	}
	p := t.Page(rd.PageID)
	if p == nil {
		return nil, NotFound("page")
	}
	return &model.PageNode{RevisionPage: p, Revision: rev, Tree: t}, nil
}

// recordPageMoves keeps space s's automatic redirects up to date as its
// live content goes from the pages before to the tree after (store.RecordPageMoves),
// in the transaction that makes it so.
func (r *Resolver) recordPageMoves(ctx context.Context, tx bun.Tx, s *store.Space, before []*store.RevisionPage, after *store.PageTree) error {
	return store.RecordPageMoves(ctx, tx, s.OrganizationID, s.ID, store.NewPageTree(before), after, r.now())
}
