package store

import (
	"context"
	"encoding/json"
	"time"

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
	PostedBy        *string         `bun:"posted_by"`
	PostedAt        time.Time       `bun:"posted_at"`
	EditedAt        *time.Time      `bun:"edited_at"`
	Status          string          `bun:"status"`
	ResolvedAt      *time.Time      `bun:"resolved_at"`
	ResolvedBy      *string         `bun:"resolved_by"`
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

	ID             string     `bun:"id,pk"`
	OrganizationID string     `bun:"organization_id"`
	CommentID      string     `bun:"comment_id"`
	Body           string     `bun:"body"`
	PostedBy       *string    `bun:"posted_by"`
	PostedAt       time.Time  `bun:"posted_at"`
	EditedAt       *time.Time `bun:"edited_at"`
}

// Object is the REST type name of a reply.
func (CommentReply) Object() string { return "comment-reply" }

// Reaction is a user's emoji on a comment or reply.
type Reaction struct {
	bun.BaseModel `bun:"table:comment_reactions,alias:x"`

	TargetID  string    `bun:"target_id,pk"`
	UserID    string    `bun:"user_id,pk"`
	Emoji     string    `bun:"emoji,pk"`
	ReactedAt time.Time `bun:"reacted_at"`
}

// InsertRow adds row (a model). The rows whose organization is their
// parent's (a comment's is its space's, a reply's its comment's, an
// installation on a space or site its installation's) get it from the
// parent when they do not carry it.
func InsertRow(ctx context.Context, db bun.IDB, row any) error {
	q := db.NewInsert().Model(row)
	switch r := row.(type) {
	case *Comment:
		q = inParentOrganization(q, r.OrganizationID, "spaces", r.SpaceID)
	case *CommentReply:
		q = inParentOrganization(q, r.OrganizationID, "comments", r.CommentID)
	case *IntegrationSpaceInstallation:
		q = inParentOrganization(q, r.OrganizationID, "integration_installations", r.InstallationID)
	case *IntegrationSiteInstallation:
		q = inParentOrganization(q, r.OrganizationID, "integration_installations", r.InstallationID)
	}
	_, err := q.Exec(ctx)
	return translate(err)
}

// GetComment returns comment id of the space, on its content (crID nil) or
// on change request crID.
func GetComment(ctx context.Context, db bun.IDB, spaceID string, crID *string, id string) (*Comment, error) {
	c := new(Comment)
	q := db.NewSelect().Model(c).Where("c.id = ? AND c.space_id = ?", id, spaceID)
	q = onChangeRequest(q, crID)
	return c, translate(q.Scan(ctx))
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
func ListComments(ctx context.Context, db bun.IDB, spaceID string, crID *string, f CommentFilter, p Page) ([]*Comment, error) {
	var rows []*Comment
	q := onChangeRequest(db.NewSelect().Model(&rows).Where("c.space_id = ?", spaceID), crID)
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
	_, err := db.NewUpdate().Model(row).Column(columns...).WherePK().Exec(ctx)
	return translate(err)
}

// DeleteComment removes a comment with its replies; false when there was none.
func DeleteComment(ctx context.Context, db bun.IDB, id string) (bool, error) {
	if _, err := deleteRows(ctx, db, (*Reaction)(nil), "target_id = ? OR target_id IN (SELECT id FROM comment_replies WHERE comment_id = ?)", id, id); err != nil {
		return false, err
	}
	return deleteRows(ctx, db, (*Comment)(nil), "id = ?", id)
}

// DeleteReply removes a reply; false when there was none.
func DeleteReply(ctx context.Context, db bun.IDB, commentID, id string) (bool, error) {
	if _, err := deleteRows(ctx, db, (*Reaction)(nil), "target_id = ?", id); err != nil {
		return false, err
	}
	return deleteRows(ctx, db, (*CommentReply)(nil), "id = ? AND comment_id = ?", id, commentID)
}

// Replies returns the replies of these comments, oldest first.
func Replies(ctx context.Context, db bun.IDB, commentIDs []string) ([]*CommentReply, error) {
	var rows []*CommentReply
	err := db.NewSelect().Model(&rows).Where("r.comment_id IN (?)", bun.List(commentIDs)).OrderExpr("r.posted_at, r.id").Scan(ctx)
	return rows, translate(err)
}

// Reactions returns the reactions to these comments or replies, oldest first.
func Reactions(ctx context.Context, db bun.IDB, targetIDs []string) ([]*Reaction, error) {
	var rows []*Reaction
	err := db.NewSelect().Model(&rows).Where("x.target_id IN (?)", bun.List(targetIDs)).OrderExpr("x.reacted_at, x.emoji, x.user_id").Scan(ctx)
	return rows, translate(err)
}

// React adds (or, with remove, takes back) userID's emojis on a target.
func React(ctx context.Context, db bun.IDB, targetID, userID string, added, removed []string, now time.Time) error {
	for _, e := range added {
		// The target is a comment or a reply: its organization is the reaction's.
		if _, err := db.NewRaw(`INSERT INTO comment_reactions (organization_id, target_id, user_id, emoji, reacted_at)
			SELECT organization_id, id, ?, ?, ? FROM (SELECT organization_id, id FROM comments WHERE id = ?
				UNION ALL SELECT organization_id, id FROM comment_replies WHERE id = ?) target
			ON CONFLICT DO NOTHING`, userID, e, now, targetID, targetID).Exec(ctx); err != nil {
			return translate(err)
		}
	}
	for _, e := range removed {
		if _, err := deleteRows(ctx, db, (*Reaction)(nil), "target_id = ? AND user_id = ? AND emoji = ?", targetID, userID, e); err != nil {
			return err
		}
	}
	return nil
}

// OpenChangeRequestComments counts the open comments of these change requests.
func OpenChangeRequestComments(ctx context.Context, db bun.IDB, crIDs []string) (map[string]int, error) {
	return countBy(ctx, db, "comments", "change_request_id", "change_request_id IN (?) AND status = 'open'", bun.List(crIDs))
}
