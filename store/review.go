package store

import (
	"context"
	"io"
	"time"

	"github.com/uptrace/bun"
)

// ReviewStatus is a reviewer's verdict: `approved` or `changes-requested`.
// A scalar in GraphQL, since `changes-requested` is not a GraphQL name.
type ReviewStatus string

const (
	ReviewApproved         ReviewStatus = "approved"
	ReviewChangesRequested ReviewStatus = "changes-requested"
)

// AllReviewStatuses lists the verdicts.
var AllReviewStatuses = []ReviewStatus{ReviewApproved, ReviewChangesRequested}

func (s *ReviewStatus) UnmarshalGQL(v any) error {
	return unmarshalEnum(s, v, "ChangeRequestReviewStatus", AllReviewStatuses)
}
func (s ReviewStatus) MarshalGQL(w io.Writer) { marshalEnum(w, s) }

// Review is a reviewer's verdict on a change request at one of its
// revisions. Reviews never change; a newer one supersedes them.
type Review struct {
	bun.BaseModel `bun:"table:change_request_reviews,alias:rv"`

	ID              string       `bun:"id,pk"`
	OrganizationID  string       `bun:"organization_id"`
	ChangeRequestID string       `bun:"change_request_id"`
	ReviewerID      string       `bun:"reviewer_id"`
	RequestedBy     *string      `bun:"requested_by"`
	Status          ReviewStatus `bun:"status"`
	RevisionID      string       `bun:"revision_id"`
	CommentID       *string      `bun:"comment_id"`
	CreatedAt       time.Time    `bun:"created_at"`
	UpdatedAt       time.Time    `bun:"updated_at"`
	Seq             int64        `bun:"seq,scanonly"`
	// Outdated is computed by the reads (reviewOutdated).
	Outdated bool `bun:"outdated,scanonly"`

	// SpaceID is the change request's space, read along.
	SpaceID string `bun:"space_id,scanonly"`
}

// Object is the REST type name of a review.
func (Review) Object() string { return "change-request-review" }

// RequestedReviewer is a pending request for a user's review.
type RequestedReviewer struct {
	bun.BaseModel `bun:"table:change_request_requested_reviewers,alias:rr"`

	ChangeRequestID string    `bun:"change_request_id,pk"`
	UserID          string    `bun:"user_id,pk"`
	OrganizationID  string    `bun:"organization_id"`
	RequestedBy     *string   `bun:"requested_by"`
	RevisionID      string    `bun:"revision_id"`
	CreatedAt       time.Time `bun:"created_at"`
	Seq             int64     `bun:"seq"`
}

// Object is the REST type name of a requested reviewer.
func (RequestedReviewer) Object() string { return "change-request-requested-reviewer" }

// reviewOutdated is true for a review (alias rv) that the change request's
// current revision, a newer review by the same reviewer, or a newer request
// for that reviewer supersedes.
const reviewOutdated = `(rv.revision_id <> (SELECT revision FROM change_requests WHERE id = rv.change_request_id AND organization_id = rv.organization_id)
	OR EXISTS (SELECT 1 FROM change_request_reviews n WHERE n.change_request_id = rv.change_request_id AND n.organization_id = rv.organization_id AND n.reviewer_id = rv.reviewer_id AND n.seq > rv.seq)
	OR EXISTS (SELECT 1 FROM change_request_requested_reviewers q WHERE q.change_request_id = rv.change_request_id AND q.organization_id = rv.organization_id AND q.user_id = rv.reviewer_id AND q.seq > rv.seq))`

func selectReviews(db bun.IDB, model any) *bun.SelectQuery {
	return db.NewSelect().Model(model).ColumnExpr("rv.*").ColumnExpr(reviewOutdated + " AS outdated").
		ColumnExpr("(SELECT space_id FROM change_requests WHERE id = rv.change_request_id AND organization_id = rv.organization_id) AS space_id")
}

// bySeq orders reviews or requests by their seq column col (Keyset.Pos),
// which follows the order they were made in even within one clock tick.
func bySeq(p Page, q *bun.SelectQuery, col string, desc bool) *bun.SelectQuery {
	cmp, dir := ">", "ASC"
	if desc {
		cmp, dir = "<", "DESC"
	}
	if p.After != nil {
		q = q.Where("? "+cmp+" ?", bun.Safe(col), p.After.Pos)
	}
	return q.OrderExpr("? "+dir, bun.Safe(col)).Limit(int64(p.Limit) + 1)
}

// InsertReview adds a review and fulfils the reviewer's pending request,
// whose requester it records. Callers hold the change request's row lock.
func InsertReview(ctx context.Context, tx bun.IDB, rv *Review) error {
	var req RequestedReviewer
	err := tx.NewDelete().Model(&req).Where("change_request_id = ? AND user_id = ?", rv.ChangeRequestID, rv.ReviewerID).
		Returning("requested_by").Scan(ctx)
	switch err = translate(err); {
	case err == nil:
		rv.RequestedBy = req.RequestedBy
	case err != ErrNotFound:
		return err
	}
	if err := inParentOrganization(ctx, tx, &rv.OrganizationID, "change_requests", rv.ChangeRequestID); err != nil {
		return err
	}
	_, err = tx.NewInsert().Model(rv).Returning("seq").Exec(ctx)
	return translate(err)
}

// GetReview returns review id of change request crID.
func GetReview(ctx context.Context, db bun.IDB, orgID, crID, id string) (*Review, error) {
	ctx = inOrganization(ctx, orgID)
	rv := new(Review)
	err := selectReviews(db, rv).Where("rv.organization_id = ? AND rv.change_request_id = ? AND rv.id = ?", orgID, crID, id).Scan(ctx)
	return rv, translate(err)
}

// ListReviews pages through the reviews of change request crID, newest
// first (Keyset.Pos is their seq); outdated, when set, keeps the reviews that are (or are not)
// outdated.
func ListReviews(ctx context.Context, db bun.IDB, orgID, crID string, outdated *bool, p Page) ([]*Review, error) {
	ctx = inOrganization(ctx, orgID)
	var rows []*Review
	q := selectReviews(db, &rows).Where("rv.organization_id = ? AND rv.change_request_id = ?", orgID, crID)
	if outdated != nil {
		q = q.Where(reviewOutdated+" = ?", *outdated)
	}
	err := p.scan(ctx, bySeq(p, q, "rv.seq", true))
	return rows, translate(err)
}

// CurrentReviews returns the reviews of change request crID that are not
// outdated: at most one per reviewer, the verdicts merge rules weigh.
func CurrentReviews(ctx context.Context, db bun.IDB, orgID, crID string) ([]*Review, error) {
	ctx = inOrganization(ctx, orgID)
	var rows []*Review
	err := selectReviews(db, &rows).Where("rv.organization_id = ? AND rv.change_request_id = ? AND NOT "+reviewOutdated, orgID, crID).
		OrderExpr("rv.seq").Scan(ctx)
	return rows, translate(err)
}

// RequestReviewers asks these users for a review of cr at its current
// revision: a new request, or a renewed one (superseding their earlier
// reviews). Callers hold the change request's row lock.
func RequestReviewers(ctx context.Context, tx bun.IDB, cr *ChangeRequest, userIDs []string, by string, at time.Time) ([]*RequestedReviewer, error) {
	rows := make([]*RequestedReviewer, len(userIDs))
	for i, u := range userIDs {
		rows[i] = &RequestedReviewer{ChangeRequestID: cr.ID, UserID: u, OrganizationID: cr.OrganizationID, RequestedBy: &by, RevisionID: cr.Revision, CreatedAt: at}
	}
	if len(rows) == 0 {
		return rows, nil
	}
	// The sequence numbers are drawn first, and written as values: Citus
	// evaluates no volatile function (nextval) in an upsert's DO UPDATE of a
	// distributed table.
	var seqs []int64
	if err := tx.NewRaw("SELECT nextval('change_request_review_seq') FROM generate_series(1, ?)", len(rows)).Scan(ctx, &seqs); err != nil {
		return nil, translate(err)
	}
	for i := range rows {
		rows[i].Seq = seqs[i]
	}
	_, err := tx.NewInsert().Model(&rows).
		On("CONFLICT (change_request_id, user_id, organization_id) DO UPDATE").
		Set("requested_by = EXCLUDED.requested_by, revision_id = EXCLUDED.revision_id, created_at = EXCLUDED.created_at, seq = EXCLUDED.seq").
		Exec(ctx)
	return rows, translate(err)
}

// ListRequestedReviewers pages through the pending requests of change
// request crID, oldest first (Keyset.Pos is their seq).
func ListRequestedReviewers(ctx context.Context, db bun.IDB, orgID, crID string, p Page) ([]*RequestedReviewer, error) {
	ctx = inOrganization(ctx, orgID)
	var rows []*RequestedReviewer
	q := db.NewSelect().Model(&rows).Where("rr.organization_id = ? AND rr.change_request_id = ?", orgID, crID)
	err := p.scan(ctx, bySeq(p, q, "rr.seq", false))
	return rows, translate(err)
}

// RemoveRequestedReviewer withdraws the request for userID's review; false
// when there was none.
func RemoveRequestedReviewer(ctx context.Context, db bun.IDB, orgID, crID, userID string) (bool, error) {
	return deleteRows(ctx, db, (*RequestedReviewer)(nil), "organization_id = ? AND change_request_id = ? AND user_id = ?", orgID, crID, userID)
}
