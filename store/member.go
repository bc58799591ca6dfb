package store

import (
	"context"
	"strings"
	"time"

	"github.com/uptrace/bun"
)

// Member is a user's membership of an organization.
type Member struct {
	bun.BaseModel `bun:"table:organization_members,alias:m"`

	OrganizationID string      `bun:"organization_id,pk"`
	UserID         string      `bun:"user_id,pk"`
	Role           *MemberRole `bun:"role"`
	JoinedAt       time.Time   `bun:"joined_at"`
	LastSeenAt     *time.Time  `bun:"last_seen_at"`
	Disabled       bool        `bun:"disabled"`
	SSO            bool        `bun:"sso"`
}

// Object is the REST type name of a member.
func (Member) Object() string { return "member" }

// AddMember makes userID a member of orgID with role (nil: guest).
func AddMember(ctx context.Context, db bun.IDB, orgID, userID string, role *MemberRole, now time.Time) error {
	_, err := db.NewInsert().Model(&Member{OrganizationID: orgID, UserID: userID, Role: role, JoinedAt: now}).Exec(ctx)
	return translate(err)
}

// MemberFilter narrows a member list.
type MemberFilter struct {
	// Role keeps members with this role; Guests keeps guests (no role).
	Role   *MemberRole
	Guests bool
	// Search keeps members whose display name or email contains it (any case).
	Search string
	// BySeen sorts by last activity and keeps only members seen at least
	// once; otherwise members are sorted by the date they joined.
	BySeen bool
	// Desc lists the most recent first.
	Desc bool
}

// ListMembers pages through the members of an organization.
func ListMembers(ctx context.Context, db bun.IDB, orgID string, f MemberFilter, p Page) ([]*Member, error) {
	ctx = inOrganization(ctx, orgID)
	var rows []*Member
	q := db.NewSelect().Model(&rows).Where("m.organization_id = ?", orgID)
	switch {
	case f.Guests:
		q = q.Where("m.role IS NULL")
	case f.Role != nil:
		q = q.Where("m.role = ?", *f.Role)
	}
	if f.Search != "" {
		pattern := "%" + likeEscaper.Replace(f.Search) + "%"
		q = q.Where("EXISTS (SELECT 1 FROM users AS u WHERE u.id = m.user_id AND (u.display_name ILIKE ? OR u.email ILIKE ?))", pattern, pattern)
	}
	col := "m.joined_at"
	if f.BySeen {
		col = "m.last_seen_at"
		q = q.Where("m.last_seen_at IS NOT NULL")
	}
	err := p.scan(ctx, p.byTime(q, col, "m.user_id", f.Desc))
	return rows, translate(err)
}

// likeEscaper makes user text literal inside a LIKE pattern.
var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)

// GetMember returns the membership of userID in orgID.
func GetMember(ctx context.Context, db bun.IDB, orgID, userID string) (*Member, error) {
	ctx = inOrganization(ctx, orgID)
	m := new(Member)
	err := db.NewSelect().Model(m).Where("m.organization_id = ? AND m.user_id = ?", orgID, userID).Scan(ctx)
	return m, translate(err)
}

// UpdateMember writes the given columns of m.
func UpdateMember(ctx context.Context, db bun.IDB, m *Member, columns ...string) error {
	_, err := byKey(db, db.NewUpdate().Model(m).Column(columns...), m).Exec(ctx)
	return translate(err)
}

// RemoveMember ends userID's membership of orgID (and of its teams); false
// when there was none.
func RemoveMember(ctx context.Context, db bun.IDB, orgID, userID string) (bool, error) {
	removed, err := deleteRows(ctx, db, (*Member)(nil), "organization_id = ? AND user_id = ?", orgID, userID)
	if err != nil || !removed {
		return removed, err
	}
	// Their team memberships went with it.
	return true, AccessChanged(ctx, db, orgID)
}

// LockOrganization serialises changes to orgID's memberships — and to the
// order of its content tree — for the rest of tx, so rules over all members (at
// least one admin) and positions hold under concurrency.
func LockOrganization(ctx context.Context, tx bun.Tx, orgID string) error {
	var id string
	err := tx.NewSelect().Table("organizations").Column("id").Where("id = ?", orgID).For("NO KEY UPDATE").Scan(ctx, &id)
	return translate(err)
}

// CountAdmins is the number of enabled admins of orgID.
func CountAdmins(ctx context.Context, db bun.IDB, orgID string) (int, error) {
	ctx = inOrganization(ctx, orgID)
	n, err := db.NewSelect().Model((*Member)(nil)).
		Where("m.organization_id = ? AND m.role = ? AND NOT m.disabled", orgID, RoleAdmin).Count(ctx)
	return int(n), translate(err)
}

// TouchMember records that userID was active in orgID at now. It changes
// nothing a caller is made of, so it runs past the caller cache's watch
// (execRows) and the trigger ignores its column: pings do not empty caches.
func TouchMember(ctx context.Context, db bun.IDB, orgID, userID string, now time.Time) error {
	_, err := execRows(ctx, db, "UPDATE organization_members SET last_seen_at = ? WHERE organization_id = ? AND user_id = ?",
		now, orgID, userID)
	return err
}

// MemberIDsIn returns which of userIDs are members of orgID.
func MemberIDsIn(ctx context.Context, db bun.IDB, orgID string, userIDs []string) ([]string, error) {
	ctx = inOrganization(ctx, orgID)
	var ids []string
	err := db.NewSelect().Model((*Member)(nil)).Column("user_id").
		Where("m.organization_id = ? AND m.user_id IN (?)", orgID, bun.List(userIDs)).Scan(ctx, &ids)
	return ids, translate(err)
}

// AllMembers returns the enabled members of orgID.
func AllMembers(ctx context.Context, db bun.IDB, orgID string) ([]*Member, error) {
	ctx = inOrganization(ctx, orgID)
	var rows []*Member
	err := db.NewSelect().Model(&rows).Where("m.organization_id = ? AND NOT m.disabled", orgID).Scan(ctx)
	return rows, translate(err)
}

// MemberIDsByEmail maps the emails (any case) of orgID's members to their user ids.
func MemberIDsByEmail(ctx context.Context, db bun.IDB, orgID string, emails []string) (map[string]string, error) {
	ctx = inOrganization(ctx, orgID)
	var rows []struct {
		ID    string `bun:"id"`
		Email string `bun:"email"`
	}
	lower := make([]string, len(emails))
	for i, e := range emails {
		lower[i] = strings.ToLower(e)
	}
	err := db.NewSelect().TableExpr("users AS u").ColumnExpr("u.id, lower(u.email) AS email").
		Join("JOIN organization_members AS m ON m.user_id = u.id AND m.organization_id = ?", orgID).
		Where("lower(u.email) IN (?)", bun.List(lower)).Scan(ctx, &rows)
	out := make(map[string]string, len(rows))
	for _, r := range rows {
		out[r.Email] = r.ID
	}
	return out, translate(err)
}
