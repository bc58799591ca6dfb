package store

import (
	"context"
	"time"

	"github.com/uptrace/bun"
)

// A site's share links and its visitor authentication settings: what
// opens a site to visitors beyond its visibility. Both are secrets, which
// the site's managers (those who see its share key) read and change; a
// published site's reader checks what visitors bring against them.

// SiteShareLink is a share link of a site: a visitor whose address carries
// its key (?share=<key>) may read a share-link site while the link is
// active.
type SiteShareLink struct {
	bun.BaseModel `bun:"table:site_share_links,alias:share_link"`

	ID             string `bun:"id,pk"`
	OrganizationID string `bun:"organization_id"`
	SiteID         string `bun:"site_id"`
	// Name tells the link apart for its managers: at most 50 characters.
	Name string `bun:"name"`
	// Key is the secret the link's address carries: random, URL-safe,
	// never its id (NewSecret).
	Key string `bun:"share_key"`
	// Active is false for a link turned off: its key opens nothing.
	Active    bool      `bun:"active"`
	CreatedAt time.Time `bun:"created_at"`
}

// Object is the REST type name of a share link.
func (SiteShareLink) Object() string { return "share-link" }

// SitePublishingAuth is a site's visitor authentication settings. Every
// site has them from its creation (CreateSite).
type SitePublishingAuth struct {
	bun.BaseModel `bun:"table:site_publishing_auths"`

	SiteID         string `bun:"site_id,pk"`
	OrganizationID string `bun:"organization_id,pk"`
	// Backend is what signs visitors in: VisitorAuthCustom, the site
	// owner's own backend.
	Backend VisitorAuthBackend `bun:"backend"`
	// PrivateKey is the secret the site owner's backend signs visitors'
	// tokens with (HS256, the string's bytes as the HMAC key): random, at
	// least 256 bits, base64url (NewSecret).
	PrivateKey string `bun:"private_key"`
	// FallbackURL is where a visitor whose token is refused is sent; nil
	// when unset.
	FallbackURL *string   `bun:"fallback_url"`
	UpdatedAt   time.Time `bun:"updated_at"`
}

// Object is the REST type name of a site's visitor authentication settings.
func (SitePublishingAuth) Object() string { return "publishing-auth" }

// newSitePublishingAuth is the settings a new site starts with: its
// owner's own backend, and a fresh private key.
func newSitePublishingAuth(s *Site) *SitePublishingAuth {
	return &SitePublishingAuth{SiteID: s.ID, OrganizationID: s.OrganizationID, Backend: VisitorAuthCustom,
		PrivateKey: NewSecret(), UpdatedAt: s.CreatedAt}
}

// CreateSiteShareLink inserts l.
func CreateSiteShareLink(ctx context.Context, db bun.IDB, l *SiteShareLink) error {
	_, err := db.NewInsert().Model(l).Exec(ctx)
	return translate(err)
}

// ListSiteShareLinks pages through the share links of site siteID of
// orgID, oldest first.
func ListSiteShareLinks(ctx context.Context, db bun.IDB, orgID, siteID string, p Page) ([]*SiteShareLink, error) {
	ctx = inOrganization(ctx, orgID)
	var rows []*SiteShareLink
	q := db.NewSelect().Model(&rows).Where("share_link.organization_id = ? AND share_link.site_id = ?", orgID, siteID)
	err := p.scan(ctx, p.byCreation(q, "share_link"))
	return rows, translate(err)
}

// GetSiteShareLink returns share link id of site siteID of orgID:
// ErrNotFound when the site has none of that id.
func GetSiteShareLink(ctx context.Context, db bun.IDB, orgID, siteID, id string) (*SiteShareLink, error) {
	ctx = inOrganization(ctx, orgID)
	return selectRow[SiteShareLink](ctx, db, "organization_id = ? AND site_id = ? AND id = ?", orgID, siteID, id)
}

// SiteShareLinkByKey returns the share link of site siteID of orgID whose
// key is key: ErrNotFound when no link of that site has that key. The
// link may be turned off: the caller checks Active.
func SiteShareLinkByKey(ctx context.Context, db bun.IDB, orgID, siteID, key string) (*SiteShareLink, error) {
	ctx = inOrganization(ctx, orgID)
	return selectRow[SiteShareLink](ctx, db, "organization_id = ? AND site_id = ? AND share_key = ?", orgID, siteID, key)
}

// UpdateSiteShareLink writes the given columns of l.
func UpdateSiteShareLink(ctx context.Context, db bun.IDB, l *SiteShareLink, columns ...string) error {
	_, err := byKey(db, db.NewUpdate().Model(l).Column(columns...), l).Exec(ctx)
	return translate(err)
}

// DeleteSiteShareLink removes share link id of site siteID of orgID,
// reporting whether there was one.
func DeleteSiteShareLink(ctx context.Context, db bun.IDB, orgID, siteID, id string) (bool, error) {
	return deleteRows(ctx, db, (*SiteShareLink)(nil), "organization_id = ? AND site_id = ? AND id = ?", orgID, siteID, id)
}

// GetSitePublishingAuth returns the visitor authentication settings of
// site siteID of orgID: ErrNotFound when there is no such site.
func GetSitePublishingAuth(ctx context.Context, db bun.IDB, orgID, siteID string) (*SitePublishingAuth, error) {
	ctx = inOrganization(ctx, orgID)
	return selectRow[SitePublishingAuth](ctx, db, "organization_id = ? AND site_id = ?", orgID, siteID)
}

// PublishingAuthsOfSites returns the visitor authentication settings of
// these sites of orgID, in one query.
func PublishingAuthsOfSites(ctx context.Context, db bun.IDB, orgID string, siteIDs []string) ([]*SitePublishingAuth, error) {
	ctx = inOrganization(ctx, orgID)
	return selectRows[SitePublishingAuth](ctx, db, "organization_id = ? AND site_id = ANY(?)", "", orgID, siteIDs)
}

// UpdateSitePublishingAuth writes the given columns of a, and its
// UpdatedAt.
func UpdateSitePublishingAuth(ctx context.Context, db bun.IDB, a *SitePublishingAuth, columns ...string) error {
	_, err := db.NewUpdate().Model(a).Column(append(columns, "updated_at")...).WherePK().Exec(ctx)
	return translate(err)
}
