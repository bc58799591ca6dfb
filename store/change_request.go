package store

import (
	"context"
	"encoding/json"
	"time"

	"github.com/uptrace/bun"
)

// ChangeRequest is a branch of a space's content, reviewed and merged.
type ChangeRequest struct {
	bun.BaseModel `bun:"table:change_requests,alias:cr"`

	ID                     string          `bun:"id,pk"`
	OrganizationID         string          `bun:"organization_id"`
	SpaceID                string          `bun:"space_id"`
	Number                 int             `bun:"number"`
	Status                 string          `bun:"status"`
	Subject                string          `bun:"subject"`
	Description            json.RawMessage `bun:"description,type:jsonb"`
	CreatedBy              *string         `bun:"created_by"`
	CreatedAt              time.Time       `bun:"created_at"`
	UpdatedAt              time.Time       `bun:"updated_at"`
	RevisionInitial        string          `bun:"revision_initial"`
	Revision               string          `bun:"revision"`
	RevisionMergedAncestor *string         `bun:"revision_merged_ancestor"`
	RevisionMerged         *string         `bun:"revision_merged"`
	// ClusterID is the conversations issues cluster it was made for.
	ClusterID *string `bun:"conversations_issues_cluster_id"`
}

// Object is the REST type name of a change request.
func (ChangeRequest) Object() string { return "change-request" }

// Base is the main revision the change request's changes are measured
// against: the one it was last brought up to date with, or its start.
func (cr *ChangeRequest) Base() string {
	if cr.RevisionMergedAncestor != nil {
		return *cr.RevisionMergedAncestor
	}
	return cr.RevisionInitial
}

// Change request statuses.
const (
	CRDraft    = "draft"
	CROpen     = "open"
	CRArchived = "archived"
	CRMerged   = "merged"
)

// NextChangeRequestNumber is the number of the space's next change request.
// Callers hold the space's row lock.
func NextChangeRequestNumber(ctx context.Context, tx bun.IDB, orgID, spaceID string) (int, error) {
	var n int
	err := tx.NewRaw("SELECT COALESCE(max(number), 0) + 1 FROM change_requests WHERE organization_id = ? AND space_id = ?", orgID, spaceID).Scan(ctx, &n)
	return n, translate(err)
}

// CreateChangeRequest inserts cr, in its space's organization.
func CreateChangeRequest(ctx context.Context, db bun.IDB, cr *ChangeRequest) error {
	if err := inParentOrganization(ctx, db, &cr.OrganizationID, "spaces", cr.SpaceID); err != nil {
		return err
	}
	_, err := db.NewInsert().Model(cr).Exec(ctx)
	return translate(err)
}

// GetChangeRequest returns the change request of space s with this id, or
// with this number when ref is one.
func GetChangeRequest(ctx context.Context, db bun.IDB, s *Space, ref string) (*ChangeRequest, error) {
	ctx = inOrganization(ctx, s.OrganizationID)
	cr := new(ChangeRequest)
	err := db.NewSelect().Model(cr).Where("cr.organization_id = ? AND cr.space_id = ? AND (cr.id = ? OR cr.number::text = ?)", s.OrganizationID, s.ID, ref, ref).
		OrderExpr("cr.id = ? DESC", ref).Limit(1).Scan(ctx)
	return cr, translate(err)
}

// LockChangeRequest reads change request id of space s for update.
func LockChangeRequest(ctx context.Context, tx bun.Tx, s *Space, id string) (*ChangeRequest, error) {
	cr := new(ChangeRequest)
	err := tx.NewSelect().Model(cr).Where("cr.organization_id = ? AND cr.space_id = ? AND cr.id = ?", s.OrganizationID, s.ID, id).
		For("NO KEY UPDATE").Scan(ctx)
	return cr, translate(err)
}

// UpdateChangeRequest writes the given columns of cr.
func UpdateChangeRequest(ctx context.Context, db bun.IDB, cr *ChangeRequest, columns ...string) error {
	_, err := byKey(db, db.NewUpdate().Model(cr).Column(append(columns, "updated_at")...), cr).Exec(ctx)
	return translate(err)
}

// AddContributor records that userID edited the change request.
func AddContributor(ctx context.Context, db bun.IDB, orgID, crID, userID string) error {
	_, err := db.NewRaw(`INSERT INTO change_request_contributors (organization_id, change_request_id, user_id)
		SELECT organization_id, id, ? FROM change_requests WHERE organization_id = ? AND id = ? ON CONFLICT DO NOTHING`, userID, orgID, crID).Exec(ctx)
	return translate(err)
}

// ChangeRequestFilter narrows a list of change requests.
type ChangeRequestFilter struct {
	Status      string // "" for any
	Creator     *string
	Contributor *string
	// RequestedReviewer keeps the change requests awaiting this user's review.
	RequestedReviewer *string
	// Cluster keeps the change requests made for this conversations issues cluster.
	Cluster *string
}

// ListChangeRequests pages through the change requests of these spaces,
// newest first.
func ListChangeRequests(ctx context.Context, db bun.IDB, orgID string, spaceIDs []string, f ChangeRequestFilter, p Page) ([]*ChangeRequest, error) {
	ctx = inOrganization(ctx, orgID)
	var rows []*ChangeRequest
	if len(spaceIDs) == 0 {
		return rows, nil
	}
	q := db.NewSelect().Model(&rows).Where("cr.organization_id = ? AND cr.space_id IN (?)", orgID, bun.List(spaceIDs))
	if f.Status != "" {
		q = q.Where("cr.status = ?", f.Status)
	}
	if f.Creator != nil {
		q = q.Where("cr.created_by = ?", *f.Creator)
	}
	if f.Contributor != nil {
		q = q.Where("EXISTS (SELECT 1 FROM change_request_contributors AS c WHERE c.change_request_id = cr.id AND c.organization_id = cr.organization_id AND c.user_id = ?)", *f.Contributor)
	}
	if f.Cluster != nil {
		q = q.Where("cr.conversations_issues_cluster_id = ?", *f.Cluster)
	}
	if f.RequestedReviewer != nil {
		q = q.Where("EXISTS (SELECT 1 FROM change_request_requested_reviewers AS q WHERE q.change_request_id = cr.id AND q.organization_id = cr.organization_id AND q.user_id = ?)", *f.RequestedReviewer)
	}
	err := p.scan(ctx, p.byTime(q, "cr.created_at", "cr.id", true))
	return rows, translate(err)
}
