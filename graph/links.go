package graph

import (
	"context"
	"slices"

	"github.com/docsapi/docsapi/graph/internal/links"
	"github.com/docsapi/docsapi/graph/model"
	"github.com/docsapi/docsapi/store"
)

// The links and backlinks of a revision's pages: package links finds them
// in each page's markdown and resolves them; here they are grouped by
// target and listed.

// link is one link found in a page.
type link struct {
	from *store.RevisionPage
	links.Link
}

// key identifies a link's target, to group links by it.
func (l link) key() string {
	switch {
	case l.Page != nil:
		return "page:" + l.Page.ID
	case l.File != nil:
		return "file:" + l.File.ID
	}
	return "url:" + l.URL
}

// revisionLinks is every link of a revision, with what locations need.
type revisionLinks struct {
	rev   *store.Revision
	space *store.Space
	org   *store.Organization
	tree  *store.PageTree
	links []link
}

// linksOf reads the links of revision rev.
func (r *Resolver) linksOf(ctx context.Context, rev *store.Revision) (*revisionLinks, error) {
	t, err := r.tree(ctx, rev)
	if err != nil {
		return nil, err
	}
	files, err := store.RevisionFiles(ctx, r.DB, rev.OrganizationID, rev.ID)
	if err != nil {
		return nil, err
	}
	space, err := store.GetSpace(ctx, r.DB, rev.SpaceID)
	if err != nil {
		return nil, err
	}
	org, err := r.loaders(ctx).Organization.Load(ctx, space.OrganizationID)()
	if err != nil {
		return nil, err
	}
	out := &revisionLinks{rev: rev, space: space, org: org, tree: t}
	index := links.NewIndex(t, files, r.URLs.App("/"))
	for _, p := range t.Pages {
		if p.Type != store.PageDocument {
			continue
		}
		body, err := r.body(ctx, p)
		if err != nil {
			return nil, err
		}
		for _, l := range index.Of(p, body) {
			out.links = append(out.links, link{from: p, Link: l})
		}
	}
	return out, nil
}

func (l *revisionLinks) location(p *store.RevisionPage) model.ContentLocation {
	return &model.ContentLocationPage{Kind: "page", Organization: l.org, Space: l.space,
		Page:           &model.PageNode{RevisionPage: p, Revision: l.rev, Tree: l.tree},
		VersionContext: &model.VersionContext{Type: "revision", Revision: l.rev}}
}

func (l *revisionLinks) target(k link) model.ContentLocation {
	switch {
	case k.Page != nil:
		return l.location(k.Page)
	case k.File != nil:
		return &model.ContentLocationFile{Kind: "file", Organization: l.org, Space: l.space, File: k.File,
			VersionContext: &model.VersionContext{Type: "revision", Revision: l.rev}}
	}
	return &model.ContentLocationURL{Kind: "url", URL: k.URL}
}

// list groups links (those of page from, when not nil) by target, keeps
// those of status (when given) and pages them.
func (l *revisionLinks) list(from *store.RevisionPage, status *string, page *string, limit *int) (*model.LinkList, error) {
	if status != nil && *status != "ok" && *status != "broken" && *status != "in-app" {
		return nil, Invalid("status", "must be ok, broken or in-app")
	}
	stats := &model.LinkStats{Broken: &model.LinkBrokenStats{}}
	var items []*model.LinkItem
	index := map[string]*model.LinkItem{}
	for _, k := range l.links {
		if from != nil && k.from.ID != from.ID {
			continue
		}
		stats.Total++
		if k.Status == "broken" {
			stats.Broken.Total++
		}
		if status != nil && k.Status != *status {
			continue
		}
		item := index[k.key()]
		if item == nil {
			item = &model.LinkItem{Status: k.Status, Relation: "reference", TargetReference: l.target(k)}
			index[k.key()] = item
			items = append(items, item)
		}
		if !slices.ContainsFunc(item.LocationReferences, func(c model.ContentLocation) bool {
			return c.(*model.ContentLocationPage).Page.ID == k.from.ID
		}) {
			item.LocationReferences = append(item.LocationReferences, l.location(k.from))
		}
	}
	keys := make(map[*model.LinkItem]string, len(index))
	for k, v := range index {
		keys[v] = k
	}
	got, err := paginateOrdered(items, page, limit, func(i *model.LinkItem) string { return keys[i] })
	if err != nil {
		return nil, err
	}
	return &model.LinkList{List: *got, Stats: stats}, nil
}

// backlinks lists the pages linking to the target key, in tree order.
func (l *revisionLinks) backlinks(key string, page *string, limit *int) (*model.ContentLocationList, error) {
	var from []*store.RevisionPage
	for _, k := range l.links {
		if k.key() == key && !slices.Contains(from, k.from) {
			from = append(from, k.from)
		}
	}
	got, err := paginateOrdered(from, page, limit, func(p *store.RevisionPage) string { return p.ID })
	if err != nil {
		return nil, err
	}
	return mapList(got, func(p *store.RevisionPage) (model.ContentLocation, error) { return l.location(p), nil })
}

// Links and backlinks name the organization of the pages and files they
// lead to (ContentLocation*.organization), which is no visitor's to read:
// a visitor gets none (the reader resolves a page's links itself).

// noLinks is a visitor's list of links.
func noLinks() *model.LinkList {
	return &model.LinkList{List: *notForVisitors[*model.LinkItem](), Stats: &model.LinkStats{Broken: &model.LinkBrokenStats{}}}
}

func (r *spaceResolver) Links(ctx context.Context, s *store.Space, page *string, limit *int, _ *int, _ *string, status *string) (*model.LinkList, error) {
	if VisitorFrom(ctx) != nil {
		return noLinks(), nil
	}
	rev, err := store.GetRevision(ctx, r.DB, s.OrganizationID, s.ID, s.RevisionID)
	if err != nil {
		return nil, err
	}
	l, err := r.linksOf(ctx, rev)
	if err != nil {
		return nil, err
	}
	return l.list(nil, status, page, limit)
}

func (r *revisionPageResolver) Links(ctx context.Context, p *model.PageNode, page *string, limit *int, _ *int, _ *string, status *string) (*model.LinkList, error) {
	if VisitorFrom(ctx) != nil {
		return noLinks(), nil
	}
	l, err := r.linksOf(ctx, p.Revision)
	if err != nil {
		return nil, err
	}
	return l.list(p.RevisionPage, status, page, limit)
}

func (r *revisionPageResolver) Backlinks(ctx context.Context, p *model.PageNode, page *string, limit *int, _ *int, _ *string) (*model.ContentLocationList, error) {
	if VisitorFrom(ctx) != nil {
		return notForVisitors[model.ContentLocation](), nil
	}
	l, err := r.linksOf(ctx, p.Revision)
	if err != nil {
		return nil, err
	}
	return l.backlinks("page:"+p.ID, page, limit)
}

func (r *revisionFileResolver) Backlinks(ctx context.Context, f *store.RevisionFile, page *string, limit *int, _ *int, _ *string) (*model.ContentLocationList, error) {
	if VisitorFrom(ctx) != nil {
		return notForVisitors[model.ContentLocation](), nil
	}
	rev, err := store.RevisionByID(ctx, r.DB, f.OrganizationID, f.RevisionID)
	if err != nil {
		return nil, err
	}
	l, err := r.linksOf(ctx, rev)
	if err != nil {
		return nil, err
	}
	return l.backlinks("file:"+f.ID, page, limit)
}
