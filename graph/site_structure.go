package graph

import (
	"context"

	"github.com/99designs/gqlgen/graphql"

	"github.com/docsapi/docsapi/graph/generated"
	"github.com/docsapi/docsapi/graph/model"
	"github.com/docsapi/docsapi/store"
)

// The resolvers of a site's structure: Site.structure and its lists of
// groups, sections and site spaces, and the fields of each. They walk the
// tree the request's loaders read (site_structure_loaders.go); the changes
// to it are the mutations of site_section.go, site_section_group.go,
// site_space.go and site_moves.go.

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
