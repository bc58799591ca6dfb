package graph

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/uptrace/bun"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/docsapi/docsapi/graph/generated"
	"github.com/docsapi/docsapi/graph/model"
	"github.com/docsapi/docsapi/store"
)

var (
	// siteHostname is the reference's pattern for a custom hostname.
	siteHostname = regexp.MustCompile(`^([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?[.]){2,}[a-z0-9][a-z0-9-]{0,61}[a-z0-9]$`)
	// siteProxy is the reference's pattern for a proxy origin: a host and a path.
	siteProxy = regexp.MustCompile(`^([\w-]+\.)*[\w-]+\.[a-zA-Z]{2,}(\/[\w-]+)+$`)
)

// site loads site id of orgID for a caller who can read it.
func (r *Resolver) site(ctx context.Context, orgID, id string) (*store.Site, error) {
	if v := VisitorFrom(ctx); v != nil {
		// SECURITY: a visitor reads the site it was admitted to, as it was
		// then, and no other.
		if !v.reads(orgID, id) {
			return nil, NotFound("site")
		}
		r.loaders(ctx).Site.Prime(ctx, v.site.ID, v.site)
		return v.site, nil
	}
	// SECURITY: readers of the organization only; others get "not found".
	if _, err := contentRole(ctx, orgID, "site"); err != nil {
		return nil, err
	}
	s, err := store.GetSite(ctx, r.DB, orgID, id)
	if err != nil {
		return nil, orNotFound(err, "site")
	}
	r.loaders(ctx).Site.Prime(ctx, s.ID, s)
	return s, nil
}

// presentShareKey records a share key given with a request that opens
// site s (its own, or an active share link's), for the published addresses
// resolved below.
func (r *Resolver) presentShareKey(ctx context.Context, s *store.Site, key *string) error {
	if key == nil || *key == "" {
		return nil
	}
	valid, _, err := r.validShareKey(ctx, s, *key)
	if valid != "" {
		r.loaders(ctx).shareKeys.Store(s.ID, *key)
	}
	return err
}

func (r *queryResolver) Site(ctx context.Context, organizationID, id string, shareKey *string) (*store.Site, error) {
	if fc := graphql.GetFieldContext(ctx); fc != nil && selectsField(fc.Field.Selections, "structure") {
		// Start reading the structure beside the site's own row, for readers
		// of the organization (r.site checks the same, from the same cache).
		// Nothing of it is shown unless the site is found in the
		// organization: only the Site returned below leads to it.
		if _, err := contentRole(ctx, organizationID, "site"); err == nil || visitorReads(ctx, organizationID, id) {
			r.prefetchStructure(ctx, id, fc.Field.Selections)
		}
	}
	s, err := r.site(ctx, organizationID, id)
	if err != nil {
		return nil, err
	}
	if err := r.presentShareKey(ctx, s, shareKey); err != nil {
		return nil, err
	}
	return s, nil
}

func (r *queryResolver) PublishedContentSite(ctx context.Context, organizationID, siteID string, shareKey *string) (*model.PublishedContentSite, error) {
	s, err := r.site(ctx, organizationID, siteID)
	if err != nil {
		return nil, err
	}
	if !s.Published {
		return nil, NotFound("published site")
	}
	if err := r.presentShareKey(ctx, s, shareKey); err != nil {
		return nil, err
	}
	structure, err := (&siteResolver{r.Resolver}).Structure(ctx, s)
	if err != nil {
		return nil, err
	}
	// Its customizations are read when selected (site_customization.go).
	return &model.PublishedContentSite{Object: "published-content-site", Site: s, Structure: structure,
		Scripts: []*model.SiteIntegrationScript{}}, nil
}

func (r *queryResolver) SiteAdaptiveTemplateConditions(ctx context.Context, organizationID, siteID string) (*model.SiteAdaptiveTemplateConditionList, error) {
	s, err := r.site(ctx, organizationID, siteID)
	if err != nil {
		return nil, err
	}
	list := &model.SiteAdaptiveTemplateConditionList{Items: []*model.SiteAdaptiveTemplateCondition{}}
	if len(s.AdaptiveSchema) > 0 {
		var schema map[string]any
		if err := json.Unmarshal(s.AdaptiveSchema, &schema); err != nil {
			return nil, err
		}
		if items := templateConditions(schema); items != nil {
			list.Items = items
		}
	}
	return list, nil
}

func (r *organizationResolver) Sites(ctx context.Context, o *store.Organization, page *string, limit *int, _ *int, _ *string, space *string, title *string, published *bool, types []store.SiteType) (*model.SiteList, error) {
	// SECURITY: the organization's sites are listed to its readers.
	if canList, err := canListContent(ctx, o.ID); err != nil || !canList {
		return &model.SiteList{Items: []*store.Site{}, PageInfo: &model.PageInfo{}}, err
	}
	f := store.SiteFilter{SpaceID: space, Title: title, Published: published, Types: types}
	return paginate(page, limit, listQuery[*store.Site]{
		read:  func(p store.Page) ([]*store.Site, error) { return store.ListSites(ctx, r.DB, o.ID, f, p) },
		key:   func(s *store.Site) store.Keyset { return store.Keyset{Time: s.CreatedAt, ID: s.ID} },
		prime: func(sites []*store.Site) error { return r.primeSites(ctx, sites) },
	})
}

// primeSites loads, for all the sites of a list at once, what the query asks
// of each: one query per level for the whole list instead of one per site.
func (r *Resolver) primeSites(ctx context.Context, sites []*store.Site) error {
	fields := selectedOfItems(ctx)
	ids := make([]string, len(sites))
	for i, s := range sites {
		ids[i] = s.ID
	}
	if len(ids) == 0 {
		return nil
	}
	// A list is one organization's.
	org := sites[0].OrganizationID
	l := r.loaders(ctx)
	for _, s := range sites {
		l.Site.Prime(ctx, s.ID, s)
	}
	if fields["siteSpaces"] {
		counts, err := store.CountSiteSpaces(ctx, r.DB, org, ids)
		if err != nil {
			return err
		}
		for _, id := range ids {
			l.SiteSpaceCount.Prime(ctx, id, counts[id])
		}
	}
	if fields["customization"] {
		settings, err := readSiteCustomizations(ctx, r.DB, org, ids)
		if err != nil {
			return err
		}
		for _, id := range ids {
			l.SiteCustomizations.Prime(ctx, id, settings[id])
		}
	}
	if fields["structure"] || fields["sectionGroups"] || fields["sections"] || fields["siteSpaceList"] {
		groups, err := store.GroupsOfSites(ctx, r.DB, org, ids)
		if err != nil {
			return err
		}
		sections, err := store.SectionsOfSites(ctx, r.DB, org, ids)
		if err != nil {
			return err
		}
		g, _ := groupBy(groups, nil, func(g *store.SiteSectionGroup) string { return g.SiteID })
		s, _ := groupBy(sections, nil, func(s *store.SiteSection) string { return s.SiteID })
		for _, id := range ids {
			l.SiteGroups.Prime(ctx, id, g[id])
			l.SiteSections.Prime(ctx, id, s[id])
		}
		if fields["structure"] && selectsField(selectedBelowItems(ctx, "structure"), "space") {
			// The trees show their spaces: their site spaces are read with
			// them, for every site at once (each tree's prefetchStructure
			// finds them loaded).
			summaries := spaceSummariesSuffice(ctx)
			rows, spaces, err := store.SiteSpacesWithSpaces(ctx, r.DB, org, ids, summaries)
			if err != nil {
				return err
			}
			for id, v := range siteSpacesWithSpacesOfSites(ids, rows, spaces) {
				l.siteSpacesWithSpaces(summaries).Prime(ctx, id, v)
				l.SiteSpaces.Prime(ctx, id, v.set)
			}
			return nil
		}
		siteSpaces, err := store.SiteSpacesOfSites(ctx, r.DB, org, ids, true)
		if err != nil {
			return err
		}
		ss := siteSpaceSets(siteSpaces)
		for _, id := range ids {
			l.SiteSpaces.Prime(ctx, id, ss[id])
		}
	}
	return nil
}

// selectedOfItems returns the fields selected on the items of the list the
// current field returns.
func selectedOfItems(ctx context.Context) map[string]bool {
	out := map[string]bool{}
	for _, f := range fieldsOfItems(ctx) {
		out[f.Name] = true
	}
	return out
}

// selectedBelowItems returns what is selected below the field name of the
// items of the list the current field returns.
func selectedBelowItems(ctx context.Context, name string) ast.SelectionSet {
	var out ast.SelectionSet
	for _, f := range fieldsOfItems(ctx) {
		if f.Name == name {
			out = append(out, f.Selections...)
		}
	}
	return out
}

// fieldsOfItems are the fields selected on the items of the list the
// current field returns.
func fieldsOfItems(ctx context.Context) []graphql.CollectedField {
	fc := graphql.GetFieldContext(ctx)
	if fc == nil {
		return nil
	}
	opCtx := graphql.GetOperationContext(ctx)
	var out []graphql.CollectedField
	for _, f := range graphql.CollectFields(opCtx, fc.Field.Selections, nil) {
		if f.Name == "items" {
			out = append(out, graphql.CollectFields(opCtx, f.Selections, nil)...)
		}
	}
	return out
}

func (r *mutationResolver) CreateSite(ctx context.Context, organizationID string, input model.CreateSiteInput) (*store.Site, error) {
	// SECURITY: creating a site needs the create role.
	if err := requireOrgRole(ctx, organizationID, store.RoleCreate, "organization"); err != nil {
		return nil, err
	}
	now := r.now()
	s := &store.Site{
		ID: store.NewID(), OrganizationID: organizationID, Type: store.SiteTypeBasic, Title: "Untitled site",
		Visibility: store.SiteVisibilityPublic, ShareKey: store.NewSecret(), AgentsContext: store.AgentsContextIncluded,
		CreatedAt: now, UpdatedAt: now,
	}
	p := &patch{}
	setRequired(p, "type", "type", input.Type, &s.Type, nil)
	setRequired(p, "title", "title", input.Title, &s.Title, length("title", 2, 128))
	setRequired(p, "visibility", "visibility", input.Visibility, &s.Visibility, nil)
	if p.err != nil {
		return nil, p.err
	}
	spaceIDs, _ := input.Spaces.ValueOK()
	err := store.RunInTx(ctx, r.DB, func(ctx context.Context, tx bun.Tx) error {
		if err := store.CreateSite(ctx, tx, s); err != nil {
			return err
		}
		t := &siteTree{}
		for i, id := range spaceIDs {
			if _, err := r.addSiteSpace(ctx, tx, s, t, id, nil, "spaces["+itoa(i)+"]"); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return s, nil
}

func (r *mutationResolver) UpdateSite(ctx context.Context, organizationID, id string, input model.UpdateSiteInput) (*store.Site, error) {
	// SECURITY: managing a site needs the create role.
	if err := requireContentRole(ctx, organizationID, store.RoleCreate, "site"); err != nil {
		return nil, err
	}
	var site *store.Site
	err := r.changeSite(ctx, organizationID, id, func(ctx context.Context, tx bun.Tx, s *store.Site, t *siteTree) error {
		site = s
		p := &patch{}
		setRequired(p, "title", "title", input.Title, &s.Title, length("title", 2, 128))
		setRequired(p, "visibility", "visibility", input.Visibility, &s.Visibility, nil)
		setOptional(p, "basename", "basename", input.Basename, &s.Basename, func(b string) error {
			if err := checkLength("basename", b, 1, 100); err != nil {
				return err
			}
			return checkPattern("basename", b, validPath, "letters, digits, '.', '_', '~' and '-'")
		})
		setOptional(p, "hostname", "hostname", input.Hostname, &s.Hostname, func(h string) error {
			if err := checkLength("hostname", h, 1, 512); err != nil {
				return err
			}
			return checkPattern("hostname", h, siteHostname, "a lowercase hostname with at least three labels, such as docs.example.com")
		})
		var adaptive model.SiteAdaptiveContentInput
		setRequired(p, "adaptiveContent", "adaptive_content", input.AdaptiveContent, &adaptive, nil)
		if input.AdaptiveContent.IsSet() {
			s.AdaptiveContent = adaptive.Enabled
		}
		setRequired(p, "agentsContext", "agents_context", input.AgentsContext, &s.AgentsContext, nil)
		setOptional(p, "proxy", "proxy_origin", input.Proxy, &s.ProxyOrigin, func(origin string) error {
			if err := checkLength("proxy", origin, 1, 512); err != nil {
				return err
			}
			return checkPattern("proxy", origin, siteProxy, "a host and a path, such as example.com/docs")
		})
		if p.err != nil {
			return p.err
		}
		if sectionID, set, err := notNull("defaultSiteSection", input.DefaultSiteSection); err != nil {
			return err
		} else if set {
			section := t.section(sectionID)
			if section == nil {
				return Invalid("defaultSiteSection", "no such section in this site")
			}
			if err := setDefaultSection(ctx, tx, t, section); err != nil {
				return err
			}
		}
		if siteSpaceID, set, err := notNull("defaultSiteSpace", input.DefaultSiteSpace); err != nil {
			return err
		} else if set {
			ss := t.siteSpace(siteSpaceID)
			var container *string
			if d := t.defaultSection(); d != nil {
				container = &d.ID
			}
			if ss == nil || !sameContainer(ss.SectionID, container) {
				return Invalid("defaultSiteSpace", "no such site space at the root of this site (or in its default section)")
			}
			if err := setDefaultSiteSpace(ctx, tx, t, ss); err != nil {
				return err
			}
		}
		if !p.changed() {
			return nil
		}
		s.UpdatedAt = r.now()
		err := store.UpdateSite(ctx, tx, s, p.columns...)
		if errors.Is(err, store.ErrConflict) {
			switch {
			case strings.Contains(err.Error(), "basename") && s.Basename != nil:
				return Conflict("basename %q is already used by another site of this organization", *s.Basename)
			case strings.Contains(err.Error(), "hostname") && s.Hostname != nil:
				return Conflict("hostname %q is already used by another site", *s.Hostname)
			}
			return Conflict("another site has the same %s", strings.Join(p.columns, ", "))
		}
		return err
	})
	return site, err
}

func (r *mutationResolver) DeleteSite(ctx context.Context, organizationID, id string) (bool, error) {
	// SECURITY: deleting a site is for admins; strangers get 404.
	if err := requireContentRole(ctx, organizationID, store.RoleAdmin, "site"); err != nil {
		return false, err
	}
	return store.DeleteSite(ctx, r.DB, organizationID, id)
}

func (r *mutationResolver) PublishSite(ctx context.Context, organizationID, id string) (*store.Site, error) {
	return r.setPublished(ctx, organizationID, id, true)
}

func (r *mutationResolver) UnpublishSite(ctx context.Context, organizationID, id string) (*store.Site, error) {
	return r.setPublished(ctx, organizationID, id, false)
}

func (r *mutationResolver) setPublished(ctx context.Context, organizationID, id string, published bool) (*store.Site, error) {
	// SECURITY: publishing is part of managing a site.
	if err := requireContentRole(ctx, organizationID, store.RoleCreate, "site"); err != nil {
		return nil, err
	}
	s, err := r.site(ctx, organizationID, id)
	if err != nil {
		return nil, err
	}
	if s.Published == published {
		return s, nil
	}
	s.Published, s.UpdatedAt = published, r.now()
	return s, store.UpdateSite(ctx, r.DB, s, "published")
}

func (r *mutationResolver) UpdateSiteAdaptiveSchema(ctx context.Context, organizationID, siteID string, input model.UpdateSiteAdaptiveSchemaInput) (*model.SiteAdaptiveSchema, error) {
	// SECURITY: the visitor schema is a site setting.
	if err := requireContentRole(ctx, organizationID, store.RoleCreate, "site"); err != nil {
		return nil, err
	}
	s, err := r.site(ctx, organizationID, siteID)
	if err != nil {
		return nil, err
	}
	if err := checkVisitorSchema(input.JSONSchema); err != nil {
		return nil, err
	}
	if s.AdaptiveSchema, err = json.Marshal(input.JSONSchema); err != nil {
		return nil, err
	}
	now := r.now()
	s.AdaptiveSchemaUpdatedAt, s.UpdatedAt = &now, now
	if err := store.UpdateSite(ctx, r.DB, s, "adaptive_schema", "adaptive_schema_updated_at"); err != nil {
		return nil, err
	}
	return (&siteResolver{r.Resolver}).AdaptiveSchema(ctx, s)
}

type siteResolver struct{ *Resolver }

var _ generated.SiteResolver = (*siteResolver)(nil)

func (r *Resolver) Site() generated.SiteResolver { return &siteResolver{r} }

func (r *siteResolver) Proxy(ctx context.Context, s *store.Site) (*model.SiteProxy, error) {
	if s.ProxyOrigin == nil {
		return nil, nil
	}
	return &model.SiteProxy{Origin: *s.ProxyOrigin, Target: r.sitePublishedBase(s)}, nil
}

func (r *siteResolver) SiteSpaces(ctx context.Context, s *store.Site) (int, error) {
	if caller, err := CallerFrom(ctx); err == nil {
		if role, _ := caller.Membership(s.OrganizationID); role == store.RoleAdmin {
			return r.loaders(ctx).SiteSpaceCount.Load(ctx, s.ID)()
		}
	}
	// SECURITY: the site spaces the caller can see, as its lists show them.
	set, err := r.visibleSiteSpaces(ctx, s.ID)
	if err != nil || set == nil {
		return 0, err
	}
	return len(set.all), nil
}

func (r *siteResolver) AdaptiveContent(_ context.Context, s *store.Site) (*model.SiteAdaptiveContent, error) {
	return &model.SiteAdaptiveContent{Enabled: s.AdaptiveContent}, nil
}

// Features lists premium features: a self-hosted instance has no plans, so none.
func (r *siteResolver) Features(context.Context, *store.Site) ([]*model.SiteFeature, error) {
	return []*model.SiteFeature{}, nil
}

func (r *siteResolver) Urls(ctx context.Context, s *store.Site) (*model.SiteURLs, error) {
	org, id := pathEscape(s.OrganizationID), pathEscape(s.ID)
	return &model.SiteURLs{
		Location:  r.URLs.API("/v1/orgs/" + org + "/sites/" + id),
		App:       r.URLs.App("/o/" + org + "/sites/" + id),
		Published: r.publishedURL(ctx, s, ""),
	}, nil
}

func (r *siteResolver) ShareKey(ctx context.Context, s *store.Site) (*string, error) {
	// SECURITY: the share key opens a share-link site to anyone holding it:
	// only those who manage the site see it.
	if role, err := contentRole(ctx, s.OrganizationID, "site"); err != nil || !role.AtLeast(store.RoleCreate) {
		return nil, err
	}
	return &s.ShareKey, nil
}

func (r *siteResolver) AdaptiveSchema(ctx context.Context, s *store.Site) (*model.SiteAdaptiveSchema, error) {
	// A site's settings, not what it publishes: no visitor's to read (the
	// claims a visitor brings are checked against it where it is admitted).
	if len(s.AdaptiveSchema) == 0 || s.AdaptiveSchemaUpdatedAt == nil || VisitorFrom(ctx) != nil {
		return nil, nil
	}
	var schema map[string]any
	if err := json.Unmarshal(s.AdaptiveSchema, &schema); err != nil {
		return nil, err
	}
	return &model.SiteAdaptiveSchema{Object: "site-adaptive-schema", JSONSchema: schema, UpdatedAt: *s.AdaptiveSchemaUpdatedAt}, nil
}

// sitePublishedBase is where a site is served: its custom hostname, or its
// path under the organization's published address.
func (r *Resolver) sitePublishedBase(s *store.Site) string {
	if s.Hostname != nil {
		return "https://" + *s.Hostname
	}
	name := s.ID
	if s.Basename != nil {
		name = *s.Basename
	}
	return r.URLs.Published("/" + pathEscape(s.OrganizationID) + "/" + pathEscape(name))
}

// publishedURL is the published address of path within site s, or nil when
// the site is not published or, for a share-link site, no valid share key
// came with the request.
func (r *Resolver) publishedURL(ctx context.Context, s *store.Site, path string) *string {
	if !s.Published {
		return nil
	}
	u := r.sitePublishedBase(s) + path
	if s.Visibility == store.SiteVisibilityShareLink {
		// Only a key that opens the site was recorded (presentShareKey).
		key, ok := r.loaders(ctx).shareKeys.Load(s.ID)
		if !ok {
			return nil
		}
		u = withShareKey(u, key.(string))
	}
	return &u
}

// withShareKey is the published address u carrying a share key: the
// site's own (Site.shareKey) or a share link's.
func withShareKey(u, key string) string { return u + "?share=" + key }
