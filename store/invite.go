package store

import (
	"context"
	"time"

	"github.com/uptrace/bun"
)

// Invite is an invite link to an organization.
type Invite struct {
	bun.BaseModel `bun:"table:organization_invites,alias:invite"`

	ID             string      `bun:"id,pk"`
	OrganizationID string      `bun:"organization_id"`
	Role           *MemberRole `bun:"role"`
	CreatedBy      *string     `bun:"created_by"`
	CreatedAt      time.Time   `bun:"created_at"`
}

// Object is the REST type name of an invite.
func (Invite) Object() string { return "invite" }

// CreateInvite inserts i.
func CreateInvite(ctx context.Context, db bun.IDB, i *Invite) error {
	_, err := db.NewInsert().Model(i).Exec(ctx)
	return translate(err)
}

// GetInvite returns invite id of orgID.
func GetInvite(ctx context.Context, db bun.IDB, orgID, id string) (*Invite, error) {
	ctx = inOrganization(ctx, orgID)
	i := new(Invite)
	err := db.NewSelect().Model(i).Where("invite.id = ? AND invite.organization_id = ?", id, orgID).Scan(ctx)
	return i, translate(err)
}

// ListInvites pages through the invite links of orgID, oldest first.
func ListInvites(ctx context.Context, db bun.IDB, orgID string, p Page) ([]*Invite, error) {
	ctx = inOrganization(ctx, orgID)
	var rows []*Invite
	q := db.NewSelect().Model(&rows).Where("invite.organization_id = ?", orgID)
	err := p.scan(ctx, p.byTime(q, "invite.created_at", "invite.id", false))
	return rows, translate(err)
}

// UpdateInvite writes the given columns of i.
func UpdateInvite(ctx context.Context, db bun.IDB, i *Invite, columns ...string) error {
	_, err := byKey(db, db.NewUpdate().Model(i).Column(columns...), i).Exec(ctx)
	return translate(err)
}

// DeleteInvite removes invite id of orgID; false when there was none.
func DeleteInvite(ctx context.Context, db bun.IDB, orgID, id string) (bool, error) {
	return deleteRows(ctx, db, (*Invite)(nil), "id = ? AND organization_id = ?", id, orgID)
}

// OrganizationsForEmailDomain lists the organizations that admit users of
// domain, oldest first.
func OrganizationsForEmailDomain(ctx context.Context, db bun.IDB, domain string) ([]*Organization, error) {
	var orgs []*Organization
	err := db.NewSelect().Model(&orgs).Where("organization.email_domains @> ARRAY[?]::text[]", domain).
		OrderExpr("organization.created_at, organization.id").Limit(1000).Scan(ctx)
	return orgs, translate(err)
}
