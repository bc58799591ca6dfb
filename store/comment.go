package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/uptrace/bun"
)

// Comment is a comment on a space's content, or on a change request's.
type Comment struct {
	bun.BaseModel `bun:"table:comments,alias:c"`

	ID              string          `bun:"id,pk"`
	OrganizationID  string          `bun:"organization_id"`
	SpaceID         string          `bun:"space_id"`
	ChangeRequestID *string         `bun:"change_request_id"`
	PageID          *string         `bun:"page_id"`
	NodeID          *string         `bun:"node_id"`
	TableCell       json.RawMessage `bun:"table_cell,type:jsonb"`
	RevisionID      string          `bun:"revision_id"`
	Body            string          `bun:"body"`
	// BodyDocument is the body as given when it was a document (Body is
	// then its text); nil for a markdown body.
	BodyDocument json.RawMessage `bun:"body_document,type:jsonb,nullzero"`
	PostedBy     *string         `bun:"posted_by"`
	PostedAt     time.Time       `bun:"posted_at"`
	EditedAt     *time.Time      `bun:"edited_at"`
	Status       string          `bun:"status"`
	ResolvedAt   *time.Time      `bun:"resolved_at"`
	ResolvedBy   *string         `bun:"resolved_by"`
}

// Comment statuses.
const (
	CommentOpen     = "open"
	CommentResolved = "resolved"
)

// Object is the REST type name of a comment.
func (Comment) Object() string { return "comment" }

// CommentReply is a reply to a comment.
type CommentReply struct {
	bun.BaseModel `bun:"table:comment_replies,alias:r"`

	ID             string `bun:"id,pk"`
	OrganizationID string `bun:"organization_id"`
	CommentID      string `bun:"comment_id"`
	Body           string `bun:"body"`
	// BodyDocument is as a comment's.
	BodyDocument json.RawMessage `bun:"body_document,type:jsonb,nullzero"`
	PostedBy     *string         `bun:"posted_by"`
	PostedAt     time.Time       `bun:"posted_at"`
	EditedAt     *time.Time      `bun:"edited_at"`
}

// Object is the REST type name of a reply.
func (CommentReply) Object() string { return "comment-reply" }

// Reaction is a user's emoji on a comment or reply.
type Reaction struct {
	bun.BaseModel `bun:"table:comment_reactions,alias:x"`

	TargetID       string    `bun:"target_id,pk"`
	OrganizationID string    `bun:"organization_id"`
	UserID         string    `bun:"user_id,pk"`
	Emoji          string    `bun:"emoji,pk"`
	ReactedAt      time.Time `bun:"reacted_at"`
}

// InsertRow adds row (a model). The rows whose organization is their
// parent's (a comment's is its space's, a reply's its comment's, an
// installation on a space or site its installation's) get it from the
// parent when they do not carry it.
func InsertRow(ctx context.Context, db bun.IDB, row any) error {
	var org *string
	var parent, parentID string
	switch r := row.(type) {
	case *Comment:
		org, parent, parentID = &r.OrganizationID, "spaces", r.SpaceID
	case *CommentReply:
		org, parent, parentID = &r.OrganizationID, "comments", r.CommentID
	case *IntegrationSpaceInstallation:
		org, parent, parentID = &r.OrganizationID, "integration_installations", r.InstallationID
	case *IntegrationSiteInstallation:
		org, parent, parentID = &r.OrganizationID, "integration_installations", r.InstallationID
	}
	// The organization is the parent's, read first; a parent that a
	// transfer moved before the insert could take its foreign key's lock
	// (the transfer locks what it moves) is gone from it, and looked up
	// once more where it went.
	derived := org != nil && *org == ""
	for attempt := 0; ; attempt++ {
		if org != nil {
			if err := inParentOrganization(ctx, db, org, parent, parentID); err != nil {
				return err
			}
		}
		_, err := db.NewInsert().Model(row).Exec(ctx)
		var pgErr *pgconn.PgError
		if derived && attempt == 0 && errors.As(err, &pgErr) && pgErr.Code == "23503" {
			*org = ""
			continue
		}
		return parentGone(err)
	}
}

// parentGone is translate(err), with an insert's parent row gone (deleted
// since it was read: the foreign key, or the organization read from the
// parent, finds nothing) answered as ErrNotFound: the parent is not found
// any more, which is no server error.
func parentGone(err error) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && (pgErr.Code == "23503" || (pgErr.Code == "23502" && pgErr.ColumnName == "organization_id")) {
		return fmt.Errorf("%w: %s", ErrNotFound, pgErr.Message)
	}
	return translate(err)
}

// GetComment returns comment id of the space, on its content (crID nil) or
// on change request crID.
func GetComment(ctx context.Context, db bun.IDB, orgID, spaceID string, crID *string, id string) (*Comment, error) {
	ctx = inOrganization(ctx, orgID)
	c := new(Comment)
	q := db.NewSelect().Model(c).Where("c.organization_id = ? AND c.id = ? AND c.space_id = ?", orgID, id, spaceID)
	err := translate(onChangeRequest(q, crID).Scan(ctx))
	if errors.Is(err, ErrNotFound) {
		// The space may have been transferred since the caller read it
		// in orgID: the comment went with it. (Asks every shard on a
		// cluster; only a comment not found does.)
		q = db.NewSelect().Model(c).Where("c.id = ? AND c.space_id = ?", id, spaceID)
		err = translate(onChangeRequest(q, crID).Scan(ctx))
	}
	return c, err
}

func onChangeRequest(q *bun.SelectQuery, crID *string) *bun.SelectQuery {
	if crID == nil {
		return q.Where("c.change_request_id IS NULL")
	}
	return q.Where("c.change_request_id = ?", *crID)
}

// CommentFilter narrows a comment list.
type CommentFilter struct {
	Status  string // "" for all
	Page    *string
	Authors []string
	Desc    bool
}

// ListComments pages through the comments of the space's content (crID nil)
// or of change request crID.
func ListComments(ctx context.Context, db bun.IDB, orgID, spaceID string, crID *string, f CommentFilter, p Page) ([]*Comment, error) {
	ctx = inOrganization(ctx, orgID)
	var rows []*Comment
	q := onChangeRequest(db.NewSelect().Model(&rows).Where("c.organization_id = ? AND c.space_id = ?", orgID, spaceID), crID)
	if f.Status != "" {
		q = q.Where("c.status = ?", f.Status)
	}
	if f.Page != nil {
		q = q.Where("c.page_id = ?", *f.Page)
	}
	if len(f.Authors) > 0 {
		q = q.Where("c.posted_by IN (?)", bun.List(f.Authors))
	}
	err := p.scan(ctx, p.byTime(q, "c.posted_at", "c.id", f.Desc))
	return rows, translate(err)
}

// UpdateRow writes the given columns of a comment or reply.
func UpdateRow(ctx context.Context, db bun.IDB, row any, columns ...string) error {
	_, err := byKey(db, db.NewUpdate().Model(row).Column(columns...), row).Exec(ctx)
	return translate(err)
}

// DeleteComment removes a comment with its replies and their reactions;
// false when there was none.
//
// Reactions refer to their target by id alone (a comment or a reply: no
// foreign key), so they are deleted with it, in one transaction, after the
// targets are locked: a reaction or reply being added holds a share lock on
// its target (React, the replies' foreign key) until it commits, so once
// the targets are locked none is in flight, and those that come after find
// them gone. Deleted before the lock, a reaction added meanwhile was left
// behind.
func DeleteComment(ctx context.Context, db bun.IDB, orgID, id string) (bool, error) {
	deleted := false
	err := RunInTx(ctx, db, func(ctx context.Context, tx bun.Tx) error {
		var targets []string
		err := tx.NewSelect().Table("comments").Column("id").Where("organization_id = ? AND id = ?", orgID, id).For("UPDATE").Scan(ctx, &targets)
		if err != nil || len(targets) == 0 {
			return translate(err)
		}
		var replies []string
		err = tx.NewSelect().Table("comment_replies").Column("id").Where("organization_id = ? AND comment_id = ?", orgID, id).For("UPDATE").Scan(ctx, &replies)
		if err != nil {
			return translate(err)
		}
		if _, err := deleteRows(ctx, tx, (*Reaction)(nil), "organization_id = ? AND target_id IN (?)", orgID, bun.List(append(targets, replies...))); err != nil {
			return err
		}
		deleted, err = deleteRows(ctx, tx, (*Comment)(nil), "organization_id = ? AND id = ?", orgID, id)
		return err
	})
	return deleted, err
}

// DeleteReply removes a reply with its reactions; false when there was
// none. The reply is deleted first, which locks it: as in DeleteComment,
// no reaction to it is left behind.
func DeleteReply(ctx context.Context, db bun.IDB, orgID, commentID, id string) (bool, error) {
	deleted := false
	err := RunInTx(ctx, db, func(ctx context.Context, tx bun.Tx) error {
		var err error
		if deleted, err = deleteRows(ctx, tx, (*CommentReply)(nil), "organization_id = ? AND id = ? AND comment_id = ?", orgID, id, commentID); err != nil || !deleted {
			return err
		}
		_, err = deleteRows(ctx, tx, (*Reaction)(nil), "organization_id = ? AND target_id = ?", orgID, id)
		return err
	})
	return deleted, err
}

// Replies returns the replies of these comments of orgID, oldest first.
func Replies(ctx context.Context, db bun.IDB, orgID string, commentIDs []string) ([]*CommentReply, error) {
	ctx = inOrganization(ctx, orgID)
	var rows []*CommentReply
	err := db.NewSelect().Model(&rows).Where("r.organization_id = ? AND r.comment_id IN (?)", orgID, bun.List(commentIDs)).OrderExpr("r.posted_at, r.id").Scan(ctx)
	return rows, translate(err)
}

// Reactions returns the reactions to these comments or replies of orgID,
// oldest first.
func Reactions(ctx context.Context, db bun.IDB, orgID string, targetIDs []string) ([]*Reaction, error) {
	ctx = inOrganization(ctx, orgID)
	var rows []*Reaction
	err := db.NewSelect().Model(&rows).Where("x.organization_id = ? AND x.target_id IN (?)", orgID, bun.List(targetIDs)).
		OrderExpr("x.reacted_at, x.emoji, x.user_id").Scan(ctx)
	return rows, translate(err)
}

// React adds (or, with remove, takes back) userID's emojis on a target, a
// comment or reply of orgID.
func React(ctx context.Context, db bun.IDB, orgID, targetID, userID string, added, removed []string, now time.Time) error {
	return RunInTx(ctx, db, func(ctx context.Context, tx bun.Tx) error {
		if len(added) > 0 {
			// The target is share-locked until the reactions commit, so
			// that a deletion of the target waits for them and then
			// deletes them too (DeleteComment); a target deleted first is
			// not found, and no reaction is added.
			var found []string
			err := tx.NewRaw(`SELECT id FROM comments WHERE organization_id = ? AND id = ? FOR KEY SHARE`, orgID, targetID).Scan(ctx, &found)
			if err == nil && len(found) == 0 {
				err = tx.NewRaw(`SELECT id FROM comment_replies WHERE organization_id = ? AND id = ? FOR KEY SHARE`, orgID, targetID).Scan(ctx, &found)
			}
			if err != nil || len(found) == 0 {
				return err
			}
			rows := make([]*Reaction, len(added))
			for i, e := range added {
				rows[i] = &Reaction{TargetID: targetID, OrganizationID: orgID, UserID: userID, Emoji: e, ReactedAt: now}
			}
			if _, err := tx.NewInsert().Model(&rows).On("CONFLICT DO NOTHING").Exec(ctx); err != nil {
				return err
			}
		}
		if len(removed) > 0 {
			if _, err := deleteRows(ctx, tx, (*Reaction)(nil), "organization_id = ? AND target_id = ? AND user_id = ? AND emoji IN (?)",
				orgID, targetID, userID, bun.List(removed)); err != nil {
				return err
			}
		}
		return nil
	})
}

// OpenChangeRequestComments counts the open comments of these change
// requests of orgID.
func OpenChangeRequestComments(ctx context.Context, db bun.IDB, orgID string, crIDs []string) (map[string]int, error) {
	ctx = inOrganization(ctx, orgID)
	return countBy(ctx, db, "comments", "change_request_id", "organization_id = ? AND change_request_id IN (?) AND status = 'open'", orgID, bun.List(crIDs))
}
