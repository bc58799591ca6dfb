package graph

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/graph-gophers/dataloader/v7"

	"github.com/docsapi/docsapi/store"
)

// Loaders batch and cache reads for one request; middleware creates them for
// every request, GraphQL and REST alike. Loaders keyed by id gather the keys
// asked for within a short window into one query. The site tree's loaders are
// keyed by the site instead (every section of a site is one key), so siblings
// share one pending result and no window is needed on that hot path.
type Loaders struct {
	Organization *dataloader.Loader[string, *store.Organization]
	User         *dataloader.Loader[string, *store.User]
	// Space loads live spaces; deleted ones are not found.
	Space *dataloader.Loader[string, *store.Space]
	// Site is primed by the resolvers that read sites, for the rows below
	// them (section and site space addresses need their site).
	Site *dataloader.Loader[string, *store.Site]

	// The site tree, keyed by site: every section of a site is one key, so
	// all the groups (or sections) asking for their children share one
	// pending result. Lists of sites prime them for all their sites at once.
	SiteGroups     *dataloader.Loader[string, []*store.SiteSectionGroup]
	SiteSections   *dataloader.Loader[string, []*store.SiteSection]
	SiteSpaces     *dataloader.Loader[string, *siteSpaceSet]
	SiteSpaceCount *dataloader.Loader[string, int]
	// SiteSpaceSpaces maps space id → space for the spaces a site publishes.
	SiteSpaceSpaces *dataloader.Loader[string, map[string]*store.Space]

	// Counts shown on members and teams, and the caller's role in teams.
	LiveSpaceCount  *dataloader.Loader[string, int] // by organization
	MemberTeamCount *dataloader.Loader[string, int] // by memberKey
	TeamMemberCount *dataloader.Loader[string, int] // by team
	CallerTeamRole  *dataloader.Loader[string, store.TeamRole]
	// PageTree is a revision's indexed pages, by revision id; PageBody a
	// page body's markdown, by digest.
	PageTree *dataloader.Loader[string, *store.PageTree]
	PageBody *dataloader.Loader[string, string]
	// CommentReplies and Reactions serve the replies (oldest first) of a
	// comment and the reactions to a comment or reply; the open comments of
	// a change request are counted by change request (those of spaces are
	// carried on the space's row).
	CommentReplies            *dataloader.Loader[string, []*store.CommentReply]
	Reactions                 *dataloader.Loader[string, []*store.Reaction]
	ChangeRequestOpenComments *dataloader.Loader[string, int]
	// OrgAccess decides roles on an organization's content (access.go);
	// OrgSpaces is every space of an organization, for lists and counts.
	OrgAccess *dataloader.Loader[string, *orgAccess]
	OrgSpaces *dataloader.Loader[string, []*store.AccessNode]

	// shareKeys are the share keys presented in this request, by site id,
	// so the published addresses of share-link sites resolve below the field
	// that took the key.
	shareKeys sync.Map
}

// batchWindow is how long an id loader waits for sibling keys. The hot paths
// do not depend on it (see above); it only merges stragglers.
const batchWindow = 2 * time.Millisecond

// maxBatch keeps IN (...) lists bounded.
const maxBatch = 500

// NewLoaders returns fresh loaders reading from db.
func NewLoaders(db *store.DB) *Loaders {
	return &Loaders{
		Organization: newIDLoader(func(ctx context.Context, ids []string) ([]*store.Organization, error) {
			return store.OrganizationsByIDs(ctx, db, ids)
		}, func(o *store.Organization) string { return o.ID }, "organization"),
		User: newIDLoader(func(ctx context.Context, ids []string) ([]*store.User, error) {
			return store.UsersByIDs(ctx, db, ids)
		}, func(u *store.User) string { return u.ID }, "user"),
		Space: newIDLoader(func(ctx context.Context, ids []string) ([]*store.Space, error) {
			return store.SpacesByIDs(ctx, db, ids)
		}, func(s *store.Space) string { return s.ID }, "space"),
		Site: newIDLoader(func(ctx context.Context, ids []string) ([]*store.Site, error) {
			return store.SitesByIDs(ctx, db, ids)
		}, func(s *store.Site) string { return s.ID }, "site"),
		SiteGroups: newAncestorLoader(func(ctx context.Context, ids []string) (map[string][]*store.SiteSectionGroup, error) {
			rows, err := store.GroupsOfSites(ctx, db, ids)
			return bySite(rows, err, func(g *store.SiteSectionGroup) string { return g.SiteID })
		}),
		SiteSections: newAncestorLoader(func(ctx context.Context, ids []string) (map[string][]*store.SiteSection, error) {
			rows, err := store.SectionsOfSites(ctx, db, ids)
			return bySite(rows, err, func(s *store.SiteSection) string { return s.SiteID })
		}),
		SiteSpaces: newAncestorLoader(func(ctx context.Context, ids []string) (map[string]*siteSpaceSet, error) {
			rows, err := store.SiteSpacesOfSites(ctx, db, ids, true)
			return siteSpaceSets(rows), err
		}),
		SiteSpaceCount: newAncestorLoader(func(ctx context.Context, ids []string) (map[string]int, error) {
			return store.CountSiteSpaces(ctx, db, ids)
		}),
		LiveSpaceCount: newMapLoader(func(ctx context.Context, ids []string) (map[string]int, error) {
			return store.CountLiveSpaces(ctx, db, ids)
		}),
		MemberTeamCount: newMapLoader(func(ctx context.Context, keys []string) (map[string]int, error) {
			// Keys are "org/user"; a request lists the members of one
			// organization at a time, so group by it.
			byOrg := map[string][]string{}
			for _, k := range keys {
				org, user, _ := strings.Cut(k, "/")
				byOrg[org] = append(byOrg[org], user)
			}
			out := map[string]int{}
			for org, users := range byOrg {
				counts, err := store.CountTeamsOfMembers(ctx, db, org, users)
				if err != nil {
					return nil, err
				}
				for user, n := range counts {
					out[org+"/"+user] = n
				}
			}
			return out, nil
		}),
		TeamMemberCount: newMapLoader(func(ctx context.Context, ids []string) (map[string]int, error) {
			return store.CountTeamMembers(ctx, db, ids)
		}),
		CallerTeamRole: newMapLoader(func(ctx context.Context, ids []string) (map[string]store.TeamRole, error) {
			caller, err := CallerFrom(ctx)
			if err != nil {
				return nil, err
			}
			return store.TeamRolesOf(ctx, db, caller.User.ID, ids)
		}),
		// Several keys come together only through LoadMany (search).
		PageTree: newAncestorLoader(func(ctx context.Context, ids []string) (map[string]*store.PageTree, error) {
			return db.PageTrees(ctx, ids)
		}),
		PageBody: newMapLoader(func(ctx context.Context, digests []string) (map[string]string, error) {
			return store.PageBodies(ctx, db, digests)
		}),
		CommentReplies: newMapLoader(func(ctx context.Context, ids []string) (map[string][]*store.CommentReply, error) {
			rows, err := store.Replies(ctx, db, ids)
			out := map[string][]*store.CommentReply{}
			for _, x := range rows {
				out[x.CommentID] = append(out[x.CommentID], x)
			}
			return out, err
		}),
		Reactions: newMapLoader(func(ctx context.Context, ids []string) (map[string][]*store.Reaction, error) {
			rows, err := store.Reactions(ctx, db, ids)
			out := map[string][]*store.Reaction{}
			for _, x := range rows {
				out[x.TargetID] = append(out[x.TargetID], x)
			}
			return out, err
		}),
		ChangeRequestOpenComments: newMapLoader(func(ctx context.Context, ids []string) (map[string]int, error) {
			return store.OpenChangeRequestComments(ctx, db, ids)
		}),
		OrgSpaces: newAncestorLoader(func(ctx context.Context, ids []string) (map[string][]*store.AccessNode, error) {
			out := make(map[string][]*store.AccessNode, len(ids))
			for _, id := range ids {
				spaces, err := store.LoadOrgSpaces(ctx, db, id)
				if err != nil {
					return nil, err
				}
				out[id] = spaces
			}
			return out, nil
		}),
		OrgAccess: newAncestorLoader(func(ctx context.Context, ids []string) (map[string]*orgAccess, error) {
			out := make(map[string]*orgAccess, len(ids))
			for _, id := range ids {
				a, err := store.LoadOrgAccess(ctx, db, id)
				if err != nil {
					return nil, err
				}
				out[id] = newOrgAccess(a)
			}
			return out, nil
		}),
		SiteSpaceSpaces: newAncestorLoader(func(ctx context.Context, ids []string) (map[string]map[string]*store.Space, error) {
			// One map for every site of the batch: a site space looks up its
			// own space id, which is in the map whichever site published it.
			rows, err := store.SpacesOfSites(ctx, db, ids)
			byID := make(map[string]*store.Space, len(rows))
			for _, s := range rows {
				byID[s.ID] = s
			}
			out := make(map[string]map[string]*store.Space, len(ids))
			for _, id := range ids {
				out[id] = byID
			}
			return out, err
		}),
	}
}

// loadMany loads keys in one batch: their values in order, or the first error.
func loadMany[V any](ctx context.Context, l *dataloader.Loader[string, V], keys []string) ([]V, error) {
	values, errs := l.LoadMany(ctx, keys)()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return values, nil
}

// newIDLoader builds a loader over a fetch-by-ids query, answering each key
// with its row or NotFound(what).
func newIDLoader[T any](fetch func(context.Context, []string) ([]T, error), id func(T) string, what string) *dataloader.Loader[string, T] {
	batch := func(ctx context.Context, keys []string) []*dataloader.Result[T] {
		rows, err := fetch(ctx, keys)
		results := make([]*dataloader.Result[T], len(keys))
		if err != nil {
			for i := range results {
				results[i] = &dataloader.Result[T]{Error: err}
			}
			return results
		}
		byID := make(map[string]T, len(rows))
		for _, row := range rows {
			byID[id(row)] = row
		}
		for i, k := range keys {
			if row, ok := byID[k]; ok {
				results[i] = &dataloader.Result[T]{Data: row}
			} else {
				results[i] = &dataloader.Result[T]{Error: NotFound(what)}
			}
		}
		return results
	}
	return dataloader.NewBatchedLoader(batch,
		dataloader.WithWait[string, T](batchWindow),
		dataloader.WithBatchCapacity[string, T](maxBatch))
}

// newAncestorLoader builds a loader keyed by a shared ancestor (a site, an
// organization) over a query for several of them. It does not wait for more
// keys: the keys of one site's tree (one organization's content) are all the
// same, so the first load serves every sibling, and lists of sites prime it
// (primeSites) rather than relying on a batch window.
func newAncestorLoader[V any](fetch func(context.Context, []string) (map[string]V, error)) *dataloader.Loader[string, V] {
	return newMapLoaderWaiting(fetch, 0)
}

// newMapLoader builds a loader over a query answering several keys at once
// with a map; a key it leaves out gets the zero value (a count of 0, no role).
// Like the id loaders, it gathers the keys asked within batchWindow.
func newMapLoader[V any](fetch func(context.Context, []string) (map[string]V, error)) *dataloader.Loader[string, V] {
	return newMapLoaderWaiting(fetch, batchWindow)
}

func newMapLoaderWaiting[V any](fetch func(context.Context, []string) (map[string]V, error), wait time.Duration) *dataloader.Loader[string, V] {
	batch := func(ctx context.Context, keys []string) []*dataloader.Result[V] {
		values, err := fetch(ctx, keys)
		results := make([]*dataloader.Result[V], len(keys))
		for i, k := range keys {
			results[i] = &dataloader.Result[V]{Data: values[k], Error: err}
		}
		return results
	}
	return dataloader.NewBatchedLoader(batch,
		dataloader.WithWait[string, V](wait),
		dataloader.WithBatchCapacity[string, V](maxBatch))
}

// bySite groups rows by site, keeping their order.
func bySite[T any](rows []T, err error, site func(T) string) (map[string][]T, error) {
	out := map[string][]T{}
	for _, row := range rows {
		out[site(row)] = append(out[site(row)], row)
	}
	return out, err
}

type loadersKey struct{}

// WithLoaders returns a context carrying l.
func WithLoaders(ctx context.Context, l *Loaders) context.Context {
	return context.WithValue(ctx, loadersKey{}, l)
}

// loadersFrom returns the request's loaders.
func (r *Resolver) loaders(ctx context.Context) *Loaders {
	if l, ok := ctx.Value(loadersKey{}).(*Loaders); ok {
		return l
	}
	// A context without loaders (a background job calling a resolver helper)
	// gets private ones: correct, merely uncached across calls.
	return NewLoaders(r.DB)
}
