package store

import (
	"context"
	"slices"
	"time"

	"github.com/uptrace/bun"
)

// Space is a container of documentation content.
type Space struct {
	bun.BaseModel `bun:"table:spaces"`

	ID             string            `bun:"id,pk"`
	OrganizationID string            `bun:"organization_id"`
	Title          string            `bun:"title"`
	Emoji          string            `bun:"emoji"`
	Icon           *string           `bun:"icon"`
	Visibility     ContentVisibility `bun:"visibility"`
	EditMode       SpaceEditMode     `bun:"edit_mode"`
	MergeRules     MergeRules        `bun:"merge_rules,type:jsonb"`
	Language       *Language         `bun:"language"`
	// DefaultLevel is nil for "guest".
	DefaultLevel *DefaultLevel `bun:"default_level"`
	ParentID     *string       `bun:"parent_id"`
	// Position orders the space among the children of its parent collection
	// (or of the organization's root).
	Position   int        `bun:"position"`
	RevisionID string     `bun:"revision_id"`
	CreatedBy  *string    `bun:"created_by"`
	CreatedAt  time.Time  `bun:"created_at"`
	UpdatedAt  time.Time  `bun:"updated_at"`
	DeletedAt  *time.Time `bun:"deleted_at"`
	// GitInfo is the space's last git sync.
	GitInfo *GitInfo `bun:"git_info,type:jsonb"`

	// Counts shown on the space, kept exact by triggers (migration 0025):
	// its open comments (on its own content, not on change requests) and
	// its open and draft change requests. The database ignores what the
	// application writes to them.
	OpenComments        int `bun:"open_comments"`
	ChangeRequestsOpen  int `bun:"change_requests_open"`
	ChangeRequestsDraft int `bun:"change_requests_draft"`
}

// spaceCounts are the columns of the counts, read back after writes.
const spaceCounts = "open_comments, change_requests_open, change_requests_draft"

// ChangeRequests counts the space's change requests that are open or drafts.
func (s *Space) ChangeRequests() int { return s.ChangeRequestsOpen + s.ChangeRequestsDraft }

// GitInfo is what is known of a space's git repository.
type GitInfo struct {
	// URL is the repository's, without credentials.
	URL       string    `json:"url"`
	Ref       string    `json:"ref"`
	RepoName  string    `json:"repoName,omitempty"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// Object is the REST type name of a space.
func (Space) Object() string { return "space" }

// CreateSpace inserts s with its first revision, holding content (none for
// a new space; a copy's for a duplicate). s.RevisionID names the revision.
func CreateSpace(ctx context.Context, db bun.IDB, s *Space, content Content) error {
	return RunInTx(ctx, db, func(ctx context.Context, tx bun.Tx) error {
		// A new space's counts start at zero whatever s holds (a duplicate's
		// are its original's): read them back.
		if _, err := tx.NewInsert().Model(s).Returning(spaceCounts).Exec(ctx); err != nil {
			return translate(err)
		}
		rev := NewEmptyRevision(s.ID, s.CreatedBy, s.CreatedAt)
		rev.ID = s.RevisionID
		return CreateRevision(ctx, tx, rev, content)
	})
}

// GetSpace returns space id, deleted or not, from its organization's
// shard (the directory knows which).
func GetSpace(ctx context.Context, db bun.IDB, id string) (*Space, error) {
	rows, err := readByIDs(ctx, db, "spaces", []string{id}, spaceID, func(ctx context.Context, db bun.IDB, org string, ids []string) ([]*Space, error) {
		return selectRows[Space](ctx, db, "space.organization_id = ? AND space.id = ?", "", org, id)
	})
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, ErrNotFound
	}
	return rows[0], nil
}

// SpacesByIDs returns the spaces with these ids that are not deleted, each
// read in its organization. The ids may repeat (a space published twice in
// a site): each space is read once.
func SpacesByIDs(ctx context.Context, db bun.IDB, ids []string) ([]*Space, error) {
	return readByIDs(ctx, db, "spaces", slices.Compact(slices.Sorted(slices.Values(ids))), spaceID, spacesOf)
}

// spacesOf reads the live spaces of orgID with these ids.
func spacesOf(ctx context.Context, db bun.IDB, orgID string, ids []string) ([]*Space, error) {
	return selectRows[Space](ctx, db, "space.organization_id = ? AND "+idIn("space.id", ids)+" AND space.deleted_at IS NULL", "", orgID, ids)
}

func spaceID(s *Space) string { return s.ID }

// ListSpaces pages through the live spaces of an organization.
// Oldest first, or newest first with desc.
func ListSpaces(ctx context.Context, db bun.IDB, orgID string, p Page, desc bool) ([]*Space, error) {
	ctx = inOrganization(ctx, orgID)
	var spaces []*Space
	q := db.NewSelect().Model(&spaces).Where("organization_id = ? AND deleted_at IS NULL", orgID)
	err := p.scan(ctx, p.byTime(q, "space.created_at", "space.id", desc))
	return spaces, translate(err)
}

// UpdateSpace writes the given columns of s (never its counts: the database
// keeps those).
//
// A space gone since it was read (the purge job removes spaces deleted past
// their retention) is ErrNotFound: a restore that lost that race must not
// be answered as done.
func UpdateSpace(ctx context.Context, db bun.IDB, s *Space, columns ...string) error {
	res, err := byKey(db, db.NewUpdate().Model(s).Column(append(columns, "updated_at")...), s).Exec(ctx)
	if err != nil {
		return translate(err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return ErrNotFound
	}
	if err := spaceChanged(ctx, db, s.OrganizationID, s.ID); err != nil {
		return err
	}
	if slices.ContainsFunc(columns, func(c string) bool {
		return c == "parent_id" || c == "default_level" || c == "visibility" || c == "deleted_at"
	}) {
		return AccessChanged(ctx, db, s.OrganizationID)
	}
	return nil
}

// PurgeSpacesDeletedBefore removes for good the spaces deleted before t, with
// everything that belongs to them (the foreign keys cascade).
func PurgeSpacesDeletedBefore(ctx context.Context, db bun.IDB, t time.Time) (int64, error) {
	var orgs []string
	err := RunInTx(ctx, db, func(ctx context.Context, tx bun.Tx) error {
		err := tx.NewDelete().Model((*Space)(nil)).Where("deleted_at < ?", t).Returning("organization_id").Scan(ctx, &orgs)
		if err != nil {
			return err
		}
		// Their grants went with them.
		for _, org := range slices.Compact(slices.Sorted(slices.Values(orgs))) {
			if err := AccessChanged(ctx, tx, org); err != nil {
				return err
			}
		}
		return nil
	})
	return int64(len(orgs)), translate(err)
}
