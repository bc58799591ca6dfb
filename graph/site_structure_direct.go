package graph

import (
	"context"

	"github.com/docsapi/docsapi/graph/engine"
	"github.com/docsapi/docsapi/graph/model"
	"github.com/docsapi/docsapi/store"
)

// siteStructureDirect declares the site's structure to the direct writer
// (graph/engine/direct.go): Site.structure is written without gqlgen's per-field
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
