package graph

import (
	"context"

	"github.com/vektah/gqlparser/v2/ast"

	"github.com/docsapi/docsapi/store"
)

// Reading a site's structure: every level comes from a loader keyed by the
// site, so a whole tree costs one query per level whatever its fan-out.
// What a request reads of a site is memoized in its loaders (memo keys
// below); a change to the site forgets it all (changeSite, site_change.go).
// Site.structure starts every level's query at once (prefetchStructure).

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
