package store

import (
	"context"
	"io"
	"time"

	"github.com/uptrace/bun"
)

// Translation keeps a source space translated into another language, in a
// result space that its runs create and then update.
type Translation struct {
	bun.BaseModel `bun:"table:translations,alias:tr"`

	ID               string            `bun:"id,pk"`
	OrganizationID   string            `bun:"organization_id"`
	SourceSpaceID    string            `bun:"source_space_id"`
	SourceLanguage   Language          `bun:"source_language"`
	Language         Language          `bun:"language"`
	Instructions     map[string]any    `bun:"instructions,type:jsonb"`
	Status           TranslationStatus `bun:"status"`
	StatusMessage    *string           `bun:"status_message"`
	RunStartedAt     *time.Time        `bun:"run_started_at"`
	ResultSpaceID    *string           `bun:"result_space_id"`
	ResultRevisionID *string           `bun:"result_revision_id"`
	Runs             int               `bun:"runs"`
	TotalWords       int               `bun:"total_words"`
	TranslatedPages  []string          `bun:"translated_pages,array"`
	TotalDuration    int               `bun:"total_duration"`
	LatestDuration   int               `bun:"latest_duration"`
	LatestPages      int               `bun:"latest_pages"`
	LatestWords      int               `bun:"latest_words"`
	CreatedAt        time.Time         `bun:"created_at"`
	UpdatedAt        time.Time         `bun:"updated_at"`
}

// Object is the REST type name of a translation.
func (Translation) Object() string { return "translation" }

// TranslationStatus is where a translation's runs are.
type TranslationStatus string

const (
	TranslationPending   TranslationStatus = "pending"
	TranslationRunning   TranslationStatus = "running"
	TranslationCompleted TranslationStatus = "completed"
	TranslationFailed    TranslationStatus = "failed"
)

// AllTranslationStatuses lists the states of a translation.
var AllTranslationStatuses = []TranslationStatus{TranslationPending, TranslationRunning, TranslationCompleted, TranslationFailed}

func (s *TranslationStatus) UnmarshalGQL(x any) error {
	return unmarshalEnum(s, x, "TranslationStatus", AllTranslationStatuses)
}
func (s TranslationStatus) MarshalGQL(w io.Writer) { marshalEnum(w, s) }

// CreateTranslation inserts t.
func CreateTranslation(ctx context.Context, db bun.IDB, t *Translation) error {
	_, err := db.NewInsert().Model(t).Exec(ctx)
	return translate(err)
}

// GetTranslation returns translation id of orgID.
func GetTranslation(ctx context.Context, db bun.IDB, orgID, id string) (*Translation, error) {
	ctx = inOrganization(ctx, orgID)
	t := new(Translation)
	err := db.NewSelect().Model(t).Where("tr.organization_id = ? AND tr.id = ?", orgID, id).Scan(ctx)
	return t, translate(err)
}

// ListTranslations pages through the translations of an organization,
// oldest first.
func ListTranslations(ctx context.Context, db bun.IDB, orgID string, p Page) ([]*Translation, error) {
	ctx = inOrganization(ctx, orgID)
	var rows []*Translation
	q := db.NewSelect().Model(&rows).Where("tr.organization_id = ?", orgID)
	err := p.scan(ctx, p.byTime(q, "tr.created_at", "tr.id", false))
	return rows, translate(err)
}

// UpdateTranslation writes the given columns of t.
func UpdateTranslation(ctx context.Context, db bun.IDB, t *Translation, columns ...string) error {
	_, err := byKey(db, db.NewUpdate().Model(t).Column(columns...), t).Exec(ctx)
	return translate(err)
}

// DeleteTranslation removes translation id of orgID; false when there was
// none. The result space stays: it is content people may have edited.
func DeleteTranslation(ctx context.Context, db bun.IDB, orgID, id string) (bool, error) {
	return deleteRows(ctx, db, (*Translation)(nil), "organization_id = ? AND id = ?", orgID, id)
}

// ClaimTranslation moves translation id from pending to running and returns
// it; ErrNotFound when it is not pending (another job took it, or it is gone).
func ClaimTranslation(ctx context.Context, db bun.IDB, id string, now time.Time) (*Translation, error) {
	t := new(Translation)
	err := db.NewUpdate().Model(t).
		Set("status = ?", TranslationRunning).Set("run_started_at = ?", now).Set("status_message = NULL").
		Where("id = ? AND status = ?", id, TranslationPending).
		Returning("*").Scan(ctx)
	return t, translate(err)
}

// UnfinishedTranslations are the translations a sweep enqueues again: pending
// since before pendingBefore (their enqueue failed), or running since before
// stuckBefore (their job died; they are made pending again).
func UnfinishedTranslations(ctx context.Context, db bun.IDB, pendingBefore, stuckBefore time.Time) ([]string, error) {
	var ids []string
	err := db.NewRaw(`UPDATE translations SET status = 'pending'
		WHERE (status = 'pending' AND updated_at < ?) OR (status = 'running' AND run_started_at < ?)
		RETURNING id`, pendingBefore, stuckBefore).Scan(ctx, &ids)
	return ids, translate(err)
}
