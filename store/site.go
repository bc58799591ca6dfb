package store

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/uptrace/bun"
)

// Site is a published docs site, built from sections, section groups and site spaces.
type Site struct {
	bun.BaseModel `bun:"table:sites"`

	ID                      string            `bun:"id,pk"`
	OrganizationID          string            `bun:"organization_id"`
	Type                    SiteType          `bun:"type"`
	Title                   string            `bun:"title"`
	Icon                    json.RawMessage   `bun:"icon,type:jsonb"`
	Hostname                *string           `bun:"hostname"`
	Basename                *string           `bun:"basename"`
	ProxyOrigin             *string           `bun:"proxy_origin"`
	Visibility              SiteVisibility    `bun:"visibility"`
	Published               bool              `bun:"published"`
	ShareKey                string            `bun:"share_key"`
	AdaptiveContent         bool              `bun:"adaptive_content"`
	AdaptiveSchema          json.RawMessage   `bun:"adaptive_schema,type:jsonb"`
	AdaptiveSchemaUpdatedAt *time.Time        `bun:"adaptive_schema_updated_at"`
	AgentsContext           SiteAgentsContext `bun:"agents_context"`
	CreatedAt               time.Time         `bun:"created_at"`
	UpdatedAt               time.Time         `bun:"updated_at"`
}

// Object is the REST type name of a site.
func (Site) Object() string { return "site" }

// GetSite returns site siteID of organization orgID.
func GetSite(ctx context.Context, db bun.IDB, orgID, siteID string) (*Site, error) {
	ctx = inOrganization(ctx, orgID)
	return selectRow[Site](ctx, db, "id = ? AND organization_id = ?", siteID, orgID)
}

// CreateSite inserts s, with its visitor authentication settings (every
// site has them): its owner's own backend, and a fresh private key.
func CreateSite(ctx context.Context, db bun.IDB, s *Site) error {
	return RunInTx(ctx, db, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.NewInsert().Model(s).Exec(ctx); err != nil {
			return err
		}
		_, err := tx.NewInsert().Model(newSitePublishingAuth(s)).Exec(ctx)
		return err
	})
}

// LockSite returns site siteID of orgID locked for the rest of tx: every
// change to a site's structure takes this lock first, which serialises
// concurrent writers and keeps positions unique.
func LockSite(ctx context.Context, tx bun.Tx, orgID, siteID string) (*Site, error) {
	s := new(Site)
	err := tx.NewSelect().Model(s).Where("id = ? AND organization_id = ?", siteID, orgID).For("NO KEY UPDATE").Scan(ctx)
	return s, translate(err)
}

// SiteFilter narrows a site list.
type SiteFilter struct {
	// SpaceID keeps sites that publish this space.
	SpaceID *string
	// Title keeps sites whose title contains this, ignoring case.
	Title     *string
	Published *bool
	Types     []SiteType
}

// ListSites pages through the sites of an organization.
func ListSites(ctx context.Context, db bun.IDB, orgID string, f SiteFilter, p Page) ([]*Site, error) {
	ctx = inOrganization(ctx, orgID)
	var sites []*Site
	q := db.NewSelect().Model(&sites).Where("site.organization_id = ?", orgID)
	if f.SpaceID != nil {
		q = q.Where("EXISTS (SELECT 1 FROM site_spaces ss WHERE ss.site_id = site.id AND ss.organization_id = site.organization_id AND ss.space_id = ?)", *f.SpaceID)
	}
	if f.Title != nil {
		q = q.Where("site.title ILIKE ? ESCAPE '\\'", "%"+escapeLike(*f.Title)+"%")
	}
	if f.Published != nil {
		q = q.Where("site.published = ?", *f.Published)
	}
	if len(f.Types) > 0 {
		q = q.Where("site.type IN (?)", bun.List(f.Types))
	}
	err := p.scan(ctx, p.byCreation(q, "site"))
	return sites, translate(err)
}

// UpdateSite writes the given columns of s. A custom hostname names one
// site instance-wide: one already taken is ErrConflict
// ("sites_hostname_key").
func UpdateSite(ctx context.Context, db bun.IDB, s *Site, columns ...string) error {
	return RunInTx(ctx, db, func(ctx context.Context, tx bun.Tx) error {
		if slices.Contains(columns, "hostname") && s.Hostname != nil {
			if err := claimSiteHostname(ctx, tx, s); err != nil {
				return err
			}
		}
		_, err := byKey(tx, tx.NewUpdate().Model(s).Column(append(columns, "updated_at")...), s).Exec(ctx)
		return err
	})
}

// siteHostnameLock serialises the claims of site hostnames ("hostname").
const siteHostnameLock = 0x686f73746e616d65

// claimSiteHostname checks, under a lock every claim takes until its
// transaction ends, that no other site has s's hostname. Sites are
// distributed by organization, and a unique key of a distributed table
// must include it, so the database cannot hold this one across
// organizations (migration 0043); every write goes through a coordinator,
// where the lock is. Hostnames change rarely: the check asks every shard.
func claimSiteHostname(ctx context.Context, tx bun.Tx, s *Site) error {
	if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock(?)", siteHostnameLock); err != nil {
		return err
	}
	taken, err := tx.NewSelect().Table("sites").Where("hostname = ? AND NOT (id = ? AND organization_id = ?)", *s.Hostname, s.ID, s.OrganizationID).Exists(ctx)
	if err != nil {
		return err
	}
	if taken {
		return fmt.Errorf("%w: sites_hostname_key", ErrConflict)
	}
	return nil
}

// DeleteSite removes a site and its structure, reporting whether it existed.
func DeleteSite(ctx context.Context, db bun.IDB, orgID, siteID string) (bool, error) {
	return deleteRows(ctx, db, (*Site)(nil), "id = ? AND organization_id = ?", siteID, orgID)
}

// CountSiteSpaces counts the site spaces of live spaces in each of these
// sites of orgID.
func CountSiteSpaces(ctx context.Context, db bun.IDB, orgID string, siteIDs []string) (map[string]int, error) {
	ctx = inOrganization(ctx, orgID)
	var rows []struct {
		SiteID string `bun:"site_id"`
		N      int    `bun:"n"`
	}
	err := db.NewSelect().TableExpr("site_spaces AS ss").
		ColumnExpr("ss.site_id, count(*) AS n").
		Where("ss.organization_id = ? AND ss.site_id IN (?) AND "+publishesLiveSpace("ss"), orgID, bun.List(siteIDs), orgID).
		GroupExpr("ss.site_id").Scan(ctx, &rows)
	counts := make(map[string]int, len(siteIDs))
	for _, r := range rows {
		counts[r.SiteID] = r.N
	}
	return counts, translate(err)
}

func escapeLike(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// SitesByIDs returns the sites of orgID with these ids.
func SitesByIDs(ctx context.Context, db bun.IDB, orgID string, ids []string) ([]*Site, error) {
	ctx = inOrganization(ctx, orgID)
	return selectRows[Site](ctx, db, "organization_id = ? AND "+idIn("id", ids), "", orgID, ids)
}
