package graph

import (
	"context"
	"errors"

	"github.com/99designs/gqlgen/graphql"
	"github.com/uptrace/bun"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/docsapi/docsapi/graph/engine"
	"github.com/docsapi/docsapi/graph/generated"
	"github.com/docsapi/docsapi/graph/model"
	"github.com/docsapi/docsapi/store"
)

// Reading a site's structure: every level comes from a loader keyed by the
// site, so a whole tree costs one query per level whatever its fan-out.

// treeOf assembles the site's structure from the request's loaders. The
// loads are started together, so their queries run concurrently. The tree
// of groups and sections alone is memoized for the request: every group's
// children and every site space's address ask for it.
func (r *Resolver) treeOf(ctx context.Context, siteID string, withSiteSpaces bool) (*siteTree, error) {
	if !withSiteSpaces {
		return memoized(r.loaders(ctx), siteTreeMemo(siteID), func() (*siteTree, error) {
			return r.assembleTree(ctx, siteID, false)
		})
	}
	return r.assembleTree(ctx, siteID, true)
}

func (r *Resolver) assembleTree(ctx context.Context, siteID string, withSiteSpaces bool) (*siteTree, error) {
	l := r.loaders(ctx)
	groups, sections := l.SiteGroups.Load(ctx, siteID), l.SiteSections.Load(ctx, siteID)
	t := &siteTree{}
	if withSiteSpaces {
		set, err := r.visibleSiteSpaces(ctx, siteID)
		if err != nil {
			return nil, err
		}
		if set != nil {
			t.siteSpaces, t.inSection = set.all, set.inSection
		}
	}
	var err error
	if t.groups, err = groups(); err != nil {
		return nil, err
	}
	if t.sections, err = sections(); err != nil {
		return nil, err
	}
	if v := VisitorFrom(ctx); v != nil {
		// SECURITY: a visitor's tree holds the sections it sees, and the
		// groups that hold any.
		t.keepVisible(v)
	}
	t.sectionByID = make(map[string]*store.SiteSection, len(t.sections))
	for _, s := range t.sections {
		t.sectionByID[s.ID] = s
	}
	return t, nil
}

func (r *siteResolver) Structure(ctx context.Context, s *store.Site) (*model.SiteStructure, error) {
	if fc := graphql.GetFieldContext(ctx); fc != nil {
		r.prefetchStructure(ctx, s.ID, fc.Field.Selections)
	}
	t, err := r.treeOf(ctx, s.ID, true)
	if err != nil {
		return nil, err
	}
	out := &model.SiteStructure{Type: "sections", Structure: []store.StructureItem{}}
	if !t.hasSections() {
		out.Type = "siteSpaces"
		for _, ss := range t.siteSpacesIn(nil) {
			out.Structure = append(out.Structure, ss)
		}
		return out, nil
	}
	for _, e := range t.children(nil) {
		out.Structure = append(out.Structure, e.item())
	}
	return out, nil
}

func (r *siteResolver) SectionGroups(ctx context.Context, s *store.Site, page *string, limit *int, _ *int, _ *string) (*model.SiteSectionGroupList, error) {
	t, err := r.treeOf(ctx, s.ID, false)
	if err != nil {
		return nil, err
	}
	return paginateOrdered(t.orderedGroups(), page, limit, func(g *store.SiteSectionGroup) string { return g.ID })
}

func (r *siteResolver) Sections(ctx context.Context, s *store.Site, page *string, limit *int, _ *int, _ *string) (*model.SiteSectionList, error) {
	t, err := r.treeOf(ctx, s.ID, false)
	if err != nil {
		return nil, err
	}
	return paginateOrdered(t.orderedSections(), page, limit, func(s *store.SiteSection) string { return s.ID })
}

func (r *siteResolver) SiteSpaceList(ctx context.Context, s *store.Site, page *string, limit *int, _ *int, _ *string, isDefault *bool) (*model.SiteSpaceList, error) {
	t, err := r.treeOf(ctx, s.ID, true)
	if err != nil {
		return nil, err
	}
	all := t.orderedSiteSpaces()
	if isDefault != nil {
		// The default site space of the site is the default one at the root,
		// or in the default section.
		var container *string
		if d := t.defaultSection(); d != nil {
			container = &d.ID
		}
		var kept []*store.SiteSpace
		for _, ss := range all {
			isSiteDefault := ss.IsDefault && sameContainer(ss.SectionID, container)
			if isSiteDefault == *isDefault {
				kept = append(kept, ss)
			}
		}
		all = kept
	}
	return paginateOrdered(all, page, limit, func(s *store.SiteSpace) string { return s.ID })
}

type siteSectionGroupResolver struct{ *Resolver }

var _ generated.SiteSectionGroupResolver = (*siteSectionGroupResolver)(nil)

func (r *Resolver) SiteSectionGroup() generated.SiteSectionGroupResolver {
	return &siteSectionGroupResolver{r}
}

func (r *siteSectionGroupResolver) Children(ctx context.Context, g *store.SiteSectionGroup) ([]store.StructureItem, error) {
	t, err := r.treeOf(ctx, g.SiteID, false)
	if err != nil {
		return nil, err
	}
	out := []store.StructureItem{}
	for _, e := range t.children(&g.ID) {
		out = append(out, e.item())
	}
	return out, nil
}

func (r *siteSectionGroupResolver) Sections(ctx context.Context, g *store.SiteSectionGroup) ([]*store.SiteSection, error) {
	t, err := r.treeOf(ctx, g.SiteID, false)
	if err != nil {
		return nil, err
	}
	out := []*store.SiteSection{}
	for _, e := range t.children(&g.ID) {
		if e.section != nil {
			out = append(out, e.section)
		}
	}
	return out, nil
}

type siteSectionResolver struct{ *Resolver }

var _ generated.SiteSectionResolver = (*siteSectionResolver)(nil)

func (r *Resolver) SiteSection() generated.SiteSectionResolver { return &siteSectionResolver{r} }

func (r *siteSectionResolver) SiteSpaces(ctx context.Context, s *store.SiteSection) ([]*store.SiteSpace, error) {
	set, err := r.visibleSiteSpaces(ctx, s.SiteID)
	if err != nil {
		return nil, err
	}
	var out []*store.SiteSpace
	if set != nil {
		out = set.inSection[s.ID]
	}
	if out == nil {
		out = []*store.SiteSpace{}
	}
	return out, nil
}

func (r *siteSectionResolver) Urls(ctx context.Context, s *store.SiteSection) (*model.SiteSectionURLs, error) {
	site, err := r.siteOf(ctx, s.OrganizationID, s.SiteID)
	if err != nil {
		return nil, err
	}
	return &model.SiteSectionURLs{Published: r.publishedURL(ctx, site, "/"+pathEscape(s.Path))}, nil
}

type siteSpaceResolver struct{ *Resolver }

var _ generated.SiteSpaceResolver = (*siteSpaceResolver)(nil)

func (r *Resolver) SiteSpace() generated.SiteSpaceResolver { return &siteSpaceResolver{r} }

func (r *siteSpaceResolver) Space(ctx context.Context, ss *store.SiteSpace) (*store.Space, error) {
	return r.spaceOfSiteSpace(ctx, ss)
}

// spaceOfSiteSpace is the space ss publishes, from the spaces of its site
// read once for the whole tree.
func (r *Resolver) spaceOfSiteSpace(ctx context.Context, ss *store.SiteSpace) (*store.Space, error) {
	l := r.loaders(ctx)
	summaries := spaceSummariesSuffice(ctx)
	spaces, err := memoized(l, siteSpacesMemo(ss.SiteID, summaries), func() (map[string]*store.Space, error) {
		// Whole spaces serve a reader of summaries too.
		if p, ok := l.prefetchedSiteSpaces(ss.SiteID); ok && (p.summaries == summaries || !p.summaries) {
			v, err := p.read()
			return v.spaces, err
		}
		return l.siteSpaceSpaces(summaries).Load(ctx, ss.SiteID)()
	})
	if err != nil {
		return nil, err
	}
	if s, ok := spaces[ss.SpaceID]; ok {
		return s, nil
	}
	// Written in this request, after the site's spaces were loaded.
	return r.loaders(ctx).Space.Load(ctx, ss.SpaceID)()
}

func (r *siteSpaceResolver) Title(ctx context.Context, ss *store.SiteSpace) (string, error) {
	s, err := r.Space(ctx, ss)
	if err != nil {
		return "", err
	}
	return s.Title, nil
}

func (r *siteSpaceResolver) Urls(ctx context.Context, ss *store.SiteSpace) (*model.SiteSpaceURLs, error) {
	site, err := r.siteOf(ctx, ss.OrganizationID, ss.SiteID)
	if err != nil {
		return nil, err
	}
	path, err := r.siteSpacePublishedPath(ctx, ss)
	if err != nil {
		return nil, err
	}
	return &model.SiteSpaceURLs{Published: r.publishedURL(ctx, site, path)}, nil
}

// siteSpacePublishedPath is site space ss's path under its site's
// published address: its section's path, then its own.
func (r *Resolver) siteSpacePublishedPath(ctx context.Context, ss *store.SiteSpace) (string, error) {
	path := "/" + pathEscape(ss.Path)
	if ss.SectionID != nil {
		t, err := r.treeOf(ctx, ss.SiteID, false)
		if err != nil {
			return "", err
		}
		if section := t.section(*ss.SectionID); section != nil {
			path = "/" + pathEscape(section.Path) + path
		}
	}
	return path, nil
}

// siteOf returns the site a structure row belongs to, through the site loader.
func (r *Resolver) siteOf(ctx context.Context, orgID, siteID string) (*store.Site, error) {
	return r.loaders(ctx).Site.Load(ctx, siteID)()
}

// errSiteMissing is the not-found of a site that does not exist, told apart
// from the identical answer to a caller who may not see it: a delete below a
// missing site deleted nothing and answers so, a stranger's delete is a 404.
var errSiteMissing = NotFound("site")

// changeSite runs fn in a transaction holding the site's lock, with the
// site's whole structure loaded, then forgets what the request's loaders
// knew of the site. The caller has checked the caller's rights.
func (r *Resolver) changeSite(ctx context.Context, orgID, siteID string, fn func(ctx context.Context, tx bun.Tx, s *store.Site, t *siteTree) error) error {
	err := store.RunInTx(ctx, r.DB, func(ctx context.Context, tx bun.Tx) error {
		s, err := lockSite(ctx, tx, orgID, siteID)
		if err != nil {
			return err
		}
		t, err := loadSiteTree(ctx, tx, s)
		if err != nil {
			return err
		}
		if err := fn(ctx, tx, s, t); err != nil {
			return err
		}
		return ensureDefaults(ctx, tx, t)
	})
	l := r.loaders(ctx)
	l.Site.Clear(ctx, siteID)
	l.SiteGroups.Clear(ctx, siteID)
	l.SiteSections.Clear(ctx, siteID)
	l.SiteSpaces.Clear(ctx, siteID)
	l.SiteSpaceCount.Clear(ctx, siteID)
	for _, summaries := range []bool{false, true} {
		l.siteSpaceSpaces(summaries).Clear(ctx, siteID)
		l.siteSpacesWithSpaces(summaries).Clear(ctx, siteID)
		l.forget(siteSpacesMemo(siteID, summaries))
	}
	l.forget(siteSpacesPrefetchMemo(siteID))
	l.forget(siteTreeMemo(siteID))
	l.forget(visibleSiteSpacesMemo(siteID))
	return err
}

// inLockedSite runs fn in a transaction holding site siteID of orgID's
// lock (lockSite), with the site as locked: errSiteMissing when there is
// none. The caller has checked the caller's rights.
func (r *Resolver) inLockedSite(ctx context.Context, orgID, siteID string, fn func(ctx context.Context, tx bun.Tx, s *store.Site) error) error {
	return store.RunInTx(ctx, r.DB, func(ctx context.Context, tx bun.Tx) error {
		s, err := lockSite(ctx, tx, orgID, siteID)
		if err != nil {
			return err
		}
		return fn(ctx, tx, s)
	})
}

// changeSiteRows runs fn, a change to rows of site siteID of orgID (its
// share links, its redirects), in a transaction holding the site's lock,
// as every change of a site does: such writes are ordered, the site
// cannot go meanwhile, and the change is heard as one to the site
// (store.LockSite), so published sites forget what they made of it. Then
// the request's loaders know the site as locked (addresses are made from
// it). errSiteMissing when there is no site; the caller has checked the
// caller's rights.
func (r *Resolver) changeSiteRows(ctx context.Context, orgID, siteID string, fn func(ctx context.Context, tx bun.Tx) error) error {
	var site *store.Site
	err := r.inLockedSite(ctx, orgID, siteID, func(ctx context.Context, tx bun.Tx, s *store.Site) error {
		site = s
		return fn(ctx, tx)
	})
	if err == nil {
		r.loaders(ctx).Site.Prime(ctx, site.ID, site)
	}
	return err
}

// lockSite locks site siteID of orgID for the rest of tx (store.LockSite):
// errSiteMissing when there is none.
func lockSite(ctx context.Context, tx bun.Tx, orgID, siteID string) (*store.Site, error) {
	s, err := store.LockSite(ctx, tx, orgID, siteID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, errSiteMissing
	}
	return s, err
}

// visibleSiteSpaces is the site spaces of siteID the caller may see: all of
// them for the organization's admins; for anyone else, those publishing a
// space they can read. A site shows its readers no more than they could
// read space by space, and its lists and counts agree with what it shows.
func (r *Resolver) visibleSiteSpaces(ctx context.Context, siteID string) (*siteSpaceSet, error) {
	l := r.loaders(ctx)
	return memoized(l, visibleSiteSpacesMemo(siteID), func() (*siteSpaceSet, error) {
		set, err := r.siteSpacesOf(ctx, siteID)
		if err != nil || set == nil || len(set.all) == 0 {
			return set, err
		}
		v := r.viewer(ctx)
		if v.caller != nil && v.orgAdmin(set.all[0].OrganizationID) {
			return set, nil
		}
		// SECURITY: only the site spaces of spaces the caller can read.
		all, err := readable(v, set.all)
		if err != nil || len(all) == len(set.all) {
			return set, err
		}
		return newSiteSpaceSet(all), nil
	})
}

func visibleSiteSpacesMemo(siteID string) memoKey { return memoKey{"visibleSiteSpaces", siteID} }

// siteTreeMemo is the memo of a site's groups and sections (treeOf).
func siteTreeMemo(siteID string) memoKey { return memoKey{"siteTree", siteID} }

// siteSpacesMemo is the memo of the spaces a site publishes (whole, or
// their summaries), which every site space of a tree asks for.
func siteSpacesMemo(siteID string, summaries bool) memoKey {
	if summaries {
		return memoKey{"siteSpaceSummaries", siteID}
	}
	return memoKey{"siteSpaceSpaces", siteID}
}

// siteSpaceSpaces is the loader of the spaces sites publish, whole or their
// summaries.
func (l *Loaders) siteSpaceSpaces(summaries bool) *loader[map[string]*store.Space] {
	if summaries {
		return &l.SiteSpaceSummaries
	}
	return &l.SiteSpaceSpaces
}

// siteStructureDirect declares the site's structure to the direct writer
// (direct.go): Site.structure is written without gqlgen's per-field
// execution when the query selects only these fields, which is what front
// ends reading a whole site's navigation do.
func (r *Resolver) siteStructureDirect(d *engine.DirectWriter) {
	d.Entry("Site", "structure")
	d.Object("SiteStructure", (*model.SiteStructure)(nil), map[string]engine.Field{
		"type": engine.String(func(s *model.SiteStructure) string { return s.Type }),
		"structure": engine.List(func(_ context.Context, s *model.SiteStructure) ([]store.StructureItem, error) {
			return s.Structure, nil
		}),
	})
	d.Object("SiteSectionGroup", (*store.SiteSectionGroup)(nil), map[string]engine.Field{
		"object":       engine.String((*store.SiteSectionGroup).Object),
		"id":           engine.String(func(g *store.SiteSectionGroup) string { return g.ID }),
		"title":        engine.String(func(g *store.SiteSectionGroup) string { return g.Title }),
		"sectionGroup": engine.OptString(func(g *store.SiteSectionGroup) *string { return g.ParentGroupID }),
		"icon":         engine.OptString(func(g *store.SiteSectionGroup) *string { return g.Icon }),
		"children":     engine.List(r.SiteSectionGroup().Children),
		"sections":     engine.List(r.SiteSectionGroup().Sections),
	})
	d.Object("SiteSection", (*store.SiteSection)(nil), map[string]engine.Field{
		"object":       engine.String((*store.SiteSection).Object),
		"id":           engine.String(func(s *store.SiteSection) string { return s.ID }),
		"title":        engine.String(func(s *store.SiteSection) string { return s.Title }),
		"description":  engine.OptString(func(s *store.SiteSection) *string { return s.Description }),
		"default":      engine.Bool(func(s *store.SiteSection) bool { return s.IsDefault }),
		"path":         engine.String(func(s *store.SiteSection) string { return s.Path }),
		"condition":    engine.OptString(func(s *store.SiteSection) *string { return s.Condition }),
		"sectionGroup": engine.OptString(func(s *store.SiteSection) *string { return s.GroupID }),
		"siteSpaces":   engine.List(r.SiteSection().SiteSpaces),
		"urls":         engine.Child(r.SiteSection().Urls),
		"icon":         engine.OptString(func(s *store.SiteSection) *string { return s.Icon }),
	})
	d.Object("SiteSectionURLs", (*model.SiteSectionURLs)(nil), map[string]engine.Field{
		"published": engine.OptString(func(u *model.SiteSectionURLs) *string { return u.Published }),
	})
	d.Object("SiteSpace", (*store.SiteSpace)(nil), map[string]engine.Field{
		"object":    engine.String((*store.SiteSpace).Object),
		"id":        engine.String(func(s *store.SiteSpace) string { return s.ID }),
		"path":      engine.String(func(s *store.SiteSpace) string { return s.Path }),
		"section":   engine.OptString(func(s *store.SiteSpace) *string { return s.SectionID }),
		"space":     engine.Child(r.SiteSpace().Space),
		"title":     engine.ResolvedString(r.SiteSpace().Title),
		"default":   engine.Bool(func(s *store.SiteSpace) bool { return s.IsDefault }),
		"condition": engine.OptString(func(s *store.SiteSpace) *string { return s.Condition }),
		"urls":      engine.Child(r.SiteSpace().Urls),
	})
	d.Object("SiteSpaceURLs", (*model.SiteSpaceURLs)(nil), map[string]engine.Field{
		"published": engine.OptString(func(u *model.SiteSpaceURLs) *string { return u.Published }),
	})
}

// prefetchStructure starts the queries of a site's structure, all at once:
// its groups, sections and site spaces (with their spaces, when sel asks
// for a "space" below). The loaders keep the pending results for the
// resolvers that read them (loading a key twice reads it once).
func (r *Resolver) prefetchStructure(ctx context.Context, siteID string, sel ast.SelectionSet) {
	l := r.loaders(ctx)
	l.SiteGroups.Load(ctx, siteID)
	l.SiteSections.Load(ctx, siteID)
	if !selectsField(sel, "space") {
		l.SiteSpaces.Load(ctx, siteID)
		return
	}
	// The site spaces and their spaces in one statement (on a Citus
	// cluster a statement costs its planning, whatever it reads).
	summaries := spaceSummariesSuffice(ctx)
	p := siteSpacesPrefetch{summaries: summaries, load: l.siteSpacesWithSpaces(summaries).Load(ctx, siteID)}
	l.memo.LoadOrStore(siteSpacesPrefetchMemo(siteID), p)
}

// siteSpacesWithSpaces is a site's site spaces with the spaces they publish,
// read together: set is nil for a site of none.
type siteSpacesWithSpaces struct {
	set    *siteSpaceSet
	spaces map[string]*store.Space
}

// siteSpacesPrefetch is the pending read of a site's site spaces with their
// spaces (whole, or their summaries) that prefetchStructure started, kept in
// the memo under siteSpacesPrefetchMemo for the readers of either.
type siteSpacesPrefetch struct {
	summaries bool
	load      func() (*siteSpacesWithSpaces, error)
}

// read waits for the read p started: never nil (empty when it failed).
func (p siteSpacesPrefetch) read() (*siteSpacesWithSpaces, error) {
	v, err := p.load()
	if v == nil || err != nil {
		return &siteSpacesWithSpaces{}, err
	}
	return v, nil
}

func siteSpacesPrefetchMemo(siteID string) memoKey { return memoKey{"siteSpacesPrefetch", siteID} }

// prefetchedSiteSpaces is the read of siteID's site spaces with their spaces
// that prefetchStructure started in this request, if it did.
func (l *Loaders) prefetchedSiteSpaces(siteID string) (siteSpacesPrefetch, bool) {
	p, ok := l.memo.Load(siteSpacesPrefetchMemo(siteID))
	if !ok {
		return siteSpacesPrefetch{}, false
	}
	return p.(siteSpacesPrefetch), true
}

// siteSpacesWithSpaces is the loader of sites' site spaces with their
// spaces, whole or their summaries.
func (l *Loaders) siteSpacesWithSpaces(summaries bool) *loader[*siteSpacesWithSpaces] {
	if summaries {
		return &l.SiteSpacesWithSpaceSummaries
	}
	return &l.SiteSpacesWithSpaces
}

// siteSpacesOf is the site spaces of siteID (nil for none): from the read
// prefetchStructure started, or read alone.
func (r *Resolver) siteSpacesOf(ctx context.Context, siteID string) (*siteSpaceSet, error) {
	l := r.loaders(ctx)
	if p, ok := l.prefetchedSiteSpaces(siteID); ok {
		v, err := p.read()
		return v.set, err
	}
	return l.SiteSpaces.Load(ctx, siteID)()
}

// selectsField reports whether a field named name is selected anywhere in
// sel, fragments included.
func selectsField(sel ast.SelectionSet, name string) bool {
	for _, s := range sel {
		switch s := s.(type) {
		case *ast.Field:
			if s.Name == name || selectsField(s.SelectionSet, name) {
				return true
			}
		case *ast.InlineFragment:
			if selectsField(s.SelectionSet, name) {
				return true
			}
		case *ast.FragmentSpread:
			if s.Definition != nil && selectsField(s.Definition.SelectionSet, name) {
				return true
			}
		}
	}
	return false
}
