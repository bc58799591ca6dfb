package store

import (
	"context"
	"slices"
	"time"

	"github.com/uptrace/bun"
)

// Collection is a folder of spaces and collections in an organization.
type Collection struct {
	bun.BaseModel `bun:"table:collections,alias:collection"`

	ID             string  `bun:"id,pk"`
	OrganizationID string  `bun:"organization_id"`
	ParentID       *string `bun:"parent_id"`
	Title          string  `bun:"title"`
	Description    *string `bun:"description"`
	// DefaultLevel is nil for "guest".
	DefaultLevel *DefaultLevel `bun:"default_level"`
	Position     int           `bun:"position"`
	CreatedBy    *string       `bun:"created_by"`
	CreatedAt    time.Time     `bun:"created_at"`
	UpdatedAt    time.Time     `bun:"updated_at"`
}

// Object is the REST type name of a collection.
func (Collection) Object() string { return "collection" }

// CreateCollection inserts c.
func CreateCollection(ctx context.Context, db bun.IDB, c *Collection) error {
	if _, err := db.NewInsert().Model(c).Exec(ctx); err != nil {
		return translate(err)
	}
	return AccessChanged(ctx, db, c.OrganizationID)
}

// GetCollection returns collection id, from its organization's shard (the
// directory knows which).
func GetCollection(ctx context.Context, db bun.IDB, id string) (*Collection, error) {
	rows, err := readByIDs(ctx, db, "collections", []string{id}, func(c *Collection) string { return c.ID },
		func(ctx context.Context, db bun.IDB, org string, ids []string) ([]*Collection, error) {
			return selectRows[Collection](ctx, db, "organization_id = ? AND id = ?", "", org, id)
		})
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, ErrNotFound
	}
	return rows[0], nil
}

// ListCollections pages through the collections of orgID, oldest first;
// with topLevel, only those at the organization's root.
func ListCollections(ctx context.Context, db bun.IDB, orgID string, topLevel bool, p Page) ([]*Collection, error) {
	ctx = inOrganization(ctx, orgID)
	var rows []*Collection
	q := db.NewSelect().Model(&rows).Where("collection.organization_id = ?", orgID)
	if topLevel {
		q = q.Where("collection.parent_id IS NULL")
	}
	err := p.scan(ctx, p.byTime(q, "collection.created_at", "collection.id", false))
	return rows, translate(err)
}

// ListSpacesInCollection pages through the live spaces directly in
// collection collectionID of orgID, in their order. The organization is
// named so that a Citus cluster reads one shard group.
func ListSpacesInCollection(ctx context.Context, db bun.IDB, orgID, collectionID string, p Page) ([]*Space, error) {
	ctx = inOrganization(ctx, orgID)
	var rows []*Space
	q := db.NewSelect().Model(&rows).Where("space.organization_id = ? AND space.parent_id = ? AND space.deleted_at IS NULL", orgID, collectionID)
	err := p.scan(ctx, p.byPosition(q, "space"))
	return rows, translate(err)
}

// UpdateCollection writes the given columns of c.
func UpdateCollection(ctx context.Context, db bun.IDB, c *Collection, columns ...string) error {
	if _, err := byKey(db, db.NewUpdate().Model(c).Column(append(columns, "updated_at")...), c).Exec(ctx); err != nil {
		return translate(err)
	}
	if slices.Contains(columns, "parent_id") || slices.Contains(columns, "default_level") {
		return AccessChanged(ctx, db, c.OrganizationID)
	}
	return nil
}

// DeleteCollection removes collection id of orgID; false when there was
// none. Its children must have been moved out.
func DeleteCollection(ctx context.Context, db bun.IDB, orgID, id string) (bool, error) {
	deleted, err := deleteRows(ctx, db, (*Collection)(nil), "id = ? AND organization_id = ?", id, orgID)
	if err != nil || !deleted {
		return deleted, err
	}
	return true, AccessChanged(ctx, db, orgID)
}

// ContentTree is the collections and spaces (deleted ones included, so their
// place is kept for a restore) of one organization, as mutations of the tree
// read it under the organization's lock.
type ContentTree struct {
	Collections []*Collection
	Spaces      []*Space
}

// LoadContentTree reads orgID's collections and spaces.
func LoadContentTree(ctx context.Context, db bun.IDB, orgID string) (*ContentTree, error) {
	ctx = inOrganization(ctx, orgID)
	t := &ContentTree{}
	if err := db.NewSelect().Model(&t.Collections).Where("organization_id = ?", orgID).Scan(ctx); err != nil {
		return nil, translate(err)
	}
	if err := db.NewSelect().Model(&t.Spaces).Where("organization_id = ?", orgID).Scan(ctx); err != nil {
		return nil, translate(err)
	}
	return t, nil
}

// SetPlace writes the parent and position of a collection or space of
// orgID.
func SetPlace(ctx context.Context, db bun.IDB, table string, orgID, id string, parentID *string, position int) error {
	_, err := db.NewUpdate().Table(table).Set("parent_id = ?, position = ?", parentID, position).
		Where("id = ? AND organization_id = ?", id, orgID).Exec(ctx)
	if err != nil {
		return translate(err)
	}
	return AccessChanged(ctx, db, orgID)
}

// ShareLockSpace reads space id and keeps it from being transferred or
// purged until tx ends (FOR KEY SHARE, the lock a row referring to it takes
// at its insert): what tx adds referring to it belongs to the organization
// read here (orgID is where the caller read it, as LockSpace's).
func ShareLockSpace(ctx context.Context, tx bun.IDB, orgID, id string) (*Space, error) {
	s := new(Space)
	err := lockRow(ctx, tx, "spaces", orgID, id, "KEY SHARE", func(q *bun.SelectQuery) error { return q.Model(s).Scan(ctx) })
	return s, err
}

// SpacesPublishedIn returns which of spaceIDs a site publishes.
func SpacesPublishedIn(ctx context.Context, db bun.IDB, spaceIDs []string) ([]string, error) {
	var ids []string
	if len(spaceIDs) == 0 {
		return nil, nil
	}
	err := db.NewSelect().Table("site_spaces").ColumnExpr("DISTINCT space_id").
		Where("space_id IN (?)", bun.List(spaceIDs)).Scan(ctx, &ids)
	return ids, translate(err)
}

// PlaceNew locks orgID's content tree for the rest of tx and returns the
// position of new content at the end of parentID (nil: the root), or
// ErrNotFound when parentID is no longer a collection of orgID. Checked
// before the lock, the parent could be deleted or given to another
// organization meanwhile (the new item then referred to a row that was gone,
// or sat in another organization's tree), and two new items could take the
// same position.
func PlaceNew(ctx context.Context, tx bun.Tx, orgID string, parentID *string) (int, error) {
	if err := LockOrganization(ctx, tx, orgID); err != nil {
		return 0, err
	}
	if parentID != nil {
		ok, err := tx.NewSelect().Model((*Collection)(nil)).Where("id = ? AND organization_id = ?", *parentID, orgID).Exists(ctx)
		if err != nil {
			return 0, translate(err)
		}
		if !ok {
			return 0, ErrNotFound
		}
	}
	return NextPosition(ctx, tx, orgID, parentID)
}

// NextPosition is the position after the last child of parentID (nil: the
// organization's root) in orgID. Only under the organization's lock is it
// nobody else's (PlaceNew).
//
// The spaces' max is read from the end of an index
// (spaces_org_parent_position_idx, migration 0038), whose parent column is
// COALESCE(parent_id, the empty string): the root compared by equality, which lets the
// index's order serve max (IS NULL or IS NOT DISTINCT FROM would not; it
// scanned every organization's spaces). An organization's collections are
// few.
func NextPosition(ctx context.Context, db bun.IDB, orgID string, parentID *string) (int, error) {
	ctx = inOrganization(ctx, orgID)
	parent := ""
	if parentID != nil {
		parent = *parentID
	}
	var next int
	err := db.NewRaw(`SELECT COALESCE(greatest(
		(SELECT max(position) FROM spaces WHERE organization_id = ? AND COALESCE(parent_id, '') = ?),
		(SELECT max(position) FROM collections WHERE organization_id = ? AND COALESCE(parent_id, '') = ?)) + 1, 0)`,
		orgID, parent, orgID, parent).Scan(ctx, &next)
	return next, translate(err)
}
