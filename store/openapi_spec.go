package store

import (
	"context"
	"io"
	"time"

	"github.com/uptrace/bun"
)

// OpenAPISpec is an OpenAPI specification an organization keeps up to date
// from a source, a URL or a text (exactly one is set); the background job
// fills in the processing fields.
type OpenAPISpec struct {
	bun.BaseModel `bun:"table:openapi_specs,alias:oas"`

	ID             string  `bun:"id,pk"`
	OrganizationID string  `bun:"organization_id"`
	Slug           string  `bun:"slug"`
	SourceURL      *string `bun:"source_url"`
	// SourceText is the document of a spec published from a text. Reads
	// leave it out (it may be large); ClaimOpenAPISpec, for the job, reads
	// it.
	SourceText          *string               `bun:"source_text"`
	Visibility          OpenAPISpecVisibility `bun:"visibility"`
	ProcessingState     OpenAPIProcessing     `bun:"processing_state"`
	Generation          int                   `bun:"generation"`
	ProcessingStartedAt *time.Time            `bun:"processing_started_at"`
	LastVersionID       *string               `bun:"last_version_id"`
	LastProcessedAt     *time.Time            `bun:"last_processed_at"`
	LastErrorCode       *OpenAPIErrorCode     `bun:"last_error_code"`
	LastErrors          []OpenAPIProcessError `bun:"last_errors,type:jsonb"`
	CreatedAt           time.Time             `bun:"created_at"`
	UpdatedAt           time.Time             `bun:"updated_at"`
}

// Object is the REST type name of a spec.
func (OpenAPISpec) Object() string { return "openapi-spec" }

// OpenAPIProcessError is one problem the last processing found.
type OpenAPIProcessError struct {
	Message string  `json:"message"`
	Code    *string `json:"code,omitempty"`
}

// OpenAPISpecVisibility: private specs are for the organization; public ones
// are served to anyone at their published address.
type OpenAPISpecVisibility string

const (
	OpenAPIPrivate OpenAPISpecVisibility = "private"
	OpenAPIPublic  OpenAPISpecVisibility = "public"
)

// AllOpenAPISpecVisibilities lists the visibilities of a spec.
var AllOpenAPISpecVisibilities = []OpenAPISpecVisibility{OpenAPIPrivate, OpenAPIPublic}

func (v *OpenAPISpecVisibility) UnmarshalGQL(x any) error {
	return unmarshalEnum(v, x, "OpenAPISpecVisibility", AllOpenAPISpecVisibilities)
}
func (v OpenAPISpecVisibility) MarshalGQL(w io.Writer) { marshalEnum(w, v) }

// OpenAPIProcessing is where a spec is in its processing: pending (a job is
// due), progress (a job is fetching it), complete (done, successfully or not:
// LastErrorCode tells).
type OpenAPIProcessing string

const (
	OpenAPIPending  OpenAPIProcessing = "pending"
	OpenAPIProgress OpenAPIProcessing = "progress"
	OpenAPIComplete OpenAPIProcessing = "complete"
)

// AllOpenAPIProcessingStates lists the processing states of a spec.
var AllOpenAPIProcessingStates = []OpenAPIProcessing{OpenAPIPending, OpenAPIProgress, OpenAPIComplete}

func (p *OpenAPIProcessing) UnmarshalGQL(x any) error {
	return unmarshalEnum(p, x, "OpenAPISpecProcessingState", AllOpenAPIProcessingStates)
}
func (p OpenAPIProcessing) MarshalGQL(w io.Writer) { marshalEnum(w, p) }

// OpenAPIErrorCode classifies a failed processing.
type OpenAPIErrorCode string

const (
	// OpenAPIFetchTimeout: the source (or a file it refers to) took too long.
	OpenAPIFetchTimeout OpenAPIErrorCode = "FETCH_TIMEOUT"
	// OpenAPIFetchError: the source could not be fetched (refused address,
	// unreachable, error status, too large).
	OpenAPIFetchError OpenAPIErrorCode = "FETCH_ERROR"
	// OpenAPIParseError: not a valid OpenAPI or Swagger document.
	OpenAPIParseError OpenAPIErrorCode = "PARSE_ERROR"
)

// AllOpenAPIErrorCodes lists the classes of failed processing.
var AllOpenAPIErrorCodes = []OpenAPIErrorCode{OpenAPIFetchTimeout, OpenAPIFetchError, OpenAPIParseError}

func (c *OpenAPIErrorCode) UnmarshalGQL(x any) error {
	return unmarshalEnum(c, x, "OpenAPISpecProcessingErrorCode", AllOpenAPIErrorCodes)
}
func (c OpenAPIErrorCode) MarshalGQL(w io.Writer) { marshalEnum(w, c) }

// OpenAPISpecVersion is one distinct content of a spec.
type OpenAPISpecVersion struct {
	bun.BaseModel `bun:"table:openapi_spec_versions,alias:oasv"`

	ID             string            `bun:"id,pk"`
	OrganizationID string            `bun:"organization_id"`
	SpecID         string            `bun:"spec_id"`
	Digest         string            `bun:"digest"`
	Document       []byte            `bun:"document"`
	ContentType    string            `bun:"content_type"`
	Entry          string            `bun:"entry"`
	Files          map[string]string `bun:"files,type:jsonb"`
	CreatedAt      time.Time         `bun:"created_at"`

	// Spec is the spec the version was read through (its addresses name
	// the spec's organization and slug); not a column.
	Spec *OpenAPISpec `bun:"-"`
}

// Object is the REST type name of a version.
func (OpenAPISpecVersion) Object() string { return "openapi-spec-version" }

// CreateOpenAPISpec inserts s; a second spec with the same slug in the
// organization is ErrConflict.
func CreateOpenAPISpec(ctx context.Context, db bun.IDB, s *OpenAPISpec) error {
	_, err := db.NewInsert().Model(s).Exec(ctx)
	return translate(err)
}

// CreateOpenAPISpecIfMissing inserts s unless the organization has a spec
// with its slug; it reports whether it did.
func CreateOpenAPISpecIfMissing(ctx context.Context, db bun.IDB, s *OpenAPISpec) (bool, error) {
	res, err := db.NewInsert().Model(s).On("CONFLICT (organization_id, slug) DO NOTHING").Exec(ctx)
	if err != nil {
		return false, translate(err)
	}
	n, err := res.RowsAffected()
	return n > 0, translate(err)
}

// GetOpenAPISpec returns the spec of orgID with slug.
func GetOpenAPISpec(ctx context.Context, db bun.IDB, orgID, slug string) (*OpenAPISpec, error) {
	ctx = inOrganization(ctx, orgID)
	s := new(OpenAPISpec)
	err := db.NewSelect().Model(s).ExcludeColumn("source_text").Where("oas.organization_id = ? AND oas.slug = ?", orgID, slug).Scan(ctx)
	return s, translate(err)
}

// LockOpenAPISpec reads spec id of orgID for update, in tx.
func LockOpenAPISpec(ctx context.Context, tx bun.Tx, orgID, id string) (*OpenAPISpec, error) {
	s := new(OpenAPISpec)
	err := tx.NewSelect().Model(s).ExcludeColumn("source_text").Where("oas.organization_id = ? AND oas.id = ?", orgID, id).For("NO KEY UPDATE").Scan(ctx)
	return s, translate(err)
}

// ListOpenAPISpecs pages through the specs of an organization, oldest first.
func ListOpenAPISpecs(ctx context.Context, db bun.IDB, orgID string, p Page) ([]*OpenAPISpec, error) {
	ctx = inOrganization(ctx, orgID)
	var rows []*OpenAPISpec
	q := db.NewSelect().Model(&rows).ExcludeColumn("source_text").Where("oas.organization_id = ?", orgID)
	err := p.scan(ctx, p.byTime(q, "oas.created_at", "oas.id", false))
	return rows, translate(err)
}

// UpdateOpenAPISpec writes the given columns of s.
func UpdateOpenAPISpec(ctx context.Context, db bun.IDB, s *OpenAPISpec, columns ...string) error {
	_, err := byKey(db, db.NewUpdate().Model(s).Column(columns...), s).Exec(ctx)
	return translate(err)
}

// DeleteOpenAPISpec removes the spec of orgID with slug, and its versions;
// false when there was none.
func DeleteOpenAPISpec(ctx context.Context, db bun.IDB, orgID, slug string) (bool, error) {
	return deleteRows(ctx, db, (*OpenAPISpec)(nil), "organization_id = ? AND slug = ?", orgID, slug)
}

// ClaimOpenAPISpec moves spec id from pending to progress and returns it;
// ErrNotFound when it is not pending (another job took it, or it is gone).
func ClaimOpenAPISpec(ctx context.Context, db bun.IDB, id string, now time.Time) (*OpenAPISpec, error) {
	s := new(OpenAPISpec)
	err := db.NewUpdate().Model(s).
		Set("processing_state = ?", OpenAPIProgress).Set("processing_started_at = ?", now).
		Where("id = ? AND processing_state = ?", id, OpenAPIPending).
		Returning("*").Scan(ctx)
	return s, translate(err)
}

// UnfinishedOpenAPISpecs returns the specs a job should (re)process: pending
// since before pendingBefore, or in progress since before stuckBefore (their
// job died), which it puts back to pending.
func UnfinishedOpenAPISpecs(ctx context.Context, db bun.IDB, pendingBefore, stuckBefore time.Time) ([]string, error) {
	var ids []string
	err := RunInTx(ctx, db, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.NewUpdate().Model((*OpenAPISpec)(nil)).
			Set("processing_state = ?", OpenAPIPending).
			Where("processing_state = ? AND processing_started_at < ?", OpenAPIProgress, stuckBefore).Exec(ctx); err != nil {
			return err
		}
		return tx.NewSelect().Model((*OpenAPISpec)(nil)).Column("id").
			Where("processing_state = ? AND (updated_at < ? OR processing_started_at < ?)", OpenAPIPending, pendingBefore, stuckBefore).
			OrderExpr("updated_at").Limit(1000).Scan(ctx, &ids)
	})
	return ids, translate(err)
}

// CreateOpenAPISpecVersion inserts v, in its spec's organization.
func CreateOpenAPISpecVersion(ctx context.Context, db bun.IDB, v *OpenAPISpecVersion) error {
	if err := inParentOrganization(ctx, db, &v.OrganizationID, "openapi_specs", v.SpecID); err != nil {
		return err
	}
	_, err := db.NewInsert().Model(v).Exec(ctx)
	return translate(err)
}

// GetOpenAPISpecVersion returns version id of specID.
func GetOpenAPISpecVersion(ctx context.Context, db bun.IDB, specID, id string) (*OpenAPISpecVersion, error) {
	v := new(OpenAPISpecVersion)
	err := db.NewSelect().Model(v).Where("oasv.spec_id = ? AND oasv.id = ?", specID, id).Scan(ctx)
	return v, translate(err)
}

// GetOpenAPISpecVersionByID returns version id, whatever its spec.
func GetOpenAPISpecVersionByID(ctx context.Context, db bun.IDB, id string) (*OpenAPISpecVersion, error) {
	v := new(OpenAPISpecVersion)
	err := db.NewSelect().Model(v).Where("oasv.id = ?", id).Scan(ctx)
	return v, translate(err)
}

// GetOpenAPISpecByID returns spec id, whatever its organization.
func GetOpenAPISpecByID(ctx context.Context, db bun.IDB, id string) (*OpenAPISpec, error) {
	s := new(OpenAPISpec)
	err := db.NewSelect().Model(s).ExcludeColumn("source_text").Where("oas.id = ?", id).Scan(ctx)
	return s, translate(err)
}

// ListOpenAPISpecVersions pages through the versions of a spec, newest first.
// The (large) document and files are not read.
func ListOpenAPISpecVersions(ctx context.Context, db bun.IDB, specID string, p Page) ([]*OpenAPISpecVersion, error) {
	var rows []*OpenAPISpecVersion
	q := db.NewSelect().Model(&rows).Column("id", "spec_id", "digest", "content_type", "entry", "created_at").
		Where("oasv.spec_id = ?", specID)
	err := p.scan(ctx, p.byTime(q, "oasv.created_at", "oasv.id", true))
	return rows, translate(err)
}
