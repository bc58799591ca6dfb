package store

import (
	"context"
	"encoding/json"
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
	s := new(Site)
	err := db.NewSelect().Model(s).Where("id = ? AND organization_id = ?", siteID, orgID).Scan(ctx)
	return s, translate(err)
}
