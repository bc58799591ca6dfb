package store

import (
	"context"

	"github.com/uptrace/bun"
)

// The counts of an organization's spaces and collections, which the
// database keeps in the transaction that writes them (migration 0048): the
// totals of the lists of spaces and collections (GraphQL's totalCount) are
// read here, never counted over the rows, so they cost what they cost in
// an organization of ten spaces or of a hundred thousand.

// Kinds of counted content.
const (
	CountedSpaces      = "space"
	CountedCollections = "collection"
)

// ContentGroup is the live spaces (or the collections) of an organization
// that share what decides who may read them: their parent, their own
// default level and, for spaces, whether their visibility is
// in-collection. Every member may read all of a group or none of it, but
// for grants on the items themselves.
type ContentGroup struct {
	Kind string `bun:"kind"`
	// ParentID is nil at the organization's root.
	ParentID *string `bun:"parent_id"`
	// DefaultLevel is nil for the guest level.
	DefaultLevel *DefaultLevel `bun:"default_level"`
	InCollection bool          `bun:"in_collection"`
	N            int           `bun:"n"`
}

// Node is the group as access decisions see one of its items without
// grants of its own (graph/access.go decides on it as on an item).
func (g *ContentGroup) Node() *AccessNode {
	n := &AccessNode{Kind: g.Kind, ParentID: g.ParentID, DefaultLevel: g.DefaultLevel, Live: true}
	if g.InCollection {
		n.Visibility = VisibilityInCollection
	}
	return n
}

// contentGroupColumns read a group, its empty keys back as nil.
const contentGroupColumns = `kind, NULLIF(parent_id, '') AS parent_id, NULLIF(default_level, '') AS default_level, in_collection, n`

// ContentGroups are every group of orgID's spaces and collections: as many
// as the organization's collections (times the levels set in them), never
// as many as its spaces.
func ContentGroups(ctx context.Context, db bun.IDB, orgID string) ([]*ContentGroup, error) {
	ctx = inOrganization(ctx, orgID)
	var groups []*ContentGroup
	err := db.NewRaw(`SELECT `+contentGroupColumns+` FROM content_counts WHERE organization_id = ? AND n > 0`, orgID).Scan(ctx, &groups)
	return groups, translate(err)
}

// ContentGroupsIn are the groups of kind of orgID directly in collection
// parentID.
func ContentGroupsIn(ctx context.Context, db bun.IDB, orgID, kind, parentID string) ([]*ContentGroup, error) {
	ctx = inOrganization(ctx, orgID)
	var groups []*ContentGroup
	err := db.NewRaw(`SELECT `+contentGroupColumns+` FROM content_counts
		WHERE organization_id = ? AND kind = ? AND parent_id = ? AND n > 0`, orgID, kind, parentID).Scan(ctx, &groups)
	return groups, translate(err)
}

// ContentTotals are the numbers of an organization's live spaces and of
// its collections.
type ContentTotals struct {
	Spaces      int `bun:"spaces"`
	Collections int `bun:"collections"`
}

// LoadContentTotals reads orgID's ContentTotals (zeros when nothing was
// ever counted).
func LoadContentTotals(ctx context.Context, db bun.IDB, orgID string) (ContentTotals, error) {
	ctx = inOrganization(ctx, orgID)
	var t ContentTotals
	err := db.NewRaw(`SELECT coalesce(sum(n) FILTER (WHERE kind = 'space'), 0) AS spaces,
		coalesce(sum(n) FILTER (WHERE kind = 'collection'), 0) AS collections
		FROM organization_content_counts WHERE organization_id = ?`, orgID).Scan(ctx, &t)
	return t, translate(err)
}

// GrantedSpaceNodes reads the live spaces of orgID granted to someone on
// themselves, as access decisions see them: the only spaces whose
// readers may differ from their group's (a grant opens them), as many as
// the organization's grants on spaces.
func GrantedSpaceNodes(ctx context.Context, db bun.IDB, orgID string) ([]*AccessNode, error) {
	ctx = inOrganization(ctx, orgID)
	var nodes []*AccessNode
	err := db.NewRaw(`SELECT 'space' AS kind, s.id, s.parent_id, s.default_level, s.created_at, true AS live, s.visibility
		FROM spaces s WHERE s.organization_id = ? AND s.deleted_at IS NULL AND s.id IN (
			SELECT g.space_id FROM content_grants g WHERE g.organization_id = ? AND g.space_id IS NOT NULL)`, orgID, orgID).Scan(ctx, &nodes)
	return nodes, translate(err)
}

// ContentCountsDrift compares the kept counts with the rows counted from
// scratch: each group whose count differs from its rows' ("group",
// organization, kind, parent, level, in-collection, kept, counted), and
// each organization whose total differs from its groups' ("total",
// organization, kind, kept, counted). Empty when the counts are right.
// The tests check it after every kind of write; it reads every row.
func ContentCountsDrift(ctx context.Context, db bun.IDB) ([]string, error) {
	var drift []string
	err := db.NewRaw(`WITH content_rows AS (
			SELECT organization_id, 'space' AS kind, coalesce(parent_id, '') AS parent_id, coalesce(default_level, '') AS default_level,
				visibility = 'in-collection' AS in_collection FROM spaces WHERE deleted_at IS NULL
			UNION ALL
			SELECT organization_id, 'collection', coalesce(parent_id, ''), coalesce(default_level, ''), false FROM collections)
		SELECT concat_ws(' ', 'group', k.organization_id, k.kind, k.parent_id, k.default_level, k.in_collection,
			coalesce(kept.n, 0), coalesce(counted.n, 0))
		FROM (SELECT organization_id, kind, parent_id, default_level, in_collection FROM content_counts
			UNION SELECT organization_id, kind, parent_id, default_level, in_collection FROM content_rows) k
		LEFT JOIN content_counts kept USING (organization_id, kind, parent_id, default_level, in_collection)
		LEFT JOIN (SELECT organization_id, kind, parent_id, default_level, in_collection, count(*) AS n
			FROM content_rows GROUP BY 1, 2, 3, 4, 5) counted USING (organization_id, kind, parent_id, default_level, in_collection)
		WHERE coalesce(kept.n, 0) <> coalesce(counted.n, 0)
		UNION ALL
		SELECT concat_ws(' ', 'total', organization_id, kind, coalesce(o.n, 0), coalesce(g.n, 0))
		FROM (SELECT organization_id, kind, sum(n) AS n FROM content_counts GROUP BY 1, 2) g
		FULL JOIN organization_content_counts o USING (organization_id, kind)
		WHERE coalesce(o.n, 0) <> coalesce(g.n, 0)`).Scan(ctx, &drift)
	return drift, translate(err)
}
