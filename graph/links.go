package graph

import (
	"context"
	"net/url"
	"path"
	"slices"
	"strings"

	"github.com/yuin/goldmark/ast"

	"github.com/docsapi/docsapi/graph/internal/document"
	"github.com/docsapi/docsapi/graph/internal/gitlayout"
	"github.com/docsapi/docsapi/graph/model"
	"github.com/docsapi/docsapi/store"
)

// Links come from the markdown of each page of a revision (links and
// images). A relative link is resolved against the page's file in GitBook's
// layout (its git path, or the path an export would give it): it leads to a
// page or a file of the revision, or nowhere (broken). Absolute links lead
// outside (ok), or into this application (in-app).

// link is one link found in a page.
type link struct {
	from   *store.RevisionPage
	status string
	// One of page, file and url names the target.
	page *store.RevisionPage
	file *store.RevisionFile
	url  string
}

// key identifies a link's target, to group links by it.
func (l link) key() string {
	switch {
	case l.page != nil:
		return "page:" + l.page.ID
	case l.file != nil:
		return "file:" + l.file.ID
	}
	return "url:" + l.url
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
	files, err := store.RevisionFiles(ctx, r.DB, rev.ID)
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
	byFile := map[string]*store.RevisionPage{}
	for _, p := range t.Pages {
		byFile[gitlayout.PathOf(t, p)] = p
		byFile[t.Path(p.ID)] = p
	}
	appPrefix := r.URLs.App("/")
	for _, p := range t.Pages {
		if p.Type != store.PageDocument {
			continue
		}
		body, err := r.body(ctx, p)
		if err != nil {
			return nil, err
		}
		dir := path.Dir(gitlayout.PathOf(t, p))
		for _, dest := range destinations(body) {
			l := link{from: p, status: "ok"}
			u, err := url.Parse(dest)
			switch {
			case err != nil:
				l.status, l.url = "broken", dest
			case u.Scheme != "":
				l.url = dest
				if strings.HasPrefix(dest, appPrefix) {
					l.status = "in-app"
				}
			case u.Path == "":
				continue // an anchor of the same page
			default:
				target := path.Clean(path.Join(dir, u.Path))
				if page := byFile[target]; page != nil {
					l.page = page
				} else if page := byFile[strings.TrimSuffix(target, ".md")]; page != nil {
					l.page = page
				} else if i := slices.IndexFunc(files, func(f *store.RevisionFile) bool {
					return target == gitlayout.AssetsDir+f.Name || target == str(f.GitPath) || path.Base(target) == f.Name && strings.Contains(target, ".gitbook/assets")
				}); i >= 0 {
					l.file = files[i]
				} else {
					l.status, l.url = "broken", dest
				}
			}
			out.links = append(out.links, l)
		}
	}
	return out, nil
}

// destinations lists the link and image destinations of markdown.
func destinations(markdown string) []string {
	source := []byte(markdown)
	var out []string
	_ = ast.Walk(document.ParseMarkdown(source), func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.Link:
			out = append(out, string(n.Destination))
		case *ast.Image:
			out = append(out, string(n.Destination))
		case *ast.AutoLink:
			out = append(out, string(n.URL(source)))
		}
		return ast.WalkContinue, nil
	})
	return out
}

func (l *revisionLinks) location(p *store.RevisionPage) model.ContentLocation {
	return &model.ContentLocationPage{Kind: "page", Organization: l.org, Space: l.space,
		Page:           &model.PageNode{RevisionPage: p, Revision: l.rev, Tree: l.tree},
		VersionContext: &model.VersionContext{Type: "revision", Revision: l.rev.ID}}
}

func (l *revisionLinks) target(k link) model.ContentLocation {
	switch {
	case k.page != nil:
		return l.location(k.page)
	case k.file != nil:
		return &model.ContentLocationFile{Kind: "file", Organization: l.org, Space: l.space, File: k.file,
			VersionContext: &model.VersionContext{Type: "revision", Revision: l.rev.ID}}
	}
	return &model.ContentLocationURL{Kind: "url", URL: k.url}
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
		if k.status == "broken" {
			stats.Broken.Total++
		}
		if status != nil && k.status != *status {
			continue
		}
		item := index[k.key()]
		if item == nil {
			item = &model.LinkItem{Status: k.status, Relation: "reference", TargetReference: l.target(k)}
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
	got, next, info, err := pageOfOrdered(items, page, limit, func(i *model.LinkItem) string { return keys[i] })
	if err != nil {
		return nil, err
	}
	return &model.LinkList{Items: got, Count: len(got), Next: next, PageInfo: info, Stats: stats}, nil
}

// backlinks lists the pages linking to the target key, in tree order.
func (l *revisionLinks) backlinks(key string, page *string, limit *int) (*model.ContentLocationList, error) {
	var from []*store.RevisionPage
	for _, k := range l.links {
		if k.key() == key && !slices.Contains(from, k.from) {
			from = append(from, k.from)
		}
	}
	got, next, info, err := pageOfOrdered(from, page, limit, func(p *store.RevisionPage) string { return p.ID })
	if err != nil {
		return nil, err
	}
	items := make([]model.ContentLocation, len(got))
	for i, p := range got {
		items[i] = l.location(p)
	}
	return &model.ContentLocationList{Items: items, Count: len(items), Next: next, PageInfo: info}, nil
}

func (r *spaceResolver) Links(ctx context.Context, s *store.Space, page *string, limit *int, status *string) (*model.LinkList, error) {
	rev, err := store.GetRevision(ctx, r.DB, s.ID, s.RevisionID)
	if err != nil {
		return nil, err
	}
	l, err := r.linksOf(ctx, rev)
	if err != nil {
		return nil, err
	}
	return l.list(nil, status, page, limit)
}

func (r *revisionPageResolver) Links(ctx context.Context, p *model.PageNode, page *string, limit *int, status *string) (*model.LinkList, error) {
	l, err := r.linksOf(ctx, p.Revision)
	if err != nil {
		return nil, err
	}
	return l.list(p.RevisionPage, status, page, limit)
}

func (r *revisionPageResolver) Backlinks(ctx context.Context, p *model.PageNode, page *string, limit *int) (*model.ContentLocationList, error) {
	l, err := r.linksOf(ctx, p.Revision)
	if err != nil {
		return nil, err
	}
	return l.backlinks("page:"+p.ID, page, limit)
}

func (r *revisionFileResolver) Backlinks(ctx context.Context, f *store.RevisionFile, page *string, limit *int) (*model.ContentLocationList, error) {
	rev, err := store.RevisionByID(ctx, r.DB, f.RevisionID)
	if err != nil {
		return nil, err
	}
	l, err := r.linksOf(ctx, rev)
	if err != nil {
		return nil, err
	}
	return l.backlinks("file:"+f.ID, page, limit)
}
