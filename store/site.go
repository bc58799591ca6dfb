package store

import (
	"context"
	"encoding/json"
	"errors"
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

// SiteByName returns the site organization orgID publishes under name: the
// site whose basename it is, else the site whose id it is (a site is
// served at its id until it has a basename, and at both after).
func SiteByName(ctx context.Context, db bun.IDB, orgID, name string) (*Site, error) {
	ctx = inOrganization(ctx, orgID)
	return selectRow[Site](ctx, db, "organization_id = ? AND (basename = ? OR id = ?) ORDER BY basename = ? DESC NULLS LAST",
		orgID, name, name, name)
}

// SiteByHostname returns the site whose custom hostname is host (lower
// case, no port): its organization from site_hostnames (a reference table
// on Citus), then the site in that organization, so that on a cluster the
// lookup asks no shard but its own.
func SiteByHostname(ctx context.Context, db bun.IDB, host string) (*Site, error) {
	var named struct {
		OrganizationID string `bun:"organization_id"`
		SiteID         string `bun:"site_id"`
	}
	err := db.NewSelect().Table("site_hostnames").Column("organization_id", "site_id").Where("hostname = ?", host).Scan(ctx, &named)
	if err != nil {
		return nil, translate(err)
	}
	return GetSite(ctx, db, named.OrganizationID, named.SiteID)
}

// CreateSite inserts s, with its visitor authentication settings (every
// site has them): its owner's own backend, and a fresh private key.
func CreateSite(ctx context.Context, db bun.IDB, s *Site) error {
	return RunInTx(ctx, db, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.NewInsert().Model(s).Exec(ctx); err != nil {
			return err
		}
		if _, err := tx.NewInsert().Model(newSitePublishingAuth(s)).Exec(ctx); err != nil {
			return err
		}
		// Its address may have been an unknown one a reader remembers.
		return siteChanged(ctx, tx, s.OrganizationID, s.ID)
	})
}

// LockSite returns site siteID of orgID locked for the rest of tx: every
// change to a site's structure takes this lock first, which serialises
// concurrent writers and keeps positions unique.
func LockSite(ctx context.Context, tx bun.Tx, orgID, siteID string) (*Site, error) {
	s := new(Site)
	err := tx.NewSelect().Model(s).Where("id = ? AND organization_id = ?", siteID, orgID).For("NO KEY UPDATE").Scan(ctx)
	if err != nil {
		return s, translate(err)
	}
	// A site is locked to be changed: its readers hear of it at commit.
	return s, siteChanged(ctx, tx, orgID, siteID)
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
		if slices.Contains(columns, "hostname") {
			if err := claimSiteHostname(ctx, tx, s); err != nil {
				return err
			}
		}
		if _, err := byKey(tx, tx.NewUpdate().Model(s).Column(append(columns, "updated_at")...), s).Exec(ctx); err != nil {
			return err
		}
		return siteChanged(ctx, tx, s.OrganizationID, s.ID)
	})
}

// claimSiteHostname gives site s its hostname in site_hostnames (none:
// its name there goes), which holds one site per hostname: another site's
// is ErrConflict. Sites are distributed by organization, and a unique key
// of a distributed table must include it, so sites cannot hold this key
// across organizations (migration 0043); site_hostnames, a reference table,
// does (migration 0051).
func claimSiteHostname(ctx context.Context, tx bun.Tx, s *Site) error {
	if _, err := tx.NewDelete().Table("site_hostnames").Where("site_id = ? AND organization_id = ?", s.ID, s.OrganizationID).Exec(ctx); err != nil {
		return err
	}
	if s.Hostname == nil {
		return nil
	}
	res, err := tx.NewRaw("INSERT INTO site_hostnames (hostname, organization_id, site_id) VALUES (?, ?, ?) ON CONFLICT (hostname) DO NOTHING",
		*s.Hostname, s.OrganizationID, s.ID).Exec(ctx)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n > 0 {
		return nil
	}
	// A name left behind by a site that is gone (with its organization)
	// is free.
	var holder struct {
		OrganizationID string `bun:"organization_id"`
		SiteID         string `bun:"site_id"`
	}
	if err := tx.NewSelect().Table("site_hostnames").Column("organization_id", "site_id").Where("hostname = ?", *s.Hostname).
		For("UPDATE").Scan(ctx, &holder); err != nil {
		return translate(err)
	}
	if _, err := GetSite(ctx, tx, holder.OrganizationID, holder.SiteID); !errors.Is(err, ErrNotFound) {
		if err != nil {
			return err
		}
		return fmt.Errorf("%w: sites_hostname_key", ErrConflict)
	}
	_, err = tx.NewUpdate().Table("site_hostnames").Set("organization_id = ?, site_id = ?", s.OrganizationID, s.ID).
		Where("hostname = ?", *s.Hostname).Exec(ctx)
	return err
}

// DeleteSite removes a site and its structure, reporting whether it existed.
func DeleteSite(ctx context.Context, db bun.IDB, orgID, siteID string) (bool, error) {
	var deleted bool
	err := RunInTx(ctx, db, func(ctx context.Context, tx bun.Tx) error {
		var err error
		if deleted, err = deleteRows(ctx, tx, (*Site)(nil), "id = ? AND organization_id = ?", siteID, orgID); err != nil || !deleted {
			return err
		}
		if _, err := tx.NewDelete().Table("site_hostnames").Where("site_id = ? AND organization_id = ?", siteID, orgID).Exec(ctx); err != nil {
			return err
		}
		return siteChanged(ctx, tx, orgID, siteID)
	})
	return deleted, translate(err)
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
