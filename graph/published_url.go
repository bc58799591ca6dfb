package graph

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/docsapi/docsapi/graph/model"
	"github.com/docsapi/docsapi/graph/siteroute"
	"github.com/docsapi/docsapi/store"
)

// URL resolution for custom front ends (GitBook's
// resolvePublishedContentByUrl): what a published address shows one
// visitor. It decides nothing itself about who reads what: the address is
// admitted as the reader admits it (AdmitVisitor: the site it names,
// published, its audience satisfied by the visitor's token and the
// address's share key), then the site is walked as that visitor, with the
// visitor's read rules, by the routing the reader uses (siteroute). An
// address leading to nothing that visitor may read is not found, whatever
// the reason (no such site, not published, not this visitor's, a hidden
// section, no such page), as the reader answers it.
//
// Who may ask: the members who may read the sites of the site's
// organization (contentRole), as they read the site itself; to everyone
// else the address is not found. A visitor API token may not ask (it reads
// one visitor's site; it does not make visitors).

// maxPublishedURL bounds an address to resolve (the reference's URL).
const maxPublishedURL = 2048

// errNoContent is what every address leading to nothing the visitor may
// read answers.
var errNoContent = NotFound("published content")

func (r *queryResolver) PublishedContentByURL(ctx context.Context, input model.ResolvePublishedContentInput) (model.PublishedContentLookup, error) {
	// SECURITY: members only (callerRequired refuses visitors before).
	if _, err := CallerFrom(ctx); err != nil {
		return nil, err
	}
	u, err := parsePublishedURL(input.URL)
	if err != nil {
		return nil, err
	}
	a, ok := r.publishedAddressOf(ctx, u)
	if !ok {
		return nil, errNoContent
	}
	if a.spaceID != "" {
		return r.spaceAddress(ctx, a.spaceID)
	}
	if a.req.OrganizationID != "" {
		// SECURITY: only for those who may read the organization's sites.
		if _, err := contentRole(ctx, a.req.OrganizationID, "site"); err != nil {
			return nil, errNoContent
		}
	}
	site, err := r.publishedSite(ctx, a.req)
	if isNotFound(err) {
		return nil, errNoContent
	} else if err != nil {
		return nil, err
	}
	// SECURITY: the site's organization's, whichever way the address named
	// the site (a custom hostname names no organization).
	if _, err := contentRole(ctx, site.OrganizationID, "site"); err != nil {
		return nil, errNoContent
	}
	a.req.ShareKey = u.Query().Get("share")
	if vis, ok := input.Visitor.ValueOK(); ok && vis != nil {
		if token, _ := vis.JwtToken.ValueOK(); token != nil {
			// GitBook's one token is both: the proof of a visitor-auth
			// site, and signed claims on an adaptive site of another
			// audience (AdmitVisitor takes each where it applies).
			a.req.Token, a.req.AdaptiveToken = *token, *token
		}
		a.req.Unsigned, _ = vis.UnsignedClaims.ValueOK()
	}
	v, err := r.admit(ctx, site, requestProofs(a.req))
	var authRequired *VisitorAuthRequired
	switch {
	case errors.As(err, &authRequired):
		if redirect, _ := input.RedirectOnError.ValueOK(); redirect != nil && *redirect && authRequired.FallbackURL != "" {
			return &model.PublishedContentRedirect{Target: model.PublishedContentRedirectTargetExternal,
				Redirect: authRequired.LoginURL(u.EscapedPath())}, nil
		}
		return nil, errNoContent
	case isNotFound(err):
		return nil, errNoContent
	case err != nil:
		return nil, err
	}
	return r.visitorContentAt(ctx, v, a, u)
}

// parsePublishedURL is the address to resolve, or why it is none.
func parsePublishedURL(raw string) (*url.URL, error) {
	if len(raw) > maxPublishedURL {
		return nil, Invalid("url", "must be at most %d characters", maxPublishedURL)
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, Invalid("url", "must be an absolute http or https address")
	}
	return u, nil
}

// publishedAddress is what an address names, as the reader's route table
// reads it (published/routes.go): a site, by its custom hostname or by
// organization and name under the published URL, with the segments under
// the site's base; or a space's published address.
type publishedAddress struct {
	req VisitorRequest
	// base is the site's path on the address's host (no trailing slash,
	// "" at the root of a custom hostname), as the address writes it.
	base     string
	segments []string
	spaceID  string
}

// publishedAddressOf reads address u; ok is false when it is no published
// address.
func (r *Resolver) publishedAddressOf(ctx context.Context, u *url.URL) (a publishedAddress, ok bool) {
	host, prefix := r.URLs.publishedAt()
	if sameHost(u, host) {
		rest, under := strings.CutPrefix(u.Path, prefix+"/")
		if !under {
			return a, false
		}
		segments := strings.Split(rest, "/")
		switch {
		case len(segments) >= 2 && segments[0] == "s" && segments[1] != "":
			return publishedAddress{spaceID: segments[1]}, true
		case len(segments) >= 2 && segments[0] != "" && segments[1] != "":
			return publishedAddress{req: VisitorRequest{OrganizationID: segments[0], SiteName: segments[1]},
				base:     prefix + "/" + url.PathEscape(segments[0]) + "/" + url.PathEscape(segments[1]),
				segments: siteroute.Segments(strings.Join(segments[2:], "/"))}, true
		}
		return a, false
	}
	hostname := strings.ToLower(u.Hostname())
	if !r.SiteHostname(ctx, hostname) {
		return a, false
	}
	return publishedAddress{req: VisitorRequest{Hostname: hostname}, segments: siteroute.Segments(u.Path)}, true
}

// sameHost tells whether u is on host (lower case, with its port unless
// the scheme's default).
func sameHost(u *url.URL, host string) bool {
	h := strings.ToLower(u.Host)
	if p := u.Port(); (p == "80" && u.Scheme == "http") || (p == "443" && u.Scheme == "https") {
		h = strings.ToLower(u.Hostname())
	}
	return h == host
}

// visitorContentAt is what a's segments lead visitor v to on its site: the
// site structure and the page walked as v (u is the address, for a
// redirect).
func (r *Resolver) visitorContentAt(ctx context.Context, v *Visitor, a publishedAddress, u *url.URL) (model.PublishedContentLookup, error) {
	// The walk is the visitor's, with loaders of its own: nothing read for
	// the member asking is served to it, nor the other way round.
	vctx := WithLoaders(WithVisitor(ctx, v), NewLoaders(r.DB))
	l, err := r.layoutOf(vctx, v.site.ID)
	if err != nil {
		return nil, err
	}
	place, ok := l.Route(a.segments)
	if !ok {
		return r.redirectAt(vctx, v, a, l, nil, u)
	}
	ss := l.siteSpaces[place.Section][place.SiteSpace]
	// The space whole (a site's spaces may be read as summaries, without
	// their revision): one the visitor reads, as its site space is one the
	// visitor sees (visitorSeesSiteSpace).
	space, err := r.loaders(vctx).Space.Load(vctx, ss.SpaceID)()
	if isNotFound(err) || errors.Is(err, store.ErrNotFound) {
		return nil, errNoContent
	} else if err != nil {
		return nil, err
	}
	address := l.Address(place.Section, place.SiteSpace)
	if place.PagePath != "" {
		tree, err := r.loaders(vctx).PageTree.Load(vctx, orgKey(space.OrganizationID, space.RevisionID))()
		if err != nil {
			return nil, err
		}
		p := tree.ByPath(place.PagePath)
		if p == nil {
			return r.redirectAt(vctx, v, a, l, &place, u)
		}
		if p.Type != store.PageDocument {
			// A group has no body: its address leads to its first page,
			// as the reader sends its visitors there.
			first := firstDocumentUnder(tree, p)
			if first == nil {
				return nil, errNoContent
			}
			to := *u
			to.Path, to.RawPath = a.base+address+"/"+tree.Path(first.ID), ""
			return &model.PublishedContentRedirect{Target: model.PublishedContentRedirectTargetContent, Redirect: to.String()}, nil
		}
	}
	out := &model.PublishedSiteContent{Organization: v.site.OrganizationID, Site: v.site.ID, SiteSpace: ss.ID,
		Space: space.ID, Revision: space.RevisionID, Pathname: place.PagePath,
		BasePath: a.base + address + "/", SiteBasePath: a.base + "/", Complete: true,
		CanonicalURL: r.sitePublishedBase(v.site) + address + "/" + escapeSegments(place.PagePath), Claims: v.claims}
	if ss.SectionID != nil {
		out.SiteSection = ss.SectionID
	}
	if v.proof == ProofShareKey {
		out.ShareKey = &v.shareKey
	}
	if id := contextID(v); id != "" {
		out.ContextID = &id
	}
	var spaces []string
	for _, list := range l.siteSpaces {
		for _, s := range list {
			spaces = append(spaces, s.SpaceID)
		}
	}
	out.APIToken, out.APITokenExpiresAt, err = r.issueVisitorToken(ctx, v, tokenPlace{section: store.StringOf(ss.SectionID),
		siteSpace: ss.ID, space: space.ID, spaces: sortedUnique(spaces)})
	return out, err
}

// redirectAt is what an address of visitor v's site that leads to no
// content answers (a, read from address u; l, the site as v sees it;
// place, the site space of l its segments named, with the page path found
// in none of its pages, or nil when they named no site space): a redirect
// where the site sends that visitor instead, or not found.
//
// This is where the reader's redirects are looked up, in the reader's
// order (a page at the address is always served first, so only an
// address without content gets here): a page's old path in place's
// space, then the site's redirect from a.segments, each as v may follow
// it (ctx holds v and its loaders). On the site, the redirect is the
// address in u's form (its host, base and query, as a group's first page
// is answered) with target content; off the site, target external. A
// site without redirects answers not found.
func (r *Resolver) redirectAt(ctx context.Context, v *Visitor, a publishedAddress, l *siteLayout, place *siteroute.Place, u *url.URL) (model.PublishedContentLookup, error) {
	path, err := r.movedPageAddress(ctx, l, place)
	if err == nil && path == "" {
		var external string
		if path, external, err = r.siteRedirectAddress(ctx, v, a, l); external != "" {
			return &model.PublishedContentRedirect{Target: model.PublishedContentRedirectTargetExternal, Redirect: external}, nil
		}
	}
	if err != nil {
		return nil, err
	}
	// The address's own form (host, base), and its query, unless the
	// redirect's destination has a query or a fragment of its own (as
	// the reader answers).
	to := *u
	dest, fragment, hasFragment := strings.Cut(path, "#")
	dest, query, hasQuery := strings.Cut(dest, "?")
	to.Path, to.RawPath, to.Fragment = a.base+dest, "", fragment
	if hasQuery || hasFragment {
		to.RawQuery = query
	}
	if path == "" || siteroute.SameAddress(to.Path, u.Path) {
		return nil, errNoContent // none, or one back to the address itself
	}
	return &model.PublishedContentRedirect{Target: model.PublishedContentRedirectTargetContent, Redirect: to.String()}, nil
}

// movedPageAddress is the address under the site (as l shows it) of the
// page that was at place's page path in its space (the space's automatic
// redirect); "" when there was none.
func (r *Resolver) movedPageAddress(ctx context.Context, l *siteLayout, place *siteroute.Place) (string, error) {
	if place == nil || place.PagePath == "" {
		return "", nil
	}
	space, err := r.loaders(ctx).Space.Load(ctx, l.siteSpaces[place.Section][place.SiteSpace].SpaceID)()
	if err != nil {
		return "", orNone(err)
	}
	rd, err := (&spaceResolver{r}).PageRedirect(ctx, space, place.PagePath)
	if err != nil {
		return "", orNone(err)
	}
	t, err := r.loaders(ctx).PageTree.Load(ctx, orgKey(space.OrganizationID, space.RevisionID))()
	if err != nil {
		return "", err
	}
	return l.Address(place.Section, place.SiteSpace) + "/" + escapePagePath(t.Path(rd.PageID)), nil
}

// siteRedirectAddress is where the site's redirect from a's segments leads
// visitor v: an address under the site (path, perhaps with a query), or
// another site's (external); neither when the site has none the visitor
// may follow (the read rules hand it only those leading where it may go,
// and l holds only what it sees).
func (r *Resolver) siteRedirectAddress(ctx context.Context, v *Visitor, a publishedAddress, l *siteLayout) (path, external string, err error) {
	if len(a.segments) == 0 {
		return "", "", nil
	}
	escaped := make([]string, len(a.segments))
	for i, seg := range a.segments {
		escaped[i] = EscapePathSegment(seg)
	}
	m, err := (&siteResolver{r}).Redirect(ctx, v.site, "/"+strings.Join(escaped, "/"))
	if err != nil {
		return "", "", orNone(err)
	}
	to := m.Redirect.Destination
	switch to.Kind {
	case store.RedirectToURL:
		if u := store.StringOf(to.URL); !strings.HasPrefix(u, "/") {
			return "", u, nil
		} else {
			return u, "", nil
		}
	case store.RedirectToSiteSection:
		for i, list := range l.siteSpaces {
			if j := l.DefaultSiteSpace(i); j >= 0 && store.StringOf(list[j].SectionID) == store.StringOf(to.SiteSectionID) {
				return l.Address(i, j) + "/", "", nil
			}
		}
		return "", "", nil
	}
	for i, list := range l.siteSpaces {
		for j, ss := range list {
			if ss.ID != store.StringOf(to.SiteSpaceID) {
				continue
			}
			if to.Kind == store.RedirectToSiteSpace {
				return l.Address(i, j) + "/", "", nil
			}
			t, err := r.liveTreeOfSiteSpace(ctx, ss)
			if err != nil || t == nil || t.Page(store.StringOf(to.PageID)) == nil {
				return "", "", err
			}
			return l.Address(i, j) + "/" + escapePagePath(t.Path(store.StringOf(to.PageID))), "", nil
		}
	}
	return "", "", nil
}

// orNone is err, but nil for a lookup that found nothing (or was asked
// of what could be no source): a redirect there is none.
func orNone(err error) error {
	var e *Error
	if errors.Is(err, store.ErrNotFound) || errors.As(err, &e) && (e.Status == http.StatusNotFound || e.Status == http.StatusBadRequest) {
		return nil
	}
	return err
}

// spaceAddress is where a space's published address leads
// (/published/s/{space}, as the reader's serveSpace): a redirect to the
// space in a published site that shows it to anyone, which the caller may
// read the sites of.
func (r *Resolver) spaceAddress(ctx context.Context, spaceID string) (model.PublishedContentLookup, error) {
	sites, err := r.OpenSitesOfSpace(ctx, spaceID)
	if err != nil {
		return nil, err
	}
	for _, s := range sites {
		// SECURITY: only for those who may read the organization's sites.
		if _, err := contentRole(ctx, s.OrganizationID, "site"); err != nil {
			return nil, errNoContent
		}
		v, err := r.AdmitVisitor(ctx, VisitorRequest{OrganizationID: s.OrganizationID, SiteName: s.ID})
		if err != nil {
			continue
		}
		l, err := r.layoutOf(WithLoaders(WithVisitor(ctx, v), NewLoaders(r.DB)), s.ID)
		if err != nil {
			return nil, err
		}
		for i, list := range l.siteSpaces {
			for j, ss := range list {
				if ss.SpaceID == spaceID {
					return &model.PublishedContentRedirect{Target: model.PublishedContentRedirectTargetContent,
						Redirect: r.sitePublishedBase(s) + l.Address(i, j) + "/"}, nil
				}
			}
		}
	}
	return nil, errNoContent
}

// siteLayout is a site's structure as the caller of ctx (a visitor) sees
// it, for siteroute to route addresses in: with the site spaces of each of
// its sections (siteSpaces[i], of Sections[i]).
type siteLayout struct {
	siteroute.Site
	siteSpaces [][]*store.SiteSpace
}

// layoutOf is site siteID's layout for the caller of ctx: its sections in
// order, those showing the caller no site space left out, or its site
// spaces at the root of a site without sections; what the reader builds
// of PublishedSite's structure (published/site.go), from the same tree.
func (r *Resolver) layoutOf(ctx context.Context, siteID string) (*siteLayout, error) {
	t, err := r.treeOf(ctx, siteID, true)
	if err != nil {
		return nil, err
	}
	l := &siteLayout{}
	add := func(path string, isDefault bool, list []*store.SiteSpace) {
		sec := siteroute.Section{Path: path, Default: isDefault}
		for _, ss := range list {
			sec.SiteSpaces = append(sec.SiteSpaces, siteroute.SiteSpace{Path: ss.Path, Default: ss.IsDefault})
		}
		l.Sections, l.siteSpaces = append(l.Sections, sec), append(l.siteSpaces, list)
	}
	if !t.hasSections() {
		l.Root = true
		add("", true, t.siteSpacesIn(nil))
		return l, nil
	}
	for _, s := range t.orderedSections() {
		if list := t.siteSpacesIn(&s.ID); len(list) > 0 {
			add(s.Path, s.IsDefault, list)
		}
	}
	return l, nil
}

// firstDocumentUnder is the first page with a body at or under p, depth
// first: where a group's address leads.
func firstDocumentUnder(t *store.PageTree, p *store.RevisionPage) *store.RevisionPage {
	if p.Type == store.PageDocument {
		return p
	}
	for _, child := range t.Children(&p.ID) {
		if d := firstDocumentUnder(t, child); d != nil {
			return d
		}
	}
	return nil
}

// escapeSegments escapes each segment of a slash-separated path.
func escapeSegments(p string) string {
	segments := strings.Split(p, "/")
	for i, s := range segments {
		segments[i] = url.PathEscape(s)
	}
	return strings.Join(segments, "/")
}
