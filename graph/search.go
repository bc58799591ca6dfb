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
	return paginateOrdered(results[s.ID], page, limit, func(p *model.SearchPageResult) string { return p.ID })
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
	return r.searchSpaces(ctx, o.ID, ids, query, page, limit, false)
}

// searchSpaces searches spaces ids of orgID (those the caller may read)
// and answers them by space, in the order of each space's best hit, a page
// of spaces at a time. A site's search (forSite) leaves out the pages that
// ask not to be in it (noIndex); the members' search finds every page.
func (r *Resolver) searchSpaces(ctx context.Context, orgID string, ids []string, query string, page *string, limit *int, forSite bool) (*model.SearchSpaceResultList, error) {
	hits, err := store.Search(ctx, r.DB, orgID, ids, query)
	if err != nil {
		return nil, err
	}
	if forSite {
		if hits, err = r.indexedHits(ctx, hits); err != nil {
			return nil, err
		}
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
	pageIDs, err := paginateOrdered(order, page, limit, func(id string) string { return id })
	if err != nil {
		return nil, err
	}
	loaded, err := r.loaders(ctx).Space.loadAll(ctx, pageIDs.Items)
	if err != nil {
		return nil, err
	}
	spaces := make(map[string]*store.Space, len(pageIDs.Items))
	for i, id := range pageIDs.Items {
		spaces[id] = loaded[i]
	}
	results, err := r.pageResults(ctx, spaces, hits)
	if err != nil {
		return nil, err
	}
	return mapList(pageIDs, func(id string) (*model.SearchSpaceResult, error) {
		return &model.SearchSpaceResult{ID: id, Title: spaces[id].Title, Pages: results[id]}, nil
	})
}

// indexedHits are the hits on pages that do not ask to be left out of
// their site's search (noIndex), before spaces are ordered and counted so
// that a space with only such hits is no result. The spaces and page
// trees it reads are the loaders', which pageResults then reuses.
func (r *Resolver) indexedHits(ctx context.Context, hits []*store.SearchHit) ([]*store.SearchHit, error) {
	var ids []string
	seen := map[string]bool{}
	for _, h := range hits {
		if !seen[h.SpaceID] {
			seen[h.SpaceID] = true
			ids = append(ids, h.SpaceID)
		}
	}
	spaces, err := r.loaders(ctx).Space.loadAll(ctx, ids)
	if err != nil {
		return nil, err
	}
	keys := make([]string, len(spaces))
	for i, s := range spaces {
		keys[i] = orgKey(s.OrganizationID, s.RevisionID)
	}
	trees, err := r.loaders(ctx).PageTree.loadAll(ctx, keys)
	if err != nil {
		return nil, err
	}
	treeOf := make(map[string]*store.PageTree, len(ids))
	for i, id := range ids {
		treeOf[id] = trees[i]
	}
	kept := hits[:0:0]
	for _, h := range hits {
		if p := treeOf[h.SpaceID].Page(h.PageID); p != nil && !p.NoIndex {
			kept = append(kept, h)
		}
	}
	return kept, nil
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

// Site search: the site spaces a scope names, of those the caller may read
// (a visitor: those its audience and conditions show it), searched as one.

// Site search scopes (SiteSearchScopeInput.mode).
const (
	searchDefault  = "default"
	searchSpecific = "specific"
	searchAll      = "all"
	searchCurrent  = "current" // deprecated: default with a current site space
)

// siteSearchScope is a search's scope, its deprecated forms read as the
// current one.
type siteSearchScope struct {
	mode       string
	current    string
	siteSpaces []string
}

func siteSearchScopeOf(in model.SiteSearchInput) (siteSearchScope, error) {
	if scope, _ := in.Scope.ValueOK(); scope != nil {
		sc := siteSearchScope{mode: scope.Mode, current: derefString(scope.CurrentSiteSpace.Value())}
		sc.siteSpaces, _ = scope.SiteSpaceIds.ValueOK()
		switch {
		case sc.mode != searchDefault && sc.mode != searchSpecific && sc.mode != searchAll:
			return sc, Invalid("scope.mode", "must be default, specific or all")
		case sc.mode == searchSpecific && len(sc.siteSpaces) == 0:
			return sc, Invalid("scope.siteSpaceIds", "must name at least one site space")
		}
		return sc, nil
	}
	mode := derefString(in.Mode.Value())
	ids, _ := in.SiteSpaceIds.ValueOK()
	switch {
	case mode == "" && len(ids) > 0, mode == searchSpecific:
		if len(ids) == 0 {
			return siteSearchScope{}, Invalid("siteSpaceIds", "must name at least one site space")
		}
		return siteSearchScope{mode: searchSpecific, siteSpaces: ids}, nil
	case mode == searchCurrent:
		current := derefString(in.SiteSpaceID.Value())
		if current == "" {
			return siteSearchScope{}, Invalid("siteSpaceId", "is required with mode current")
		}
		return siteSearchScope{mode: searchDefault, current: current}, nil
	case mode == searchAll:
		return siteSearchScope{mode: searchAll}, nil
	case mode == "":
		return siteSearchScope{mode: searchDefault}, nil
	}
	return siteSearchScope{}, Invalid("mode", "must be specific, current or all")
}

func derefString(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func (r *siteResolver) Search(ctx context.Context, s *store.Site, input model.SiteSearchInput, page *string, limit *int, _ *int, _ *string) (*model.SearchSpaceResultList, error) {
	if err := checkQuery(input.Query); err != nil {
		return nil, err
	}
	scope, err := siteSearchScopeOf(input)
	if err != nil {
		return nil, err
	}
	// SECURITY: the site spaces the caller may read, as the site's lists
	// show them (its visitor: those its audience and conditions show it).
	set, err := r.visibleSiteSpaces(ctx, s.ID)
	if err != nil {
		return nil, err
	}
	t, err := r.treeOf(ctx, s.ID, false)
	if err != nil {
		return nil, err
	}
	chosen, err := r.searchedSiteSpaces(ctx, scope, set, t)
	if err != nil {
		return nil, err
	}
	var ids []string
	siteSpaceOf := map[string]string{}
	for _, ss := range chosen {
		if _, ok := siteSpaceOf[ss.SpaceID]; !ok {
			siteSpaceOf[ss.SpaceID] = ss.ID
			ids = append(ids, ss.SpaceID)
		}
	}
	list, err := r.searchSpaces(ctx, s.OrganizationID, ids, input.Query, page, limit, true)
	if err != nil {
		return nil, err
	}
	for _, item := range list.Items {
		id := siteSpaceOf[item.ID]
		item.SiteSpace = &id
	}
	return list, nil
}

// searchedSiteSpaces are the site spaces of set (those the caller may
// read) that scope names, in the site's order: for the default scope, the
// default site space of each section t holds (or of the site), with the
// current one and, where a section has one of the current one's language,
// that one instead.
func (r *Resolver) searchedSiteSpaces(ctx context.Context, scope siteSearchScope, set *siteSpaceSet, t *siteTree) ([]*store.SiteSpace, error) {
	all := set.list()
	switch scope.mode {
	case searchAll:
		return all, nil
	case searchSpecific:
		wanted := map[string]bool{}
		for _, id := range scope.siteSpaces {
			wanted[id] = true
		}
		var out []*store.SiteSpace
		for _, ss := range all {
			if wanted[ss.ID] {
				out = append(out, ss)
			}
		}
		return out, nil
	}
	var current *store.SiteSpace
	for _, ss := range all {
		if ss.ID == scope.current {
			current = ss
		}
	}
	language := ""
	if current != nil {
		if sp, err := r.spaceOfSiteSpace(ctx, current); err == nil && sp.Language != nil {
			language = string(*sp.Language)
		}
	}
	containers := []string{rootKey}
	for _, sec := range t.sections {
		containers = append(containers, sec.ID)
	}
	var out []*store.SiteSpace
	for _, key := range containers {
		if pick := r.searchedIn(ctx, set.inSection[key], current, language); pick != nil {
			out = append(out, pick)
		}
	}
	return out, nil
}

// searchedIn is the site space of a section's (or the site's) candidates a
// default search looks through: the current one, else one of its language,
// else the default one, else the first.
func (r *Resolver) searchedIn(ctx context.Context, candidates []*store.SiteSpace, current *store.SiteSpace, language string) *store.SiteSpace {
	var ofLanguage, byDefault *store.SiteSpace
	for _, ss := range candidates {
		switch {
		case current != nil && ss.ID == current.ID:
			return ss
		case ofLanguage == nil && language != "":
			if sp, err := r.spaceOfSiteSpace(ctx, ss); err == nil && sp.Language != nil && string(*sp.Language) == language {
				ofLanguage = ss
			}
		}
		if byDefault == nil && ss.IsDefault {
			byDefault = ss
		}
	}
	switch {
	case ofLanguage != nil:
		return ofLanguage
	case byDefault != nil:
		return byDefault
	case len(candidates) > 0:
		return candidates[0]
	}
	return nil
}
