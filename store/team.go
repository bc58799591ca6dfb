package store

import (
	"context"
	"io"
	"time"

	"github.com/uptrace/bun"
)

// Team is a group of members of an organization.
type Team struct {
	bun.BaseModel `bun:"table:teams,alias:team"`

	ID             string    `bun:"id,pk"`
	OrganizationID string    `bun:"organization_id"`
	Title          string    `bun:"title"`
	CreatedAt      time.Time `bun:"created_at"`
}

// Object is the REST type name of a team.
func (Team) Object() string { return "team" }

// TeamRole is a member's role in a team.
type TeamRole string

const (
	// TeamOwner manages the team: renames it, deletes it.
	TeamOwner      TeamRole = "owner"
	TeamRoleMember TeamRole = "member"
)

// AllTeamRoles lists the roles in a team.
var AllTeamRoles = []TeamRole{TeamOwner, TeamRoleMember}

func (r *TeamRole) UnmarshalGQL(v any) error {
	return unmarshalEnum(r, v, "TeamMemberRole", AllTeamRoles)
}
func (r TeamRole) MarshalGQL(w io.Writer) { marshalEnum(w, r) }

// TeamMembership is a member's place in a team.
type TeamMembership struct {
	bun.BaseModel `bun:"table:team_members,alias:tm"`

	TeamID         string   `bun:"team_id,pk"`
	OrganizationID string   `bun:"organization_id"`
	UserID         string   `bun:"user_id,pk"`
	Role           TeamRole `bun:"role"`
}

// CreateTeam inserts t with its members.
func CreateTeam(ctx context.Context, tx bun.IDB, t *Team, members []*TeamMembership) error {
	if _, err := tx.NewInsert().Model(t).Exec(ctx); err != nil {
		return translate(err)
	}
	if len(members) == 0 {
		return nil
	}
	if _, err := tx.NewInsert().Model(&members).Exec(ctx); err != nil {
		return translate(err)
	}
	return AccessChanged(ctx, tx, t.OrganizationID)
}

// GetTeam returns team id of orgID.
func GetTeam(ctx context.Context, db bun.IDB, orgID, id string) (*Team, error) {
	ctx = inOrganization(ctx, orgID)
	t := new(Team)
	err := db.NewSelect().Model(t).Where("team.id = ? AND team.organization_id = ?", id, orgID).Scan(ctx)
	return t, translate(err)
}

// TeamFilter narrows a team list.
type TeamFilter struct {
	// Title keeps teams whose title contains it, in any case.
	Title string
	// OwnedBy keeps the teams this user owns.
	OwnedBy *string
	// MemberID keeps the teams this user belongs to.
	MemberID *string
}

// ListTeams pages through the teams of an organization, oldest first.
func ListTeams(ctx context.Context, db bun.IDB, orgID string, f TeamFilter, p Page) ([]*Team, error) {
	ctx = inOrganization(ctx, orgID)
	var rows []*Team
	q := db.NewSelect().Model(&rows).Where("team.organization_id = ?", orgID)
	if f.Title != "" {
		q = q.Where("team.title ILIKE ?", "%"+likeEscaper.Replace(f.Title)+"%")
	}
	if f.OwnedBy != nil {
		q = q.Where("EXISTS (SELECT 1 FROM team_members AS o WHERE o.team_id = team.id AND o.organization_id = team.organization_id AND o.user_id = ? AND o.role = ?)", *f.OwnedBy, TeamOwner)
	}
	if f.MemberID != nil {
		q = q.Where("EXISTS (SELECT 1 FROM team_members AS o WHERE o.team_id = team.id AND o.organization_id = team.organization_id AND o.user_id = ?)", *f.MemberID)
	}
	err := p.scan(ctx, p.byTime(q, "team.created_at", "team.id", false))
	return rows, translate(err)
}

// UpdateTeam writes the given columns of t.
func UpdateTeam(ctx context.Context, db bun.IDB, t *Team, columns ...string) error {
	_, err := byKey(db, db.NewUpdate().Model(t).Column(columns...), t).Exec(ctx)
	return translate(err)
}

// DeleteTeam removes team id of orgID; false when there was none.
func DeleteTeam(ctx context.Context, db bun.IDB, orgID, id string) (bool, error) {
	deleted, err := deleteRows(ctx, db, (*Team)(nil), "id = ? AND organization_id = ?", id, orgID)
	if err != nil || !deleted {
		return deleted, err
	}
	// Its members and grants went with it.
	return true, AccessChanged(ctx, db, orgID)
}

// TeamRolesOf returns userID's role in each of these teams of orgID
// (absent: not a member).
func TeamRolesOf(ctx context.Context, db bun.IDB, orgID, userID string, teamIDs []string) (map[string]TeamRole, error) {
	ctx = inOrganization(ctx, orgID)
	var rows []*TeamMembership
	err := db.NewSelect().Model(&rows).Where("tm.organization_id = ? AND tm.user_id = ? AND tm.team_id IN (?)", orgID, userID, bun.List(teamIDs)).Scan(ctx)
	out := make(map[string]TeamRole, len(rows))
	for _, r := range rows {
		out[r.TeamID] = r.Role
	}
	return out, translate(err)
}

// CountTeamMembers is the number of members of each of these teams of orgID.
func CountTeamMembers(ctx context.Context, db bun.IDB, orgID string, teamIDs []string) (map[string]int, error) {
	ctx = inOrganization(ctx, orgID)
	return countBy(ctx, db, "team_members", "team_id", "organization_id = ? AND team_id IN (?)", orgID, bun.List(teamIDs))
}

// CountTeamsOfMembers is the number of teams of each of these users in orgID.
func CountTeamsOfMembers(ctx context.Context, db bun.IDB, orgID string, userIDs []string) (map[string]int, error) {
	ctx = inOrganization(ctx, orgID)
	return countBy(ctx, db, "team_members", "user_id", "organization_id = ? AND user_id IN (?)", orgID, bun.List(userIDs))
}

// countBy counts the rows of table matching where, grouped by column key.
func countBy(ctx context.Context, db bun.IDB, table, key, where string, args ...any) (map[string]int, error) {
	var rows []struct {
		K string `bun:"k"`
		N int    `bun:"n"`
	}
	err := db.NewSelect().TableExpr(table).ColumnExpr("? AS k, count(*) AS n", bun.Ident(key)).
		Where(where, args...).GroupExpr("?", bun.Ident(key)).Scan(ctx, &rows)
	out := make(map[string]int, len(rows))
	for _, r := range rows {
		out[r.K] = r.N
	}
	return out, translate(err)
}

// TeamMemberRow is a team member: their organization membership and team role.
type TeamMemberRow struct {
	Member   `bun:",extend"`
	TeamRole TeamRole `bun:"team_role"`
}

// ListTeamMembers pages through the members of team teamID of orgID, by
// the date they joined the organization.
func ListTeamMembers(ctx context.Context, db bun.IDB, orgID, teamID string, p Page) ([]*TeamMemberRow, error) {
	ctx = inOrganization(ctx, orgID)
	var rows []*TeamMemberRow
	q := db.NewSelect().Model(&rows).ColumnExpr("m.*, tm.role AS team_role").
		Join("JOIN team_members AS tm ON tm.organization_id = m.organization_id AND tm.user_id = m.user_id").
		Where("m.organization_id = ? AND tm.team_id = ?", orgID, teamID)
	err := p.scan(ctx, p.byTime(q, "m.joined_at", "m.user_id", false))
	return rows, translate(err)
}

// PutTeamMember adds userID to the team with role, or sets their role.
func PutTeamMember(ctx context.Context, db bun.IDB, t *Team, userID string, role TeamRole) error {
	_, err := db.NewInsert().Model(&TeamMembership{TeamID: t.ID, OrganizationID: t.OrganizationID, UserID: userID, Role: role}).
		On("CONFLICT (team_id, user_id, organization_id) DO UPDATE").Set("role = EXCLUDED.role").Exec(ctx)
	if err != nil {
		return translate(err)
	}
	return AccessChanged(ctx, db, t.OrganizationID)
}

// RemoveTeamMember takes userID out of team t; false when they were not in
// it.
func RemoveTeamMember(ctx context.Context, db bun.IDB, t *Team, userID string) (bool, error) {
	removed, err := deleteRows(ctx, db, (*TeamMembership)(nil), "team_id = ? AND user_id = ? AND organization_id = ?", t.ID, userID, t.OrganizationID)
	if err != nil || !removed {
		return removed, err
	}
	return true, AccessChanged(ctx, db, t.OrganizationID)
}
