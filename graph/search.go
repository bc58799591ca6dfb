package graph

import (
	"context"
	"strings"

	"github.com/docsapi/docsapi/graph/model"
	"github.com/docsapi/docsapi/store"
)

// Search: PostgreSQL full-text search over the sections of the page bodies
// of each space's current content (store.Search), grouped by page and by
// space here, best first. Only spaces the caller can read are searched.

const maxSearchQuery = 512

func checkQuery(query string) error {
	if strings.TrimSpace(query) == "" {
		return Invalid("query", "must not be empty")
	}
	return checkLength("query", query, 1, maxSearchQuery)
}

func (r *spaceResolver) Search(ctx context.Context, s *store.Space, query string, page *string, limit *int, _ *int, _ *string) (*model.SearchPageResultList, error) {
	if err := checkQuery(query); err != nil {
		return nil, err
	}
	hits, err := store.Search(ctx, r.DB, s.OrganizationID, []string{s.ID}, query)
	if err != nil {
		return nil, err
	}
	results, err := r.pageResults(ctx, map[string]*store.Space{s.ID: s}, hits)
	if err != nil {
		return nil, err
	}
	items, next, info, err := pageOfOrdered(results[s.ID], page, limit, func(p *model.SearchPageResult) string { return p.ID })
	if err != nil {
		return nil, err
	}
	return &model.SearchPageResultList{Items: items, Total: totalIs(len(results[s.ID])), Next: next, PageInfo: info}, nil
}

func (r *organizationResolver) Search(ctx context.Context, o *store.Organization, query string, page *string, limit *int, _ *int, _ *string) (*model.SearchSpaceResultList, error) {
	if err := checkQuery(query); err != nil {
		return nil, err
	}
	// SECURITY: only the spaces the caller can read are searched.
	g, err := callerGrantee(ctx, o.ID)
	if err != nil {
		return nil, err
	}
	a, nodes, err := r.orgSpaces(ctx, o.ID)
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, s := range nodes {
		if s.Live && a.spaceRole(g, s) != "" {
			ids = append(ids, s.ID)
		}
	}
	hits, err := store.Search(ctx, r.DB, o.ID, ids, query)
	if err != nil {
		return nil, err
	}
	// Spaces in the order of their best hit; only those of the requested
	// page of results are read and get their pages.
	var order []string
	seen := map[string]bool{}
	for _, h := range hits {
		if !seen[h.SpaceID] {
			seen[h.SpaceID] = true
			order = append(order, h.SpaceID)
		}
	}
	ids, next, info, err := pageOfOrdered(order, page, limit, func(id string) string { return id })
	if err != nil {
		return nil, err
	}
	loaded, err := r.loaders(ctx).Space.loadAll(ctx, ids)
	if err != nil {
		return nil, err
	}
	spaces := make(map[string]*store.Space, len(ids))
	for i, id := range ids {
		spaces[id] = loaded[i]
	}
	results, err := r.pageResults(ctx, spaces, hits)
	if err != nil {
		return nil, err
	}
	items := make([]*model.SearchSpaceResult, 0, len(ids))
	for _, id := range ids {
		items = append(items, &model.SearchSpaceResult{ID: id, Title: spaces[id].Title, Pages: results[id]})
	}
	return &model.SearchSpaceResultList{Items: items, Total: totalIs(len(order)), Next: next, PageInfo: info}, nil
}

// pageResults groups hits (best first) by space and page, in the order of
// each page's best hit.
func (r *Resolver) pageResults(ctx context.Context, spaces map[string]*store.Space, hits []*store.SearchHit) (map[string][]*model.SearchPageResult, error) {
	out := map[string][]*model.SearchPageResult{}
	byPage := map[string]*model.SearchPageResult{}
	// The page trees of every space at once (one query).
	var revisions, keys []string
	for _, s := range spaces {
		revisions = append(revisions, s.RevisionID)
		keys = append(keys, orgKey(s.OrganizationID, s.RevisionID))
	}
	loaded, err := r.loaders(ctx).PageTree.loadAll(ctx, keys)
	if err != nil {
		return nil, err
	}
	trees := make(map[string]*store.PageTree, len(revisions))
	for i, rev := range revisions {
		trees[rev] = loaded[i]
	}
	for _, h := range hits {
		s := spaces[h.SpaceID]
		if s == nil {
			continue // a space outside the requested page of results
		}
		t := trees[s.RevisionID]
		p := t.Page(h.PageID)
		if p == nil {
			continue // a page of a revision that was replaced meanwhile
		}
		path := t.Path(p.ID)
		app := r.URLs.App("/s/" + pathEscape(s.ID) + "/" + path)
		res := byPage[s.ID+"/"+p.ID]
		if res == nil {
			res = &model.SearchPageResult{ID: p.ID, Title: p.Title, Path: path, Sections: []*model.SearchSectionResult{},
				Ancestors: ancestors(t, p), Urls: &model.SearchURLs{App: app}}
			byPage[s.ID+"/"+p.ID] = res
			out[s.ID] = append(out[s.ID], res)
		}
		if h.Anchor != nil {
			id, url := *h.Anchor, app+"#"+*h.Anchor
			if id == "" {
				id, url = p.ID, app
			}
			title := h.Heading
			if title == "" {
				title = p.Title
			}
			res.Sections = append(res.Sections, &model.SearchSectionResult{ID: id, Title: title, Path: path, Body: h.Body,
				Urls: &model.SearchURLs{App: url}})
		}
	}
	return out, nil
}

// ancestors are the pages above p, outermost first.
func ancestors(t *store.PageTree, p *store.RevisionPage) []*model.SearchAncestor {
	var out []*model.SearchAncestor
	for q := p; q.ParentID != nil; {
		q = t.Page(*q.ParentID)
		if q == nil || len(out) > maxPageDepth {
			break
		}
		out = append([]*model.SearchAncestor{{Title: q.Title}}, out...)
	}
	if out == nil {
		out = []*model.SearchAncestor{}
	}
	return out
}
