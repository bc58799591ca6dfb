package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"
)

// Grant gives a user or a team a role on a space or a collection.
type Grant struct {
	bun.BaseModel `bun:"table:content_grants,alias:g"`

	OrganizationID string     `bun:"organization_id"`
	SpaceID        *string    `bun:"space_id"`
	CollectionID   *string    `bun:"collection_id"`
	UserID         *string    `bun:"user_id"`
	TeamID         *string    `bun:"team_id"`
	Role           MemberRole `bun:"role"`
	CreatedAt      time.Time  `bun:"created_at"`
}

// GrantTarget names the content a grant is on: a space or a collection.
type GrantTarget struct {
	OrganizationID string
	SpaceID        *string
	CollectionID   *string
}

// where is the SQL condition selecting the target's grants.
func (t GrantTarget) where() (string, any) {
	if t.SpaceID != nil {
		return "g.space_id = ?", *t.SpaceID
	}
	return "g.collection_id = ?", *t.CollectionID
}

// SetGrants gives each user and team role on the target, replacing their
// grant there if they had one.
func SetGrants(ctx context.Context, db bun.IDB, t GrantTarget, userIDs, teamIDs []string, role MemberRole, now time.Time) error {
	var rows []*Grant
	for _, u := range userIDs {
		rows = append(rows, &Grant{OrganizationID: t.OrganizationID, SpaceID: t.SpaceID, CollectionID: t.CollectionID, UserID: &u, Role: role, CreatedAt: now})
	}
	for _, team := range teamIDs {
		rows = append(rows, &Grant{OrganizationID: t.OrganizationID, SpaceID: t.SpaceID, CollectionID: t.CollectionID, TeamID: &team, Role: role, CreatedAt: now})
	}
	for _, g := range rows {
		// Replace, grantee by grantee: the four partial unique indexes cannot
		// be one ON CONFLICT target. Callers hold the organization's lock.
		if _, err := RemoveGrant(ctx, db, t, g.UserID, g.TeamID); err != nil {
			return err
		}
		if _, err := db.NewInsert().Model(g).Exec(ctx); err != nil {
			return translate(err)
		}
	}
	return AccessChanged(ctx, db, t.OrganizationID)
}

// UpdateGrant changes the role of a grantee's grant on the target; false when
// they have none.
func UpdateGrant(ctx context.Context, db bun.IDB, t GrantTarget, userID, teamID *string, role MemberRole) (bool, error) {
	where, arg := t.where()
	q := db.NewUpdate().Model((*Grant)(nil)).Set("role = ?", role).Where(where, arg)
	q = granteeWhere(q, userID, teamID)
	res, err := q.Exec(ctx)
	if err != nil {
		return false, translate(err)
	}
	n, err := res.RowsAffected()
	if err != nil || n == 0 {
		return false, translate(err)
	}
	return true, AccessChanged(ctx, db, t.OrganizationID)
}

// RemoveGrant removes a grantee's grant on the target; false when there was none.
func RemoveGrant(ctx context.Context, db bun.IDB, t GrantTarget, userID, teamID *string) (bool, error) {
	where, arg := t.where()
	grantee, id := " AND g.team_id = ?", teamID
	if userID != nil {
		grantee, id = " AND g.user_id = ?", userID
	}
	removed, err := deleteRows(ctx, db, (*Grant)(nil), where+grantee+" AND g.organization_id = ?", arg, *id, t.OrganizationID)
	if err != nil || !removed {
		return removed, err
	}
	return true, AccessChanged(ctx, db, t.OrganizationID)
}

func granteeWhere(q *bun.UpdateQuery, userID, teamID *string) *bun.UpdateQuery {
	if userID != nil {
		return q.Where("g.user_id = ?", *userID)
	}
	return q.Where("g.team_id = ?", *teamID)
}

// ListGrants pages through the user grants (teams false) or team grants
// (teams true) of the target, oldest first.
func ListGrants(ctx context.Context, db bun.IDB, t GrantTarget, teams bool, p Page) ([]*Grant, error) {
	where, arg := t.where()
	var rows []*Grant
	q := db.NewSelect().Model(&rows).Where(where, arg)
	key := "g.user_id"
	if teams {
		key = "g.team_id"
	}
	q = q.Where(key + " IS NOT NULL")
	err := p.scan(ctx, p.byTime(q, "g.created_at", key, false))
	return rows, translate(err)
}

// DeleteGrantsOn removes every grant on these spaces and collections of
// orgID (they are leaving the organization whose members and teams the
// grants name).
func DeleteGrantsOn(ctx context.Context, db bun.IDB, orgID string, collectionIDs, spaceIDs []string) error {
	if len(spaceIDs) > 0 {
		if _, err := deleteRows(ctx, db, (*Grant)(nil), "organization_id = ? AND space_id IN (?)", orgID, bun.List(spaceIDs)); err != nil {
			return err
		}
	}
	if len(collectionIDs) > 0 {
		if _, err := deleteRows(ctx, db, (*Grant)(nil), "organization_id = ? AND collection_id IN (?)", orgID, bun.List(collectionIDs)); err != nil {
			return err
		}
	}
	return AccessChanged(ctx, db, orgID)
}

// OrgAccess is what deciding anyone's role on an organization's content
// needs, read at once (three queries): its collections, its grants, and its
// teams' members.
type OrgAccess struct {
	Collections []*AccessNode
	Grants      []*Grant
	// TeamsOf maps a user to the teams they belong to.
	TeamsOf map[string][]string
}

// AccessNode is a collection or space as access decisions see it.
type AccessNode struct {
	Kind         string        `bun:"kind"` // "collection" or "space"
	ID           string        `bun:"id"`
	ParentID     *string       `bun:"parent_id"`
	DefaultLevel *DefaultLevel `bun:"default_level"`
	CreatedAt    time.Time     `bun:"created_at"`
	// Live is false for a deleted space.
	Live bool `bun:"live"`
	// Visibility is a space's ("" for a collection).
	Visibility ContentVisibility `bun:"visibility"`
}

// LoadOrgAccess reads orgID's OrgAccess, but its spaces (LoadOrgSpaces):
// deciding the role on one space needs only the collections above it. One
// query: it runs for most requests.
func LoadOrgAccess(ctx context.Context, db bun.IDB, orgID string) (*OrgAccess, error) {
	ctx = inOrganization(ctx, orgID)
	var row struct{ Collections, Grants, Teams []byte }
	err := eachRow(ctx, db, `SELECT
		(SELECT COALESCE(jsonb_agg(jsonb_build_object('id', id, 'parent_id', parent_id, 'default_level', default_level)
			ORDER BY created_at, id), '[]') FROM collections WHERE organization_id = ?) AS collections,
		(SELECT COALESCE(jsonb_agg(jsonb_build_object('space_id', space_id, 'collection_id', collection_id,
			'user_id', user_id, 'team_id', team_id, 'role', role)), '[]') FROM content_grants WHERE organization_id = ?) AS grants,
		(SELECT COALESCE(jsonb_agg(jsonb_build_object('user_id', user_id, 'team_id', team_id)), '[]')
			FROM team_members WHERE organization_id = ?) AS teams`, []any{orgID, orgID, orgID}, func(scan func(...any) error) error {
		return scan(&row.Collections, &row.Grants, &row.Teams)
	})
	if err != nil {
		return nil, translate(err)
	}
	a := &OrgAccess{TeamsOf: map[string][]string{}}
	var collections []struct {
		ID           string        `json:"id"`
		ParentID     *string       `json:"parent_id"`
		DefaultLevel *DefaultLevel `json:"default_level"`
	}
	var grants []struct {
		SpaceID      *string    `json:"space_id"`
		CollectionID *string    `json:"collection_id"`
		UserID       *string    `json:"user_id"`
		TeamID       *string    `json:"team_id"`
		Role         MemberRole `json:"role"`
	}
	var teams []struct {
		UserID string `json:"user_id"`
		TeamID string `json:"team_id"`
	}
	if err := errors.Join(json.Unmarshal(row.Collections, &collections), json.Unmarshal(row.Grants, &grants), json.Unmarshal(row.Teams, &teams)); err != nil {
		return nil, fmt.Errorf("store: access of %s: %w", orgID, err)
	}
	for _, c := range collections {
		a.Collections = append(a.Collections, &AccessNode{Kind: "collection", ID: c.ID, ParentID: c.ParentID, DefaultLevel: c.DefaultLevel, Live: true})
	}
	for _, g := range grants {
		a.Grants = append(a.Grants, &Grant{OrganizationID: orgID, SpaceID: g.SpaceID, CollectionID: g.CollectionID,
			UserID: g.UserID, TeamID: g.TeamID, Role: g.Role})
	}
	for _, t := range teams {
		a.TeamsOf[t.UserID] = append(a.TeamsOf[t.UserID], t.TeamID)
	}
	return a, nil
}

// LoadOrgSpaces reads every space of orgID as access decisions see it,
// oldest first, for the lists and counts that go over all of them.
func LoadOrgSpaces(ctx context.Context, db bun.IDB, orgID string) ([]*AccessNode, error) {
	ctx = inOrganization(ctx, orgID)
	var spaces []*AccessNode
	// Live and deleted spaces apart, each by its index (spaces_org_idx holds
	// live spaces only; spaces_org_deleted_idx the few deleted ones, kept
	// for their retention): one condition over both would read every
	// organization's spaces.
	err := db.NewRaw(`SELECT 'space' AS kind, id, parent_id, default_level, created_at, true AS live, visibility
		FROM spaces WHERE organization_id = ? AND deleted_at IS NULL
		UNION ALL
		SELECT 'space', id, parent_id, default_level, created_at, false, visibility
		FROM spaces WHERE organization_id = ? AND deleted_at IS NOT NULL
		ORDER BY created_at, id`, orgID, orgID).Scan(ctx, &spaces)
	return spaces, translate(err)
}
