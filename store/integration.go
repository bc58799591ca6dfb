package store

import (
	"context"
	"encoding/json"
	"io"
	"time"

	"github.com/uptrace/bun"
)

// Integration is a published integration: a global name, owned by the
// organization that published it, with a version that grows at each publish.
type Integration struct {
	bun.BaseModel `bun:"table:integrations,alias:i"`

	ID                    string                `bun:"id,pk"`
	Name                  string                `bun:"name"`
	OrganizationID        string                `bun:"organization_id"`
	Version               int                   `bun:"version"`
	Runtime               string                `bun:"runtime"`
	Title                 string                `bun:"title"`
	Description           string                `bun:"description"`
	Summary               string                `bun:"summary"`
	Visibility            IntegrationVisibility `bun:"visibility"`
	Target                IntegrationTarget     `bun:"target"`
	Scopes                []IntegrationScope    `bun:"scopes,array"`
	Categories            []IntegrationCategory `bun:"categories,array"`
	Blocks                json.RawMessage       `bun:"blocks,type:jsonb"`
	ContentSources        json.RawMessage       `bun:"content_sources,type:jsonb"`
	Configurations        json.RawMessage       `bun:"configurations,type:jsonb"`
	ExternalLinks         json.RawMessage       `bun:"external_links,type:jsonb"`
	Icon                  *Asset                `bun:"icon,type:jsonb"`
	PreviewImages         []Asset               `bun:"preview_images,type:jsonb"`
	Script                string                `bun:"script"`
	Secrets               []byte                `bun:"secrets"`
	ContentSecurityPolicy json.RawMessage       `bun:"content_security_policy,type:jsonb"`
	CreatedAt             time.Time             `bun:"created_at"`
	UpdatedAt             time.Time             `bun:"updated_at"`
}

// Object is the REST type name of an integration.
func (Integration) Object() string { return "integration" }

// Asset is an image of an integration, its bytes in the blob store.
type Asset struct {
	SHA256      string `json:"sha256"`
	ContentType string `json:"contentType"`
}

// GetIntegration reads an integration by name.
func GetIntegration(ctx context.Context, db bun.IDB, name string) (*Integration, error) {
	in := new(Integration)
	return in, translate(db.NewSelect().Model(in).Where("i.name = ?", name).Scan(ctx))
}

// LockIntegration reads an integration by name for update, for the rest of tx.
func LockIntegration(ctx context.Context, tx bun.Tx, name string) (*Integration, error) {
	in := new(Integration)
	return in, translate(tx.NewSelect().Model(in).Where("i.name = ?", name).For("NO KEY UPDATE").Scan(ctx))
}

// IntegrationFilter narrows the integration list. Every integration listed
// is public or owned by one of MemberOf (the caller's organizations).
type IntegrationFilter struct {
	MemberOf       []string
	Search         string
	Category       string
	BlockDomain    string
	Blocks         *bool
	ContentSources *bool
	Owner          string
	Scope          string
	Target         string
}

// blockHost extracts the host of a URL pattern (in SQL: passed as an
// argument, as its question marks are not placeholders).
const blockHost = `^(?:[a-zA-Z][a-zA-Z0-9+.-]*://)?([^/:?#]+)`

// ListIntegrations pages through the integrations f admits, oldest first.
func ListIntegrations(ctx context.Context, db bun.IDB, f IntegrationFilter, p Page) ([]*Integration, error) {
	var rows []*Integration
	q := db.NewSelect().Model(&rows)
	if len(f.MemberOf) > 0 {
		q = q.Where("(i.visibility = 'public' OR i.organization_id IN (?))", bun.List(f.MemberOf))
	} else {
		q = q.Where("i.visibility = 'public'")
	}
	if f.Search != "" {
		pattern := "%" + escapeLike(f.Search) + "%"
		q = q.Where("(i.name ILIKE ? OR i.title ILIKE ?)", pattern, pattern)
	}
	if f.Category != "" {
		q = q.Where("? = ANY(i.categories)", f.Category)
	}
	if f.Scope != "" {
		q = q.Where("? = ANY(i.scopes)", f.Scope)
	}
	if f.Target != "" {
		q = q.Where("i.target = ?", f.Target)
	}
	if f.Owner != "" {
		q = q.Where("i.organization_id = ?", f.Owner)
	}
	if f.Blocks != nil {
		q = q.Where("(jsonb_array_length(i.blocks) > 0) = ?", *f.Blocks)
	}
	if f.ContentSources != nil {
		q = q.Where("(jsonb_array_length(i.content_sources) > 0) = ?", *f.ContentSources)
	}
	if f.BlockDomain != "" {
		// A block's domains are the hosts of its urlUnfurl patterns.
		q = q.Where(`EXISTS (SELECT 1 FROM jsonb_array_elements(i.blocks) b, jsonb_array_elements_text(COALESCE(b->'urlUnfurl', '[]')) u
			WHERE substring(u from ?) = ?)`, blockHost, f.BlockDomain)
	}
	return rows, p.scan(ctx, p.byCreation(q, "i"))
}

// DeleteIntegration removes an integration with its installations and
// events; false when there was none.
func DeleteIntegration(ctx context.Context, db bun.IDB, name string) (bool, error) {
	return deleteRows(ctx, db, (*Integration)(nil), "name = ?", name)
}

// IntegrationInstallation is an integration installed on an organization.
type IntegrationInstallation struct {
	bun.BaseModel `bun:"table:integration_installations,alias:ii"`

	ID             string                `bun:"id,pk"`
	IntegrationID  string                `bun:"integration_id"`
	OrganizationID string                `bun:"organization_id"`
	Status         InstallationStatus    `bun:"status"`
	SpaceSelection InstallationSelection `bun:"space_selection"`
	SiteSelection  InstallationSelection `bun:"site_selection"`
	Configuration  json.RawMessage       `bun:"configuration,type:jsonb"`
	ExternalIDs    []string              `bun:"external_ids,array"`
	CreatedAt      time.Time             `bun:"created_at"`
	UpdatedAt      time.Time             `bun:"updated_at"`

	// Read along (see withExtras), never written.
	IntegrationName string `bun:"integration_name,scanonly"`
	SpaceCount      int    `bun:"space_count,scanonly"`
}

// withExtras reads an installation's integration name and number of spaces along.
func withExtras(q *bun.SelectQuery) *bun.SelectQuery {
	return q.ColumnExpr("ii.*").
		ColumnExpr("(SELECT i.name FROM integrations i WHERE i.id = ii.integration_id) AS integration_name").
		ColumnExpr(`(SELECT count(*) FROM integration_space_installations s JOIN spaces sp ON sp.id = s.space_id AND sp.organization_id = s.organization_id
			WHERE s.installation_id = ii.id AND s.organization_id = ii.organization_id AND sp.deleted_at IS NULL) AS space_count`)
}

// GetInstallation reads installation id of an integration.
func GetInstallation(ctx context.Context, db bun.IDB, integrationID, id string) (*IntegrationInstallation, error) {
	in := new(IntegrationInstallation)
	err := withExtras(db.NewSelect().Model(in)).Where("ii.id = ? AND ii.integration_id = ?", id, integrationID).Scan(ctx)
	return in, translate(err)
}

// InstallationOn reads the installation of an integration on an organization.
func InstallationOn(ctx context.Context, db bun.IDB, integrationID, orgID string) (*IntegrationInstallation, error) {
	ctx = inOrganization(ctx, orgID)
	in := new(IntegrationInstallation)
	err := withExtras(db.NewSelect().Model(in)).Where("ii.integration_id = ? AND ii.organization_id = ?", integrationID, orgID).Scan(ctx)
	return in, translate(err)
}

// ListInstallations pages through an integration's installations on the
// organizations orgIDs, oldest first, with externalID among their external
// ids when set.
func ListInstallations(ctx context.Context, db bun.IDB, integrationID string, orgIDs []string, externalID string, p Page) ([]*IntegrationInstallation, error) {
	var rows []*IntegrationInstallation
	if len(orgIDs) == 0 {
		return rows, nil
	}
	q := withExtras(db.NewSelect().Model(&rows)).Where("ii.integration_id = ? AND ii.organization_id IN (?)", integrationID, bun.List(orgIDs))
	if externalID != "" {
		q = q.Where("? = ANY(ii.external_ids)", externalID)
	}
	return rows, p.scan(ctx, p.byCreation(q, "ii"))
}

// ContentInstallation is an installation on one space or site: the columns
// both tables share.
type ContentInstallation struct {
	InstallationID string `bun:"installation_id,pk"`
	// OrganizationID is the installation's organization.
	OrganizationID string `bun:"organization_id"`
	// IntegrationName is read along (see withName), never written.
	IntegrationName string             `bun:"integration_name,scanonly"`
	Status          InstallationStatus `bun:"status"`
	Configuration   json.RawMessage    `bun:"configuration,type:jsonb"`
	ExternalIDs     []string           `bun:"external_ids,array"`
	CreatedAt       time.Time          `bun:"created_at"`
	UpdatedAt       time.Time          `bun:"updated_at"`
}

// IntegrationSpaceInstallation is an installation on a space.
type IntegrationSpaceInstallation struct {
	bun.BaseModel `bun:"table:integration_space_installations,alias:isi"`
	ContentInstallation
	SpaceID string `bun:"space_id,pk"`
}

// IntegrationSiteInstallation is an installation on a site.
type IntegrationSiteInstallation struct {
	bun.BaseModel `bun:"table:integration_site_installations,alias:iti"`
	ContentInstallation
	SiteID string `bun:"site_id,pk"`
}

// withName reads the integration's name along with a space or site installation.
func withName(q *bun.SelectQuery, alias string) *bun.SelectQuery {
	return q.ColumnExpr("?.*", bun.Ident(alias)).ColumnExpr(`(SELECT i.name FROM integrations i
		JOIN integration_installations ii ON ii.integration_id = i.id WHERE ii.id = ?.installation_id AND ii.organization_id = ?.organization_id) AS integration_name`,
		bun.Ident(alias), bun.Ident(alias))
}

// liveSpaces leaves out the installations on deleted spaces (while a space
// is deleted, and restorable, its installation stays, unseen) and on spaces
// since transferred to another organization.
func liveSpaces(q *bun.SelectQuery) *bun.SelectQuery {
	return q.Where(`EXISTS (SELECT 1 FROM spaces sp JOIN integration_installations own ON own.id = isi.installation_id AND own.organization_id = isi.organization_id
		WHERE sp.id = isi.space_id AND sp.organization_id = isi.organization_id AND sp.deleted_at IS NULL)`)
}

// GetSpaceInstallation reads the installation on a space.
func GetSpaceInstallation(ctx context.Context, db bun.IDB, installationID, spaceID string) (*IntegrationSpaceInstallation, error) {
	in := new(IntegrationSpaceInstallation)
	err := liveSpaces(withName(db.NewSelect().Model(in), "isi")).Where("isi.installation_id = ? AND isi.space_id = ?", installationID, spaceID).Scan(ctx)
	return in, translate(err)
}

// GetSiteInstallation reads the installation on a site.
func GetSiteInstallation(ctx context.Context, db bun.IDB, installationID, siteID string) (*IntegrationSiteInstallation, error) {
	in := new(IntegrationSiteInstallation)
	err := withName(db.NewSelect().Model(in), "iti").Where("iti.installation_id = ? AND iti.site_id = ?", installationID, siteID).Scan(ctx)
	return in, translate(err)
}

// ContentInstallationFilter says whose space or site installations to list:
// those of one installation, or of an integration's installations on the
// organizations OrgIDs; with ExternalID among their external ids when set.
type ContentInstallationFilter struct {
	InstallationID string
	IntegrationID  string
	OrgIDs         []string
	ExternalID     string
}

func (f ContentInstallationFilter) apply(q *bun.SelectQuery, alias string) *bun.SelectQuery {
	if f.InstallationID != "" {
		q = q.Where("?.installation_id = ?", bun.Ident(alias), f.InstallationID)
	} else {
		q = q.Where("?.installation_id IN (SELECT id FROM integration_installations WHERE integration_id = ? AND organization_id IN (?))",
			bun.Ident(alias), f.IntegrationID, bun.List(append([]string{""}, f.OrgIDs...)))
	}
	if f.ExternalID != "" {
		q = q.Where("? = ANY(?.external_ids)", f.ExternalID, bun.Ident(alias))
	}
	return q
}

// ListSpaceInstallations pages through space installations, oldest first.
func ListSpaceInstallations(ctx context.Context, db bun.IDB, f ContentInstallationFilter, p Page) ([]*IntegrationSpaceInstallation, error) {
	var rows []*IntegrationSpaceInstallation
	q := liveSpaces(f.apply(withName(db.NewSelect().Model(&rows), "isi"), "isi"))
	return rows, p.scan(ctx, p.byTime(q, "isi.created_at", "isi.space_id", false))
}

// ListSiteInstallations pages through site installations, oldest first.
func ListSiteInstallations(ctx context.Context, db bun.IDB, f ContentInstallationFilter, p Page) ([]*IntegrationSiteInstallation, error) {
	var rows []*IntegrationSiteInstallation
	q := f.apply(withName(db.NewSelect().Model(&rows), "iti"), "iti")
	return rows, p.scan(ctx, p.byTime(q, "iti.created_at", "iti.site_id", false))
}

// DeleteSpaceInstallation removes the installation on a space; false when there was none.
func DeleteSpaceInstallation(ctx context.Context, db bun.IDB, installationID, spaceID string) (bool, error) {
	return deleteRows(ctx, db, (*IntegrationSpaceInstallation)(nil), "installation_id = ? AND space_id = ?", installationID, spaceID)
}

// DeleteSiteInstallation removes the installation on a site; false when there was none.
func DeleteSiteInstallation(ctx context.Context, db bun.IDB, installationID, siteID string) (bool, error) {
	return deleteRows(ctx, db, (*IntegrationSiteInstallation)(nil), "installation_id = ? AND site_id = ?", installationID, siteID)
}

// DeleteInstallation removes an installation with its space and site
// installations; false when there was none.
func DeleteInstallation(ctx context.Context, db bun.IDB, id string) (bool, error) {
	return deleteRows(ctx, db, (*IntegrationInstallation)(nil), "id = ?", id)
}

// The enumerations of integrations (see enums.go). Scopes and categories are
// enum-like scalars in the schema: "space:content:read" and "visitor-auth"
// are not GraphQL names.
type (
	IntegrationScope      string
	IntegrationCategory   string
	IntegrationTarget     string
	IntegrationVisibility string
	InstallationStatus    string
	InstallationSelection string
	IntegrationEventState string
	EventLogLevel         string
)

// The integration scopes: what an installation's token may do.
const (
	ScopeSpaceContentRead    IntegrationScope = "space:content:read"
	ScopeSpaceContentWrite   IntegrationScope = "space:content:write"
	ScopeSpaceMetadataRead   IntegrationScope = "space:metadata:read"
	ScopeSpaceMetadataWrite  IntegrationScope = "space:metadata:write"
	ScopeSpaceGitSync        IntegrationScope = "space:git:sync"
	ScopePageFeedbackRead    IntegrationScope = "page:feedback:read"
	ScopeSiteMetadataRead    IntegrationScope = "site:metadata:read"
	ScopeSiteViewsRead       IntegrationScope = "site:views:read"
	ScopeSiteScriptInject    IntegrationScope = "site:script:inject"
	ScopeSiteScriptCookies   IntegrationScope = "site:script:cookies"
	ScopeSiteVisitorAuth     IntegrationScope = "site:visitor:auth"
	ScopeSiteAdaptiveRead    IntegrationScope = "site:adaptive:read"
	ScopeSiteAdaptiveWrite   IntegrationScope = "site:adaptive:write"
	ScopeOpenAPIRead         IntegrationScope = "openapi:read"
	ScopeOpenAPIWrite        IntegrationScope = "openapi:write"
	ScopeConversationsIngest IntegrationScope = "conversations:ingest"
)

// The integration categories.
const (
	CategoryAnalytics     IntegrationCategory = "analytics"
	CategoryCollaboration IntegrationCategory = "collaboration"
	CategoryContent       IntegrationCategory = "content"
	CategoryGitSync       IntegrationCategory = "gitsync"
	CategoryMarketing     IntegrationCategory = "marketing"
	CategoryVisitorAuth   IntegrationCategory = "visitor-auth"
	CategoryOther         IntegrationCategory = "other"
)

// What an integration may be installed on: spaces, sites, both (all), or
// the organization only.
const (
	TargetAll          IntegrationTarget = "all"
	TargetSite         IntegrationTarget = "site"
	TargetSpace        IntegrationTarget = "space"
	TargetOrganization IntegrationTarget = "organization"
)

// Who sees an integration: everyone (public, unlisted) or the members of
// the organization that publishes it (private).
const (
	IntegrationPublic   IntegrationVisibility = "public"
	IntegrationPrivate  IntegrationVisibility = "private"
	IntegrationUnlisted IntegrationVisibility = "unlisted"
)

// The states of an installation.
const (
	InstallationActive  InstallationStatus = "active"
	InstallationPending InstallationStatus = "pending"
	InstallationPaused  InstallationStatus = "paused"
)

// Which of an organization's spaces (or sites) an installation covers.
const (
	SelectionAll      InstallationSelection = "all"
	SelectionSelected InstallationSelection = "selected"
)

// The states of an integration event's delivery.
const (
	EventPending IntegrationEventState = "pending"
	EventSuccess IntegrationEventState = "success"
	EventFailed  IntegrationEventState = "failed"
)

// The levels of an integration event's log lines.
const (
	EventLogDebug EventLogLevel = "debug"
	EventLogInfo  EventLogLevel = "info"
	EventLogWarn  EventLogLevel = "warn"
	EventLogError EventLogLevel = "error"
)

// The values of each enumeration of integrations.
var (
	AllIntegrationScopes = []IntegrationScope{ScopeSpaceContentRead, ScopeSpaceContentWrite,
		ScopeSpaceMetadataRead, ScopeSpaceMetadataWrite, ScopeSpaceGitSync, ScopePageFeedbackRead,
		ScopeSiteMetadataRead, ScopeSiteViewsRead, ScopeSiteScriptInject, ScopeSiteScriptCookies,
		ScopeSiteVisitorAuth, ScopeSiteAdaptiveRead, ScopeSiteAdaptiveWrite, ScopeOpenAPIRead,
		ScopeOpenAPIWrite, ScopeConversationsIngest}
	AllIntegrationCategories = []IntegrationCategory{CategoryAnalytics, CategoryCollaboration, CategoryContent,
		CategoryGitSync, CategoryMarketing, CategoryVisitorAuth, CategoryOther}
	AllIntegrationTargets      = []IntegrationTarget{TargetAll, TargetSite, TargetSpace, TargetOrganization}
	AllIntegrationVisibilities = []IntegrationVisibility{IntegrationPublic, IntegrationPrivate, IntegrationUnlisted}
	AllInstallationStatuses    = []InstallationStatus{InstallationActive, InstallationPending, InstallationPaused}
	AllInstallationSelections  = []InstallationSelection{SelectionAll, SelectionSelected}
	AllIntegrationEventStates  = []IntegrationEventState{EventPending, EventSuccess, EventFailed}
	AllEventLogLevels          = []EventLogLevel{EventLogDebug, EventLogInfo, EventLogWarn, EventLogError}
)

func (v *IntegrationScope) UnmarshalGQL(x any) error {
	return unmarshalEnum(v, x, "IntegrationScope", AllIntegrationScopes)
}
func (v IntegrationScope) MarshalGQL(w io.Writer) { marshalEnum(w, v) }
func (v *IntegrationCategory) UnmarshalGQL(x any) error {
	return unmarshalEnum(v, x, "IntegrationCategory", AllIntegrationCategories)
}
func (v IntegrationCategory) MarshalGQL(w io.Writer) { marshalEnum(w, v) }
func (v *IntegrationTarget) UnmarshalGQL(x any) error {
	return unmarshalEnum(v, x, "IntegrationTarget", AllIntegrationTargets)
}
func (v IntegrationTarget) MarshalGQL(w io.Writer) { marshalEnum(w, v) }
func (v *IntegrationVisibility) UnmarshalGQL(x any) error {
	return unmarshalEnum(v, x, "IntegrationVisibility", AllIntegrationVisibilities)
}
func (v IntegrationVisibility) MarshalGQL(w io.Writer) { marshalEnum(w, v) }
func (v *InstallationStatus) UnmarshalGQL(x any) error {
	return unmarshalEnum(v, x, "IntegrationInstallationStatus", AllInstallationStatuses)
}
func (v InstallationStatus) MarshalGQL(w io.Writer) { marshalEnum(w, v) }
func (v *InstallationSelection) UnmarshalGQL(x any) error {
	return unmarshalEnum(v, x, "IntegrationInstallationSelection", AllInstallationSelections)
}
func (v InstallationSelection) MarshalGQL(w io.Writer) { marshalEnum(w, v) }
func (v *IntegrationEventState) UnmarshalGQL(x any) error {
	return unmarshalEnum(v, x, "IntegrationEventDeliveryStatus", AllIntegrationEventStates)
}
func (v IntegrationEventState) MarshalGQL(w io.Writer) { marshalEnum(w, v) }
func (v *EventLogLevel) UnmarshalGQL(x any) error {
	return unmarshalEnum(v, x, "IntegrationEventLogLevel", AllEventLogLevels)
}
func (v EventLogLevel) MarshalGQL(w io.Writer) { marshalEnum(w, v) }

// OrganizationByRef reads an organization by id or hostname.
func OrganizationByRef(ctx context.Context, db bun.IDB, ref string) (*Organization, error) {
	org := new(Organization)
	err := db.NewSelect().Model(org).Where("id = ? OR hostname = ?", ref, ref).Limit(1).Scan(ctx)
	return org, translate(err)
}
