package store

import (
	"context"
	"encoding/json"
	"time"

	"github.com/uptrace/bun"
)

// SiteCustomization is a site's customization settings as last set: GitBook's
// SiteCustomizationSettings, whole (graph/internal/customization checks
// them). A site without one has the defaults.
type SiteCustomization struct {
	bun.BaseModel `bun:"table:site_customizations"`

	SiteID         string          `bun:"site_id,pk"`
	OrganizationID string          `bun:"organization_id,pk"`
	Settings       json.RawMessage `bun:"settings,type:jsonb"`
	UpdatedAt      time.Time       `bun:"updated_at"`
}

// SiteSpaceCustomization is what a site space overrides of its site's
// settings: the members it sets, nothing else.
type SiteSpaceCustomization struct {
	bun.BaseModel `bun:"table:site_space_customizations"`

	SiteSpaceID    string          `bun:"site_space_id,pk"`
	OrganizationID string          `bun:"organization_id,pk"`
	SiteID         string          `bun:"site_id"`
	Overrides      json.RawMessage `bun:"overrides,type:jsonb"`
	UpdatedAt      time.Time       `bun:"updated_at"`
}

// Customization is, as read for a site, its settings (SiteSpaceID "") or
// the overrides of one of its site spaces.
type Customization struct {
	SiteID      string
	SiteSpaceID string
	Value       json.RawMessage
}

// CustomizationsOfSites reads, in one query, the settings of these sites
// of orgID that were ever set and the overrides of their site spaces that
// have any: a published site answers both, and a round trip less counts
// on every visit.
func CustomizationsOfSites(ctx context.Context, db bun.IDB, orgID string, siteIDs []string) ([]Customization, error) {
	ctx = inOrganization(ctx, orgID)
	var out []Customization
	err := eachRow(ctx, db, `SELECT site_id, '' AS site_space_id, settings FROM site_customizations
			WHERE organization_id = ? AND site_id = ANY(?)
		UNION ALL
		SELECT site_id, site_space_id, overrides FROM site_space_customizations
			WHERE organization_id = ? AND site_id = ANY(?)`,
		[]any{orgID, siteIDs, orgID, siteIDs}, func(scan func(dest ...any) error) error {
			var c Customization
			if err := scan(&c.SiteID, &c.SiteSpaceID, &c.Value); err != nil {
				return err
			}
			out = append(out, c)
			return nil
		})
	return out, err
}

// SaveSiteCustomization writes c, replacing the settings the site had.
func SaveSiteCustomization(ctx context.Context, db bun.IDB, c *SiteCustomization) error {
	_, err := db.NewInsert().Model(c).On("CONFLICT (site_id, organization_id) DO UPDATE").
		Set("settings = EXCLUDED.settings, updated_at = EXCLUDED.updated_at").Exec(ctx)
	return translate(err)
}

// GetSiteSpaceCustomization returns the overrides of site space
// siteSpaceID of orgID: ErrNotFound when it has none.
func GetSiteSpaceCustomization(ctx context.Context, db bun.IDB, orgID, siteSpaceID string) (*SiteSpaceCustomization, error) {
	ctx = inOrganization(ctx, orgID)
	return selectRow[SiteSpaceCustomization](ctx, db, "site_space_id = ? AND organization_id = ?", siteSpaceID, orgID)
}

// SaveSiteSpaceCustomization writes c, replacing the overrides the site
// space had.
func SaveSiteSpaceCustomization(ctx context.Context, db bun.IDB, c *SiteSpaceCustomization) error {
	_, err := db.NewInsert().Model(c).On("CONFLICT (site_space_id, organization_id) DO UPDATE").
		Set("overrides = EXCLUDED.overrides, updated_at = EXCLUDED.updated_at").Exec(ctx)
	return translate(err)
}

// DeleteSiteSpaceCustomization removes the overrides of site space
// siteSpaceID of orgID, reporting whether it had any.
func DeleteSiteSpaceCustomization(ctx context.Context, db bun.IDB, orgID, siteSpaceID string) (bool, error) {
	return deleteRows(ctx, db, (*SiteSpaceCustomization)(nil), "site_space_id = ? AND organization_id = ?", siteSpaceID, orgID)
}
