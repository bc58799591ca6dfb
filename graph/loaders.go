package graph

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/graph-gophers/dataloader/v7"
	"github.com/uptrace/bun"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/docsapi/docsapi/store"
	"github.com/docsapi/docsapi/tracing"
)

// Loaders batch and cache reads for one request; middleware creates them for
// every request, GraphQL and REST alike. Loaders keyed by id gather the keys
// asked for within a short window into one query. The site tree's loaders are
// keyed by the site instead (every section of a site is one key), so siblings
// share one pending result and no window is needed on that hot path.
//
// Each loader is built on its first use in the request (loader): a request
// uses few of them, and building one allocates its cache and batch state.
type Loaders struct {
	Organization loader[*store.Organization]
	User         loader[*store.User]
	// Space loads live spaces; deleted ones are not found.
	Space loader[*store.Space]
	// Site is primed by the resolvers that read sites, for the rows below
	// them (section and site space addresses need their site).
	Site loader[*store.Site]

	// The site tree, keyed by site: every section of a site is one key, so
	// all the groups (or sections) asking for their children share one
	// pending result. Lists of sites prime them for all their sites at once.
	SiteGroups     loader[[]*store.SiteSectionGroup]
	SiteSections   loader[[]*store.SiteSection]
	SiteSpaces     loader[*siteSpaceSet]
	SiteSpaceCount loader[int]
	// SiteSpaceSpaces maps space id → space for the spaces a site publishes;
	// SiteSpaceSummaries is the same with only the summary columns read,
	// for operations that select nothing else of them (projection.go).
	SiteSpaceSpaces    loader[map[string]*store.Space]
	SiteSpaceSummaries loader[map[string]*store.Space]
	// SiteSpacesWithSpaces is a site's site spaces and the spaces they
	// publish, read in one statement, for a tree that shows its spaces
	// (prefetchStructure); SiteSpacesWithSpaceSummaries the same with the
	// spaces' summaries. Only prefetchStructure loads them: the readers of
	// site spaces and of their spaces use what it started (site_structure.go).
	SiteSpacesWithSpaces         loader[*siteSpacesWithSpaces]
	SiteSpacesWithSpaceSummaries loader[*siteSpacesWithSpaces]
	// SiteCustomizations are a site's customization settings and its site
	// spaces' overrides (site_customization.go), keyed by site.
	SiteCustomizations loader[*siteCustomizations]
	// SitePublishingAuths are sites' visitor authentication settings
	// (site_share_link.go), keyed by site: a list of sites asking for
	// theirs reads them in one query.
	SitePublishingAuths loader[*store.SitePublishingAuth]

	// Counts shown on members and teams, and the caller's role in teams.
	MemberTeamCount loader[int]            // by orgKey(organization, user)
	TeamMemberCount loader[int]            // by orgKey(organization, team)
	CallerTeamRole  loader[store.TeamRole] // by orgKey(organization, team)
	// PageTree is a revision's indexed pages, by orgKey(organization,
	// revision); PageBody a page body's markdown, by orgKey(organization,
	// digest).
	PageTree loader[*store.PageTree]
	PageBody loader[string]
	// CommentReplies and Reactions serve the replies (oldest first) of a
	// comment and the reactions to a comment or reply; the open comments of
	// a change request are counted by change request (those of spaces are
	// carried on the space's row).
	CommentReplies            loader[[]*store.CommentReply]
	Reactions                 loader[[]*store.Reaction]
	ChangeRequestOpenComments loader[int]
	// OrgAccess decides roles on an organization's content (access.go);
	// OrgSpaces is every space of an organization, for the lists that look
	// at all of them (an organization's change requests, its search);
	// ContentTotals, ContentGroups and GrantedSpaces are what the totals of
	// its lists of spaces and collections read (total_count.go), once for
	// every total of the request: its counts, its spaces and collections
	// counted by what decides who reads them, and the spaces granted to
	// someone on themselves.
	OrgAccess     loader[*orgAccess]
	OrgSpaces     loader[[]*store.AccessNode]
	ContentTotals loader[store.ContentTotals]
	ContentGroups loader[[]*store.ContentGroup]
	GrantedSpaces loader[[]*store.AccessNode]

	// shareKeys are the share keys presented in this request, by site id,
	// so the published addresses of share-link sites resolve below the field
	// that took the key.
	shareKeys sync.Map
	// memo holds values read once per request through memoized.
	memo sync.Map
	// readableSpaces memoizes, by space id, whether the caller may read it
	// (authorize.go's canReadSpaceID); viewer is the caller as the read
	// rules see it.
	readableSpaces sync.Map
	viewerOnce     sync.Once
	viewer         *viewer
}

// batchWindow is how long an id loader waits for sibling keys. The hot paths
// do not depend on it (see above); it only merges stragglers.
const batchWindow = 2 * time.Millisecond

// maxBatch keeps IN (...) lists bounded.
const maxBatch = 500

// ancestorInput is the batch channel of the loaders keyed by an ancestor: a
// request asks them for a key or two (dataloader allocates the channel with
// every batch, 1000 entries by default).
const ancestorInput = 8

// NewLoaders returns fresh loaders reading from db. It only records what
// each reads (the load* functions below); nothing is built until used.
func NewLoaders(db *store.DB) *Loaders {
	l := &Loaders{}
	l.Organization.init(db, "Organization", loadOrganizations)
	l.User.init(db, "User", loadUsers)
	l.Space.init(db, "Space", loadSpaces)
	l.Site.init(db, "Site", loadSites)
	l.SiteGroups.init(db, "SiteGroups", loadSiteGroups)
	l.SiteSections.init(db, "SiteSections", loadSiteSections)
	l.SiteSpaces.init(db, "SiteSpaces", loadSiteSpaces)
	l.SiteSpaceCount.init(db, "SiteSpaceCount", loadSiteSpaceCount)
	l.SiteSpaceSpaces.init(db, "SiteSpaceSpaces", loadSiteSpaceSpaces)
	l.SiteSpaceSummaries.init(db, "SiteSpaceSummaries", loadSiteSpaceSummaries)
	l.SiteSpacesWithSpaces.init(db, "SiteSpacesWithSpaces", loadSiteSpacesWithSpaces(false))
	l.SiteSpacesWithSpaceSummaries.init(db, "SiteSpacesWithSpaceSummaries", loadSiteSpacesWithSpaces(true))
	l.SiteCustomizations.init(db, "SiteCustomizations", loadSiteCustomizations)
	l.SitePublishingAuths.init(db, "SitePublishingAuths", loadSitePublishingAuths)
	l.MemberTeamCount.init(db, "MemberTeamCount", loadMemberTeamCount)
	l.TeamMemberCount.init(db, "TeamMemberCount", loadTeamMemberCount)
	l.CallerTeamRole.init(db, "CallerTeamRole", loadCallerTeamRole)
	l.PageTree.init(db, "PageTree", loadPageTree)
	l.PageBody.init(db, "PageBody", loadPageBody)
	l.CommentReplies.init(db, "CommentReplies", loadCommentReplies)
	l.Reactions.init(db, "Reactions", loadReactions)
	l.ChangeRequestOpenComments.init(db, "ChangeRequestOpenComments", loadChangeRequestOpenComments)
	l.OrgAccess.init(db, "OrgAccess", loadOrgAccess)
	l.OrgSpaces.init(db, "OrgSpaces", loadOrgSpaces)
	l.ContentTotals.init(db, "ContentTotals", loadContentTotals)
	l.ContentGroups.init(db, "ContentGroups", loadContentGroups)
	l.GrantedSpaces.init(db, "GrantedSpaces", loadGrantedSpaces)
	return l
}

// What each loader reads. These are built once, at start; a request's
// loaders call them with its database when first used.
var (
	loadOrganizations = idLoader(func(ctx context.Context, db *store.DB, ids []string) ([]*store.Organization, error) {
		return store.OrganizationsByIDs(ctx, db, ids)
	}, func(o *store.Organization) string { return o.ID }, "organization")
	loadUsers = idLoader(func(ctx context.Context, db *store.DB, ids []string) ([]*store.User, error) {
		return store.UsersByIDs(ctx, db, ids)
	}, func(u *store.User) string { return u.ID }, "user")
	loadSpaces = idLoader(func(ctx context.Context, db *store.DB, ids []string) ([]*store.Space, error) {
		return store.SpacesByIDs(ctx, db, ids)
	}, func(s *store.Space) string { return s.ID }, "space")
	loadSites = idLoader(func(ctx context.Context, db *store.DB, ids []string) ([]*store.Site, error) {
		var out []*store.Site
		err := db.PerOrganization(ctx, "sites", ids, func(org string, ids []string) error {
			rows, err := store.SitesByIDs(ctx, db, org, ids)
			out = append(out, rows...)
			return err
		})
		return out, err
	}, func(s *store.Site) string { return s.ID }, "site")
	loadSiteGroups = ancestorLoader(perSiteOrganization(func(ctx context.Context, db *store.DB, org string, ids []string) (map[string][]*store.SiteSectionGroup, error) {
		rows, err := store.GroupsOfSites(ctx, db, org, ids)
		return groupBy(rows, err, func(g *store.SiteSectionGroup) string { return g.SiteID })
	}))
	loadSiteSections = ancestorLoader(perSiteOrganization(func(ctx context.Context, db *store.DB, org string, ids []string) (map[string][]*store.SiteSection, error) {
		rows, err := store.SectionsOfSites(ctx, db, org, ids)
		return groupBy(rows, err, func(s *store.SiteSection) string { return s.SiteID })
	}))
	loadSiteSpaces = ancestorLoader(perSiteOrganization(func(ctx context.Context, db *store.DB, org string, ids []string) (map[string]*siteSpaceSet, error) {
		rows, err := store.SiteSpacesOfSites(ctx, db, org, ids, true)
		return siteSpaceSets(rows), err
	}))
	loadSiteSpaceCount = ancestorLoader(perSiteOrganization(func(ctx context.Context, db *store.DB, org string, ids []string) (map[string]int, error) {
		return store.CountSiteSpaces(ctx, db, org, ids)
	}))
	loadSiteCustomizations = ancestorLoader(perSiteOrganization(readSiteCustomizations))
	// Gathered within the batch window: the sites of a list (no priming).
	loadSitePublishingAuths = mapLoader(perSiteOrganization(func(ctx context.Context, db *store.DB, org string, ids []string) (map[string]*store.SitePublishingAuth, error) {
		rows, err := store.PublishingAuthsOfSites(ctx, db, org, ids)
		out := make(map[string]*store.SitePublishingAuth, len(rows))
		for _, a := range rows {
			out[a.SiteID] = a
		}
		return out, err
	}))
	loadSiteSpaceSpaces    = ancestorLoader(perSiteOrganization(spacesBySite(store.SpacesOfSites)))
	loadSiteSpaceSummaries = ancestorLoader(perSiteOrganization(spacesBySite(store.SpaceSummariesOfSites)))
	loadMemberTeamCount    = mapLoader(perOrganization(func(ctx context.Context, db *store.DB, org string, users []string) (map[string]int, error) {
		return store.CountTeamsOfMembers(ctx, db, org, users)
	}))
	loadTeamMemberCount = mapLoader(perOrganization(func(ctx context.Context, db *store.DB, org string, ids []string) (map[string]int, error) {
		return store.CountTeamMembers(ctx, db, org, ids)
	}))
	loadCallerTeamRole = mapLoader(perOrganization(func(ctx context.Context, db *store.DB, org string, ids []string) (map[string]store.TeamRole, error) {
		caller, err := CallerFrom(ctx)
		if err != nil {
			return nil, err
		}
		return store.TeamRolesOf(ctx, db, org, caller.User.ID, ids)
	}))
	// Several keys come together only through LoadMany (search), which
	// sends them all at once: the full batch channel takes them unblocked.
	loadPageTree = func(db *store.DB, opts ...dataloader.Option[string, *store.PageTree]) *dataloader.Loader[string, *store.PageTree] {
		trees := perOrganization(func(ctx context.Context, db *store.DB, org string, ids []string) (map[string]*store.PageTree, error) {
			return db.PageTrees(ctx, org, ids)
		})
		return newMapLoaderWaiting(func(ctx context.Context, keys []string) (map[string]*store.PageTree, error) {
			return trees(ctx, db, keys)
		}, 0, maxBatch, opts...)
	}
	loadPageBody = mapLoader(perOrganization(func(ctx context.Context, db *store.DB, org string, digests []string) (map[string]string, error) {
		return store.PageBodies(ctx, db, org, digests)
	}))
	loadCommentReplies = mapLoader(perOrganization(func(ctx context.Context, db *store.DB, org string, ids []string) (map[string][]*store.CommentReply, error) {
		rows, err := store.Replies(ctx, db, org, ids)
		return groupBy(rows, err, func(r *store.CommentReply) string { return r.CommentID })
	}))
	loadReactions = mapLoader(perOrganization(func(ctx context.Context, db *store.DB, org string, ids []string) (map[string][]*store.Reaction, error) {
		rows, err := store.Reactions(ctx, db, org, ids)
		return groupBy(rows, err, func(r *store.Reaction) string { return r.TargetID })
	}))
	loadChangeRequestOpenComments = mapLoader(perOrganization(func(ctx context.Context, db *store.DB, org string, ids []string) (map[string]int, error) {
		return store.OpenChangeRequestComments(ctx, db, org, ids)
	}))
	loadOrgSpaces     = ancestorLoader(eachOrganization(store.LoadOrgSpaces))
	loadContentTotals = ancestorLoader(eachOrganization(store.LoadContentTotals))
	loadContentGroups = ancestorLoader(eachOrganization(store.ContentGroups))
	loadGrantedSpaces = ancestorLoader(eachOrganization(store.GrantedSpaceNodes))
	loadOrgAccess     = ancestorLoader(eachOrganization(func(ctx context.Context, db bun.IDB, id string) (*orgAccess, error) {
		a, err := store.LoadOrgAccess(ctx, db, id)
		if err != nil {
			return nil, err
		}
		return newOrgAccess(a), nil
	}))
)

// loadSiteSpacesWithSpaces reads sites' site spaces with their spaces
// (whole, or their summaries) in one statement.
func loadSiteSpacesWithSpaces(summaries bool) loaderBuild[*siteSpacesWithSpaces] {
	return ancestorLoader(perSiteOrganization(func(ctx context.Context, db *store.DB, org string, ids []string) (map[string]*siteSpacesWithSpaces, error) {
		rows, spaces, err := store.SiteSpacesWithSpaces(ctx, db, org, ids, summaries)
		return siteSpacesWithSpacesOfSites(ids, rows, spaces), err
	}))
}

// siteSpacesWithSpacesOfSites sorts what SiteSpacesWithSpaces read for
// sites ids out by site.
func siteSpacesWithSpacesOfSites(ids []string, rows []*store.SiteSpace, spaces []*store.Space) map[string]*siteSpacesWithSpaces {
	sets := siteSpaceSets(rows)
	byID := make(map[string]*store.Space, len(spaces))
	for _, s := range spaces {
		byID[s.ID] = s
	}
	out := make(map[string]*siteSpacesWithSpaces, len(ids))
	for _, id := range ids {
		// A site of no site spaces has no set, as SiteSpaces answers.
		out[id] = &siteSpacesWithSpaces{set: sets[id], spaces: byID}
	}
	return out
}

// loader is one of a request's loaders, built from its database on first
// use. Its methods are dataloader's (those the resolvers use).
type loader[V any] struct {
	once  sync.Once
	db    *store.DB
	name  string
	build loaderBuild[V]
	l     *dataloader.Loader[string, V]
}

// loaderBuild builds a loader over db, with options of dataloader's.
type loaderBuild[V any] func(db *store.DB, opts ...dataloader.Option[string, V]) *dataloader.Loader[string, V]

// init readies l, named name in the spans of its batches.
func (l *loader[V]) init(db *store.DB, name string, build loaderBuild[V]) {
	l.db, l.name, l.build = db, name, build
}

// get is the loader, built on first use: with spans of its batches when
// that use is under a recording span (a traced request), as dataloader
// builds it otherwise.
func (l *loader[V]) get(ctx context.Context) *dataloader.Loader[string, V] {
	l.once.Do(func() {
		if tracing.Recording(ctx) {
			l.l = l.build(l.db, dataloader.WithTracer[string, V](batchSpans[V]{loader: l.name}))
			return
		}
		l.l = l.build(l.db)
	})
	return l.l
}

// Load loads key: call the thunk for its value.
func (l *loader[V]) Load(ctx context.Context, key string) dataloader.Thunk[V] {
	return l.get(ctx).Load(ctx, key)
}

// LoadMany loads keys in as few batches as it can.
func (l *loader[V]) LoadMany(ctx context.Context, keys []string) dataloader.ThunkMany[V] {
	return l.get(ctx).LoadMany(ctx, keys)
}

// Prime caches v for key, unless key is already loaded or loading.
func (l *loader[V]) Prime(ctx context.Context, key string, v V) {
	l.get(ctx).Prime(ctx, key, v)
}

// Clear forgets key, so that its next load reads it again.
func (l *loader[V]) Clear(ctx context.Context, key string) {
	l.get(ctx).Clear(ctx, key)
}

// loadAll loads keys in one batch: their values in order, or the first error.
func (l *loader[V]) loadAll(ctx context.Context, keys []string) ([]V, error) {
	values, errs := l.LoadMany(ctx, keys)()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return values, nil
}

// batchSpans is the dataloader tracer of the loaders of a traced request:
// a span per batch (its reads), under the span of the field that asked
// first, and none per load.
type batchSpans[V any] struct{ loader string }

func (batchSpans[V]) TraceLoad(ctx context.Context, key string) (context.Context, dataloader.TraceLoadFinishFunc[V]) {
	return dataloader.NoopTracer[string, V]{}.TraceLoad(ctx, key)
}

func (batchSpans[V]) TraceLoadMany(ctx context.Context, keys []string) (context.Context, dataloader.TraceLoadManyFinishFunc[V]) {
	return dataloader.NoopTracer[string, V]{}.TraceLoadMany(ctx, keys)
}

func (b batchSpans[V]) TraceBatch(ctx context.Context, keys []string) (context.Context, dataloader.TraceBatchFinishFunc[V]) {
	if !tracing.Recording(ctx) {
		return dataloader.NoopTracer[string, V]{}.TraceBatch(ctx, keys)
	}
	ctx, span := tracing.Child(ctx, "load "+b.loader, trace.WithAttributes(attribute.Int("docsapi.loader.keys", len(keys))))
	return ctx, func([]*dataloader.Result[V]) { span.End() }
}

// idLoader, ancestorLoader and mapLoader describe loaders over queries of
// a request's database (newIDLoader, newAncestorLoader, newMapLoader).
func idLoader[T any](fetch func(context.Context, *store.DB, []string) ([]T, error), id func(T) string, what string) loaderBuild[T] {
	return func(db *store.DB, opts ...dataloader.Option[string, T]) *dataloader.Loader[string, T] {
		return newIDLoader(func(ctx context.Context, ids []string) ([]T, error) { return fetch(ctx, db, ids) }, id, what, opts...)
	}
}

func ancestorLoader[V any](fetch func(context.Context, *store.DB, []string) (map[string]V, error)) loaderBuild[V] {
	return func(db *store.DB, opts ...dataloader.Option[string, V]) *dataloader.Loader[string, V] {
		return newAncestorLoader(func(ctx context.Context, ids []string) (map[string]V, error) { return fetch(ctx, db, ids) }, opts...)
	}
}

func mapLoader[V any](fetch func(context.Context, *store.DB, []string) (map[string]V, error)) loaderBuild[V] {
	return func(db *store.DB, opts ...dataloader.Option[string, V]) *dataloader.Loader[string, V] {
		return newMapLoader(func(ctx context.Context, ids []string) (map[string]V, error) { return fetch(ctx, db, ids) }, opts...)
	}
}

// newIDLoader builds a loader over a fetch-by-ids query, answering each key
// with its row or NotFound(what).
func newIDLoader[T any](fetch func(context.Context, []string) ([]T, error), id func(T) string, what string, opts ...dataloader.Option[string, T]) *dataloader.Loader[string, T] {
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
	options := []dataloader.Option[string, T]{
		dataloader.WithWait[string, T](batchWindow),
		dataloader.WithBatchCapacity[string, T](maxBatch),
		dataloader.WithInputCapacity[string, T](maxBatch), // a batch never holds more
	}
	return dataloader.NewBatchedLoader(batch, append(options, opts...)...)
}

// newAncestorLoader builds a loader keyed by a shared ancestor (a site, an
// organization) over a query for several of them. It does not wait for more
// keys: the keys of one site's tree (one organization's content) are all the
// same, so the first load serves every sibling, and lists of sites prime it
// (primeSites) rather than relying on a batch window.
func newAncestorLoader[V any](fetch func(context.Context, []string) (map[string]V, error), opts ...dataloader.Option[string, V]) *dataloader.Loader[string, V] {
	return newMapLoaderWaiting(fetch, 0, ancestorInput, opts...)
}

// newMapLoader builds a loader over a query answering several keys at once
// with a map; a key it leaves out gets the zero value (a count of 0, no role).
// Like the id loaders, it gathers the keys asked within batchWindow.
func newMapLoader[V any](fetch func(context.Context, []string) (map[string]V, error), opts ...dataloader.Option[string, V]) *dataloader.Loader[string, V] {
	return newMapLoaderWaiting(fetch, batchWindow, maxBatch, opts...)
}

// newMapLoaderWaiting builds a map loader waiting wait for more keys, with
// a batch channel of input keys (a load blocks while the channel is full).
func newMapLoaderWaiting[V any](fetch func(context.Context, []string) (map[string]V, error), wait time.Duration, input int, opts ...dataloader.Option[string, V]) *dataloader.Loader[string, V] {
	batch := func(ctx context.Context, keys []string) []*dataloader.Result[V] {
		values, err := fetch(ctx, keys)
		results := make([]*dataloader.Result[V], len(keys))
		for i, k := range keys {
			results[i] = &dataloader.Result[V]{Data: values[k], Error: err}
		}
		return results
	}
	options := []dataloader.Option[string, V]{
		dataloader.WithWait[string, V](wait),
		dataloader.WithBatchCapacity[string, V](maxBatch),
		dataloader.WithInputCapacity[string, V](input),
	}
	return dataloader.NewBatchedLoader(batch, append(options, opts...)...)
}

// groupBy groups rows by key (their site, comment...), keeping their order;
// it passes err through, for loaders returning what they read.
func groupBy[T any](rows []T, err error, key func(T) string) (map[string][]T, error) {
	out := map[string][]T{}
	for _, row := range rows {
		k := key(row)
		out[k] = append(out[k], row)
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

// memoKey names a value memoized for a request: what it is, and its key.
type memoKey struct{ kind, key string }

// memoized returns load's value for key, loaded once per request. It serves
// values asked for once per element of a large list (a site's spaces, for
// each of its thousand site spaces), where even a cached dataloader Load
// costs a channel, a closure and three locks; load itself goes through the
// loaders, so lists of parents still batch. Whoever changes the data
// forgets the key (Loaders.forget).
func memoized[V any](l *Loaders, key memoKey, load func() (V, error)) (V, error) {
	if v, ok := l.memo.Load(key); ok {
		return v.(V), nil
	}
	v, err := load()
	if err == nil {
		l.memo.Store(key, v)
	}
	return v, err
}

// spacesBySite makes a site loader's batch of read, which returns the spaces
// the site spaces of some sites publish: one map for every site of the
// batch, as a site space looks up its own space id, which is in the map
// whichever site published it.
func spacesBySite(read func(context.Context, bun.IDB, string, []string) ([]*store.Space, error)) func(context.Context, *store.DB, string, []string) (map[string]map[string]*store.Space, error) {
	return func(ctx context.Context, db *store.DB, org string, ids []string) (map[string]map[string]*store.Space, error) {
		rows, err := read(ctx, db, org, ids)
		byID := make(map[string]*store.Space, len(rows))
		for _, s := range rows {
			byID[s.ID] = s
		}
		out := make(map[string]map[string]*store.Space, len(ids))
		for _, id := range ids {
			out[id] = byID
		}
		return out, err
	}
}

// orgKey is the key of a loader of an organization's rows (perOrganization):
// the organization, then the row's id (no id has a '/').
func orgKey(orgID, id string) string { return orgID + "/" + id }

// eachOrganization makes the batch of a loader keyed by organization out
// of a read of one organization: a request asks for one or two.
func eachOrganization[V any](read func(context.Context, bun.IDB, string) (V, error)) func(context.Context, *store.DB, []string) (map[string]V, error) {
	return func(ctx context.Context, db *store.DB, ids []string) (map[string]V, error) {
		out := make(map[string]V, len(ids))
		for _, id := range ids {
			v, err := read(ctx, db, id)
			if err != nil {
				return nil, err
			}
			out[id] = v
		}
		return out, nil
	}
}

// perOrganization makes a loader's batch over orgKey keys of fetch, which
// reads rows of one organization by id: each query names its organization,
// which sends it to one shard group on a Citus cluster. A request reads
// one organization's rows: one query.
func perOrganization[V any](fetch func(ctx context.Context, db *store.DB, org string, ids []string) (map[string]V, error)) func(context.Context, *store.DB, []string) (map[string]V, error) {
	return func(ctx context.Context, db *store.DB, keys []string) (map[string]V, error) {
		byOrg := map[string][]string{}
		for _, k := range keys {
			org, id, _ := strings.Cut(k, "/")
			byOrg[org] = append(byOrg[org], id)
		}
		out := make(map[string]V, len(keys))
		for org, ids := range byOrg {
			values, err := fetch(ctx, db, org, ids)
			if err != nil {
				return nil, err
			}
			for id, v := range values {
				out[orgKey(org, id)] = v
			}
		}
		return out, nil
	}
}

// perSiteOrganization makes a loader's batch over sites of fetch, which
// reads sites of one organization: the sites of a batch are grouped by
// organization (store.DB.PerOrganization: site ids carry none), and each
// group read by its organization, which sends it to one shard group on a
// Citus cluster. A request reads one organization's sites: one group.
func perSiteOrganization[V any](fetch func(ctx context.Context, db *store.DB, org string, ids []string) (map[string]V, error)) func(context.Context, *store.DB, []string) (map[string]V, error) {
	return func(ctx context.Context, db *store.DB, ids []string) (map[string]V, error) {
		out := make(map[string]V, len(ids))
		err := db.PerOrganization(ctx, "sites", ids, func(org string, ids []string) error {
			values, err := fetch(ctx, db, org, ids)
			for id, v := range values {
				out[id] = v
			}
			return err
		})
		return out, err
	}
}

// forget drops a memoized value.
func (l *Loaders) forget(key memoKey) { l.memo.Delete(key) }
