package store

import (
	"context"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
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
	_, err := db.NewInsert().Model(c).Exec(ctx)
	return translate(err)
}

// GetCollection returns collection id.
func GetCollection(ctx context.Context, db bun.IDB, id string) (*Collection, error) {
	return selectRow[Collection](ctx, db, "id = ?", id)
}

// ListCollections pages through the collections of orgID, oldest first;
// with topLevel, only those at the organization's root.
func ListCollections(ctx context.Context, db bun.IDB, orgID string, topLevel bool, p Page) ([]*Collection, error) {
	var rows []*Collection
	q := db.NewSelect().Model(&rows).Where("collection.organization_id = ?", orgID)
	if topLevel {
		q = q.Where("collection.parent_id IS NULL")
	}
	err := p.scan(ctx, p.byTime(q, "collection.created_at", "collection.id", false))
	return rows, translate(err)
}

// ListSpacesInCollection pages through the live spaces directly in a
// collection, in their order.
func ListSpacesInCollection(ctx context.Context, db bun.IDB, collectionID string, p Page) ([]*Space, error) {
	var rows []*Space
	q := db.NewSelect().Model(&rows).Where("space.parent_id = ? AND space.deleted_at IS NULL", collectionID)
	err := p.scan(ctx, p.byPosition(q, "space"))
	return rows, translate(err)
}

// UpdateCollection writes the given columns of c.
func UpdateCollection(ctx context.Context, db bun.IDB, c *Collection, columns ...string) error {
	_, err := db.NewUpdate().Model(c).Column(append(columns, "updated_at")...).WherePK().Exec(ctx)
	return translate(err)
}

// DeleteCollection removes collection id; false when there was none. Its
// children must have been moved out.
func DeleteCollection(ctx context.Context, db bun.IDB, id string) (bool, error) {
	return deleteRows(ctx, db, (*Collection)(nil), "id = ?", id)
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
	t := &ContentTree{}
	if err := db.NewSelect().Model(&t.Collections).Where("organization_id = ?", orgID).Scan(ctx); err != nil {
		return nil, translate(err)
	}
	if err := db.NewSelect().Model(&t.Spaces).Where("organization_id = ?", orgID).Scan(ctx); err != nil {
		return nil, translate(err)
	}
	return t, nil
}

// SetPlace writes the parent and position of a collection or space.
func SetPlace(ctx context.Context, db bun.IDB, table string, id string, parentID *string, position int) error {
	_, err := db.NewUpdate().Table(table).Set("parent_id = ?, position = ?", parentID, position).Where("id = ?", id).Exec(ctx)
	return translate(err)
}

// MoveToOrganization gives these collections and spaces to orgID, with
// the content of the spaces: their revisions, pages, files, change requests
// and comments (and theirs) carry orgID from then on, and the page bodies
// they show are copied to orgID (the old organization keeps its copies for
// its other spaces). Rows of the old organization that merely name a space
// (its translations, its integration's installation on the space, the
// events and live events of its history) stay the old organization's.
func MoveToOrganization(ctx context.Context, db bun.IDB, orgID string, collectionIDs, spaceIDs []string) error {
	if len(collectionIDs) > 0 {
		if _, err := db.NewUpdate().Table("collections").Set("organization_id = ?", orgID).
			Where("id IN (?)", bun.List(collectionIDs)).Exec(ctx); err != nil {
			return translate(err)
		}
	}
	if len(spaceIDs) == 0 {
		return nil
	}
	spaces := bun.List(spaceIDs)
	revisions := bun.SafeQuery("SELECT id FROM revisions WHERE space_id IN (?)", spaces)
	crs := bun.SafeQuery("SELECT id FROM change_requests WHERE space_id IN (?)", spaces)
	comments := bun.SafeQuery("SELECT id FROM comments WHERE space_id IN (?)", spaces)
	bodies := bun.SafeQuery(`SELECT rp.body_sha256, rp.organization_id FROM revision_pages rp
		WHERE rp.revision_id IN (?) AND rp.body_sha256 IS NOT NULL`, revisions)
	// Bodies before the pages that will show them. Then parents before
	// their children: a row inserted meanwhile takes its organization from
	// its parent's, key-share locked (inParentOrganization), so once the
	// parent is updated the insert waits for the transfer and reads the new
	// organization; one that went first is committed before the statement
	// updating the children reads them (a reply posted between an update
	// of the replies and one of their comments stayed behind). The sets are
	// found by the parents' ids, which do not change.
	for _, q := range append(copyBodies(orgID, bodies),
		bun.SafeQuery("UPDATE spaces SET organization_id = ? WHERE id IN (?)", orgID, spaces),
		bun.SafeQuery("UPDATE revisions SET organization_id = ? WHERE space_id IN (?)", orgID, spaces),
		bun.SafeQuery("UPDATE change_requests SET organization_id = ? WHERE space_id IN (?)", orgID, spaces),
		bun.SafeQuery("UPDATE comments SET organization_id = ? WHERE space_id IN (?)", orgID, spaces),
		bun.SafeQuery("UPDATE revision_pages SET organization_id = ? WHERE revision_id IN (?)", orgID, revisions),
		bun.SafeQuery("UPDATE revision_files SET organization_id = ? WHERE revision_id IN (?)", orgID, revisions),
		bun.SafeQuery("UPDATE change_request_contributors SET organization_id = ? WHERE change_request_id IN (?)", orgID, crs),
		bun.SafeQuery("UPDATE change_request_reviews SET organization_id = ? WHERE change_request_id IN (?)", orgID, crs),
		bun.SafeQuery("UPDATE change_request_requested_reviewers SET organization_id = ? WHERE change_request_id IN (?)", orgID, crs),
		bun.SafeQuery("UPDATE comment_replies SET organization_id = ? WHERE comment_id IN (?)", orgID, comments),
		// Reactions last: their targets are comments and replies.
		bun.SafeQuery(`UPDATE comment_reactions SET organization_id = ?
			WHERE target_id IN (?) OR target_id IN (SELECT id FROM comment_replies WHERE comment_id IN (?))`, orgID, comments, comments),
	) {
		if _, err := db.NewRaw("?", q).Exec(ctx); err != nil {
			return translate(err)
		}
	}
	return nil
}

// copyBodies are the statements that copy to orgID the page bodies, with
// their search sections (which refer to them), of the (sha256,
// organization_id) pairs the query from selects.
func copyBodies(orgID string, from any) []any {
	return []any{
		bun.SafeQuery(`INSERT INTO page_bodies (organization_id, sha256, markdown)
			SELECT ?, b.sha256, b.markdown FROM page_bodies b WHERE (b.sha256, b.organization_id) IN (?)
			ON CONFLICT DO NOTHING`, orgID, from),
		bun.SafeQuery(`INSERT INTO body_sections (organization_id, body_sha256, position, anchor, heading, body)
			SELECT ?, s.body_sha256, s.position, s.anchor, s.heading, s.body FROM body_sections s
			WHERE (s.body_sha256, s.organization_id) IN (?)
			ON CONFLICT DO NOTHING`, orgID, from),
	}
}

// EnsureBodies gives orgID a copy of each body of digests it lacks, from
// an organization that has it (bodies are stored by content: every copy
// is the same text). An edit stores its new bodies before it locks its
// space, in the organization the space had then; a transfer may have
// given the space to another one since, where the edit's pages must find
// them. Usually there is nothing to copy: one query that finds nothing.
func EnsureBodies(ctx context.Context, tx bun.IDB, orgID string, digests []string) error {
	if len(digests) == 0 {
		return nil
	}
	var missing []string
	err := tx.NewRaw(`SELECT d FROM unnest(?::text[]) d
		WHERE NOT EXISTS (SELECT 1 FROM page_bodies b WHERE b.sha256 = d AND b.organization_id = ?)`, pgdialect.Array(digests), orgID).Scan(ctx, &missing)
	if err != nil || len(missing) == 0 {
		return translate(err)
	}
	from := bun.SafeQuery(`SELECT DISTINCT ON (sha256) sha256, organization_id FROM page_bodies
		WHERE sha256 IN (?) AND organization_id <> ? ORDER BY sha256, organization_id`, bun.List(missing), orgID)
	for _, q := range copyBodies(orgID, from) {
		if _, err := tx.NewRaw("?", q).Exec(ctx); err != nil {
			return translate(err)
		}
	}
	return nil
}

// LockForTransfer locks the spaces a transfer gives away, for the rest of
// tx, with the lock its update of their organization (a key column) takes
// anyway, but before it checks or moves anything of theirs: a site space
// being added (which share-locks its space, ShareLockSpace) or an edit in
// flight (LockSpace) finishes first and is seen, and those that come after
// wait and find the space in its new organization.
func LockForTransfer(ctx context.Context, tx bun.Tx, spaceIDs []string) error {
	if len(spaceIDs) == 0 {
		return nil
	}
	var ids []string
	err := tx.NewSelect().Table("spaces").Column("id").Where("id IN (?)", bun.List(spaceIDs)).OrderExpr("id").For("UPDATE").Scan(ctx, &ids)
	return translate(err)
}

// ShareLockSpace reads space id and keeps it from being transferred or
// purged until tx ends (FOR KEY SHARE, the lock a row referring to it takes
// at its insert): what tx adds referring to it belongs to the organization
// read here.
func ShareLockSpace(ctx context.Context, tx bun.IDB, id string) (*Space, error) {
	s := new(Space)
	err := tx.NewSelect().Model(s).Where("id = ?", id).For("KEY SHARE").Scan(ctx)
	return s, translate(err)
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
