package store

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
	"github.com/uptrace/bun/schema"
)

// Transfers of spaces and collections to another organization. The
// organization is every tenant row's distribution key (citus.go), which
// Citus does not let an UPDATE change: a transfer copies the rows into the
// new organization, then deletes the old ones, in one transaction, on a
// plain PostgreSQL as on a cluster (one way, tested everywhere). The
// triggers count the copies as new rows and the deletions as rows gone
// (migration 0044): the new organization's space counters, shown bodies and
// current pages are rebuilt from what is copied, the old one's unwound.

// LockForTransfer locks the spaces of fromOrgID that a transfer gives
// away, for the rest of tx, before it checks or moves anything of theirs:
// a site space being added (which share-locks its space, ShareLockSpace)
// or an edit in flight (LockSpace) finishes first and is seen, and those
// that come after wait, then find the space gone from fromOrgID.
func LockForTransfer(ctx context.Context, tx bun.Tx, fromOrgID string, spaceIDs []string) error {
	if len(spaceIDs) == 0 {
		return nil
	}
	var ids []string
	err := tx.NewSelect().Table("spaces").Column("id").Where("organization_id = ? AND id IN (?)", fromOrgID, bun.List(spaceIDs)).
		OrderExpr("id").For("UPDATE").Scan(ctx, &ids)
	return translate(err)
}

// moveStep copies the rows of one table that belong to the moved content.
type moveStep struct {
	table string
	// where selects the rows in the old organization (besides
	// organization_id, which every step checks); its arguments are those
	// of the move (moveArgs).
	where string
	// set gives columns another value in the copy: a reference to what
	// does not move with the rows is cut.
	set map[string]string
}

// moveSteps copy a transfer's rows, parents before the rows that refer to
// them. In where and set, ?collections and ?spaces stand for the moved
// collections and spaces, ?org for the old organization.
var moveSteps = []moveStep{
	// A moved collection or space whose parent stays behind lands at the
	// new organization's root (the caller then places it).
	{table: "collections", where: "id IN (?collections)",
		set: map[string]string{"parent_id": "CASE WHEN parent_id IN (?collections) THEN parent_id END"}},
	{table: "spaces", where: "id IN (?spaces)",
		set: map[string]string{"parent_id": "CASE WHEN parent_id IN (?collections) THEN parent_id END"}},
	{table: "revisions", where: "space_id IN (?spaces)"},
	{table: "revision_pages", where: "revision_id IN (SELECT id FROM revisions WHERE organization_id = ?org AND space_id IN (?spaces))"},
	{table: "revision_files", where: "revision_id IN (SELECT id FROM revisions WHERE organization_id = ?org AND space_id IN (?spaces))"},
	// The old organization's issues cluster stays with it.
	{table: "change_requests", where: "space_id IN (?spaces)",
		set: map[string]string{"conversations_issues_cluster_id": "NULL"}},
	{table: "comments", where: "space_id IN (?spaces)"},
	{table: "comment_replies", where: "comment_id IN (SELECT id FROM comments WHERE organization_id = ?org AND space_id IN (?spaces))"},
	{table: "comment_reactions", where: `target_id IN (SELECT id FROM comments WHERE organization_id = ?org AND space_id IN (?spaces)
		UNION ALL SELECT r.id FROM comment_replies r JOIN comments c ON c.id = r.comment_id AND c.organization_id = r.organization_id
		WHERE r.organization_id = ?org AND c.space_id IN (?spaces))`},
	{table: "change_request_contributors", where: "change_request_id IN (SELECT id FROM change_requests WHERE organization_id = ?org AND space_id IN (?spaces))"},
	{table: "change_request_reviews", where: "change_request_id IN (SELECT id FROM change_requests WHERE organization_id = ?org AND space_id IN (?spaces))"},
	{table: "change_request_requested_reviewers", where: "change_request_id IN (SELECT id FROM change_requests WHERE organization_id = ?org AND space_id IN (?spaces))"},
	// A space's translations follow it; a result space that stays behind
	// is forgotten, as when it is deleted.
	{table: "translations", where: "source_space_id IN (?spaces)",
		set: map[string]string{"result_space_id": "CASE WHEN result_space_id IN (?spaces) THEN result_space_id END"}},
	// The automatic redirects of its pages (old paths that lead to them).
	{table: "page_redirects", where: "space_id IN (?spaces)"},
}

// MoveToOrganization gives these collections and spaces of fromOrgID to
// orgID, with the content of the spaces: their revisions, pages, files,
// change requests and comments (and theirs), their translations and the
// automatic redirects of their pages. The page bodies they show are copied
// to orgID (fromOrgID keeps its copies for its other spaces).
//
// What the old organization merely had of them is not carried over: its
// grants on them (the caller deletes them first: they name its members
// and teams), its integrations' installations on the spaces, and the
// links of their change requests to its issue clusters. The events and
// live events of its history stay its own (no key ties them to a space).
func MoveToOrganization(ctx context.Context, db bun.IDB, fromOrgID, orgID string, collectionIDs, spaceIDs []string) error {
	for _, org := range []string{fromOrgID, orgID} {
		if err := AccessChanged(ctx, db, org); err != nil {
			return err
		}
	}
	// The sites of the old organization no longer show them.
	for _, id := range spaceIDs {
		if err := spaceChanged(ctx, db, fromOrgID, id); err != nil {
			return err
		}
	}
	if len(collectionIDs)+len(spaceIDs) == 0 {
		return nil
	}
	// This process's directory learns of the move now; the others' find
	// out on their next read (readByIDs).
	dir := directoryOf(ctx, db)
	dir.forget("collections", collectionIDs)
	dir.forget("spaces", spaceIDs)
	// IN () is no valid SQL: an id no row has stands for none.
	collections, spaces := bun.List(nonEmpty(collectionIDs)), bun.List(nonEmpty(spaceIDs))
	args := map[string]any{"?collections": collections, "?spaces": spaces, "?org": fromOrgID}
	bodies := bun.SafeQuery(`SELECT rp.body_sha256, rp.organization_id FROM revision_pages rp
		WHERE rp.organization_id = ? AND rp.body_sha256 IS NOT NULL
		AND rp.revision_id IN (SELECT id FROM revisions WHERE organization_id = ? AND space_id IN (?))`, fromOrgID, fromOrgID, spaces)
	// The bodies before the pages that show them.
	for _, q := range copyBodies(orgID, bodies) {
		if _, err := db.NewRaw("?", q).Exec(ctx); err != nil {
			return translate(err)
		}
	}
	for _, step := range moveSteps {
		// The rows to move are locked before they are copied: a row
		// inserted meanwhile under one of them (a reply to a comment: its
		// foreign key share-locks the comment) waits for the transfer,
		// then finds its parent gone from the old organization and is
		// written in the new one (InsertRow). Unlocked, it could commit
		// between the copy of its siblings and the deletion of its parent
		// (whose cascade then deletes it): acknowledged, and lost.
		lock := bun.SafeQuery(fmt.Sprintf("SELECT count(*) FROM (SELECT 1 FROM %s WHERE organization_id = ? AND %s FOR UPDATE) AS locked",
			quoteIdent(step.table), expand(step.where, args)), fromOrgID)
		if _, err := db.NewRaw("?", lock).Exec(ctx); err != nil {
			return fmt.Errorf("store: lock %s: %w", step.table, translate(err))
		}
		q, err := step.copy(ctx, db, orgID, args)
		if err != nil {
			return err
		}
		if _, err := db.NewRaw("?", q).Exec(ctx); err != nil {
			return fmt.Errorf("store: move %s: %w", step.table, translate(err))
		}
	}
	// Then the old rows: reactions refer to their targets by id alone,
	// the rest of the spaces' content goes with them (the foreign keys
	// cascade), collections last (spaces refer to them).
	for _, q := range []any{
		bun.SafeQuery("DELETE FROM comment_reactions WHERE organization_id = ? AND "+expand(moveSteps[8].where, args), fromOrgID),
		bun.SafeQuery("DELETE FROM spaces WHERE organization_id = ? AND id IN (?)", fromOrgID, spaces),
		bun.SafeQuery("DELETE FROM collections WHERE organization_id = ? AND id IN (?)", fromOrgID, collections),
	} {
		if _, err := db.NewRaw("?", q).Exec(ctx); err != nil {
			return translate(err)
		}
	}
	return nil
}

// copy is the statement copying step's rows into orgID.
func (step moveStep) copy(ctx context.Context, db bun.IDB, orgID string, args map[string]any) (schema.QueryAppender, error) {
	columns, err := tableColumns(ctx, db, step.table)
	if err != nil {
		return nil, err
	}
	values := make([]string, len(columns))
	for i, c := range columns {
		switch {
		case c == "organization_id":
			values[i] = "?0"
		case step.set[c] != "":
			values[i] = expand(step.set[c], args)
		default:
			values[i] = quoteIdent(c)
		}
	}
	from := args["?org"]
	table := quoteIdent(step.table)
	return bun.SafeQuery(fmt.Sprintf("INSERT INTO %s (%s) SELECT %s FROM %s WHERE organization_id = ?1 AND %s",
		table, strings.Join(quoted(columns), ", "), strings.Join(values, ", "), table, expand(step.where, args)), orgID, from), nil
}

// expand writes a step's arguments into its SQL: the id lists and the
// organization are formatted by bun, never spliced from user input.
func expand(sql string, args map[string]any) string {
	for name, v := range args {
		sql = strings.ReplaceAll(sql, name, string(bunFormatter.AppendQuery(nil, "?", v)))
	}
	return sql
}

var bunFormatter = schema.NewQueryGen(pgdialect.New())

// columnsOf caches each table's columns (the schema does not change under
// a running binary: migrations run before it serves).
var columnsOf sync.Map

// tableColumns are the columns of table that can be written: all but the
// generated ones, in their order.
func tableColumns(ctx context.Context, db bun.IDB, table string) ([]string, error) {
	if c, ok := columnsOf.Load(table); ok {
		return c.([]string), nil
	}
	var columns []string
	err := db.NewRaw(`SELECT column_name FROM information_schema.columns
		WHERE table_schema = 'public' AND table_name = ? AND is_generated = 'NEVER' ORDER BY ordinal_position`, table).Scan(ctx, &columns)
	if err != nil {
		return nil, translate(err)
	}
	if len(columns) == 0 {
		return nil, fmt.Errorf("store: table %s has no columns", table)
	}
	columnsOf.Store(table, columns)
	return columns, nil
}

func quoted(columns []string) []string {
	out := make([]string, len(columns))
	for i, c := range columns {
		out[i] = quoteIdent(c)
	}
	return out
}

func quoteIdent(name string) string { return `"` + strings.ReplaceAll(name, `"`, `""`) + `"` }

func nonEmpty(ids []string) []string {
	if len(ids) == 0 {
		return []string{""}
	}
	return ids
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
