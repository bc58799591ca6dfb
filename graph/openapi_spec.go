package graph

import (
	"bytes"
	"context"
	"errors"
	"net/url"
	"regexp"
	"strconv"
	"time"

	"github.com/uptrace/bun"

	"github.com/docsapi/docsapi/graph/generated"
	"github.com/docsapi/docsapi/graph/model"
	"github.com/docsapi/docsapi/store"
)

// OpenAPI specifications. A spec's source is a URL, or a text given with
// it (GitBook's OpenAPISpecSource, which its CLI sends to publish a file);
// creating it or putting a source marks it pending and, after the commit,
// enqueues a job (ProcessOpenAPISpec, openapi_spec_process.go) that fetches
// the URL or takes the text, validates and bundles it and keeps a version
// when the content changed. A spec from a text has no sourceURL; it keeps
// its text as its source, and a put (of the same text or another) processes
// it again, as a put of a URL fetches it again. A periodic
// sweep re-enqueues specs left pending (an enqueue that failed, a worker
// that died). Readers of the organization read specs; the create role and
// above (who may create content) change them. Versions' bundled documents
// are served by this server at signed addresses (RawOpenAPIPath), and those
// of public specs at a stable published address (PublishedOpenAPIPath).

// openAPISlug is the pattern of a specification's slug: words of letters and
// digits joined by single dashes.
var openAPISlug = regexp.MustCompile(`^[a-zA-Z0-9]+(?:-[a-zA-Z0-9]+)*$`)

const (
	maxOpenAPISlug = 100
	maxSourceURL   = 2048
	// latestVersion names the newest version in version paths.
	latestVersion = "latest"
)

const (
	// RawOpenAPIPath serves a version's bundled document at a signed
	// address: /openapi/versions/{versionId}?expires=&signature=.
	RawOpenAPIPath = "/openapi/versions/"
	// PublishedOpenAPIPath serves the newest version of a public spec to
	// anyone: /openapi/published/{specId}.
	PublishedOpenAPIPath = "/openapi/published/"
)

func (r *organizationResolver) OpenAPISpecs(ctx context.Context, o *store.Organization, page *string, limit *int, _ *int, _ *string) (*model.OpenAPISpecList, error) {
	// SECURITY: the organization's readers see its specs.
	if err := requireContentRole(ctx, o.ID, store.RoleRead, "organization"); err != nil {
		return nil, err
	}
	return paginate(page, limit, listQuery[*store.OpenAPISpec]{
		read: func(p store.Page) ([]*store.OpenAPISpec, error) { return store.ListOpenAPISpecs(ctx, r.DB, o.ID, p) },
		key:  func(s *store.OpenAPISpec) store.Keyset { return store.Keyset{Time: s.CreatedAt, ID: s.ID} },
	})
}

func (r *organizationResolver) OpenAPISpec(ctx context.Context, o *store.Organization, slug string) (*store.OpenAPISpec, error) {
	// SECURITY: the organization's readers see its specs.
	if err := requireContentRole(ctx, o.ID, store.RoleRead, "OpenAPI specification"); err != nil {
		return nil, err
	}
	return r.openAPISpec(ctx, o.ID, slug)
}

func (r *Resolver) openAPISpec(ctx context.Context, orgID, slug string) (*store.OpenAPISpec, error) {
	s, err := store.GetOpenAPISpec(ctx, r.DB, orgID, slug)
	return s, orNotFound(err, "OpenAPI specification")
}

// checkOpenAPISource checks a source: an absolute http(s) URL, or a
// text no larger than a fetched document may be. Whether a URL's host may
// be reached is the outbound client's decision, at fetch time, where the
// answer is recorded on the spec; whether a text is an OpenAPI document is
// the job's, as for a fetched one.
func (r *Resolver) checkOpenAPISource(source *model.OpenAPISpecSourceInput) (url, text *string, err error) {
	const forms = `{"url": "https://..."} or {"text": "<the document>"}`
	if source == nil {
		return nil, nil, Invalid("source", "is required: %s", forms)
	}
	u, _ := source.URL.ValueOK()
	t, _ := source.Text.ValueOK()
	switch {
	case u != nil && t != nil:
		return nil, nil, Invalid("source", "is a URL or a text, not both: %s", forms)
	case u != nil:
		if err := checkURL("source.url", *u, maxSourceURL); err != nil {
			return nil, nil, err
		}
		return u, nil, nil
	case t != nil:
		if *t == "" {
			return nil, nil, Invalid("source.text", "must not be empty")
		}
		// The limit of a fetched document (DOCSAPI_OUTBOUND_MAX_BYTES).
		if max := r.outbound().MaxBytes(); int64(len(*t)) > max {
			return nil, nil, OverLimit("source.text", "is larger than the %d bytes a specification may have", max)
		}
		return nil, t, nil
	}
	return nil, nil, Invalid("source", "is required: %s", forms)
}

func (r *mutationResolver) CreateOpenAPISpec(ctx context.Context, orgID string, input model.CreateOpenAPISpecInput) (*store.OpenAPISpec, error) {
	// SECURITY: those who may create content create specs.
	if err := requireContentRole(ctx, orgID, store.RoleCreate, "organization"); err != nil {
		return nil, err
	}
	if err := checkLength("slug", input.Slug, 1, maxOpenAPISlug); err != nil {
		return nil, err
	}
	if err := checkPattern("slug", input.Slug, openAPISlug, "letters and digits, in words separated by single dashes"); err != nil {
		return nil, err
	}
	srcURL, srcText, err := r.checkOpenAPISource(input.Source)
	if err != nil {
		return nil, err
	}
	now := r.now()
	s := &store.OpenAPISpec{ID: store.NewID(), OrganizationID: orgID, Slug: input.Slug, SourceURL: srcURL, SourceText: srcText,
		Visibility: store.OpenAPIPrivate, ProcessingState: store.OpenAPIPending, Generation: 1,
		LastErrors: []store.OpenAPIProcessError{}, CreatedAt: now, UpdatedAt: now}
	if err := store.CreateOpenAPISpec(ctx, r.DB, s); errors.Is(err, store.ErrConflict) {
		return nil, Conflict("an OpenAPI specification with the slug %q already exists", input.Slug)
	} else if err != nil {
		return nil, err
	}
	r.enqueue(ctx, ProcessOpenAPISpecArgs{SpecID: s.ID})
	return s, nil
}

func (r *mutationResolver) PutOpenAPISpec(ctx context.Context, orgID, slug string, input model.PutOpenAPISpecInput) (*model.PutOpenAPISpecResult, error) {
	// SECURITY: those who may create content create and change specs.
	if err := requireContentRole(ctx, orgID, store.RoleCreate, "organization"); err != nil {
		return nil, err
	}
	if err := checkLength("specSlug", slug, 1, maxOpenAPISlug); err != nil {
		return nil, err
	}
	if err := checkPattern("specSlug", slug, openAPISlug, "letters and digits, in words separated by single dashes"); err != nil {
		return nil, err
	}
	srcURL, srcText, err := r.checkOpenAPISource(input.Source)
	if err != nil {
		return nil, err
	}
	now := r.now()
	var out model.PutOpenAPISpecResult
	err = store.RunInTx(ctx, r.DB, func(ctx context.Context, tx bun.Tx) error {
		// Inserting first makes concurrent puts of a new slug safe: the
		// loser conflicts and updates instead.
		s := &store.OpenAPISpec{ID: store.NewID(), OrganizationID: orgID, Slug: slug, SourceURL: srcURL, SourceText: srcText,
			Visibility: store.OpenAPIPrivate, ProcessingState: store.OpenAPIPending, Generation: 1,
			LastErrors: []store.OpenAPIProcessError{}, CreatedAt: now, UpdatedAt: now}
		created, err := store.CreateOpenAPISpecIfMissing(ctx, tx, s)
		if err != nil || created {
			out = model.PutOpenAPISpecResult{Created: created, Spec: s}
			return err
		}
		cur, err := store.GetOpenAPISpec(ctx, tx, orgID, slug)
		if err != nil {
			return err
		}
		// A put is also how a client asks for a fresh fetch of the same
		// source: the spec is pending again, in a new generation (a job
		// still working on the old one drops its result). A text replaces
		// the URL, or the text, and the other way round.
		cur.SourceURL, cur.SourceText = srcURL, srcText
		cur.ProcessingState, cur.Generation, cur.UpdatedAt = store.OpenAPIPending, cur.Generation+1, now
		out = model.PutOpenAPISpecResult{Spec: cur}
		return store.UpdateOpenAPISpec(ctx, tx, cur, "source_url", "source_text", "processing_state", "generation", "updated_at")
	})
	if err != nil {
		return nil, err
	}
	r.enqueue(ctx, ProcessOpenAPISpecArgs{SpecID: out.Spec.ID})
	return &out, nil
}

func (r *mutationResolver) UpdateOpenAPISpec(ctx context.Context, orgID, slug string, input model.UpdateOpenAPISpecInput) (*store.OpenAPISpec, error) {
	// SECURITY: readers learn it exists (403); others get 404.
	if err := requireContentRole(ctx, orgID, store.RoleRead, "OpenAPI specification"); err != nil {
		return nil, err
	}
	s, err := r.openAPISpec(ctx, orgID, slug)
	if err != nil {
		return nil, err
	}
	// SECURITY: those who may create content change specs.
	if err := requireContentRole(ctx, orgID, store.RoleCreate, "OpenAPI specification"); err != nil {
		return nil, err
	}
	s.Visibility, s.UpdatedAt = input.Visibility, r.now()
	return s, store.UpdateOpenAPISpec(ctx, r.DB, s, "visibility", "updated_at")
}

func (r *mutationResolver) DeleteOpenAPISpec(ctx context.Context, orgID, slug string) (bool, error) {
	// SECURITY: those who may create content delete specs.
	if err := requireContentRole(ctx, orgID, store.RoleCreate, "organization"); err != nil {
		return false, err
	}
	return store.DeleteOpenAPISpec(ctx, r.DB, orgID, slug)
}

type openAPISpecResolver struct{ *Resolver }

var _ generated.OpenAPISpecResolver = (*openAPISpecResolver)(nil)

func (r *Resolver) OpenAPISpec() generated.OpenAPISpecResolver { return &openAPISpecResolver{r} }

func (r *openAPISpecResolver) Permissions(ctx context.Context, s *store.OpenAPISpec) (*model.OpenAPISpecPermissions, error) {
	role, err := contentRole(ctx, s.OrganizationID, "OpenAPI specification")
	if err != nil {
		return nil, err
	}
	return &model.OpenAPISpecPermissions{View: true, Edit: role.AtLeast(store.RoleCreate)}, nil
}

func (r *openAPISpecResolver) Urls(_ context.Context, s *store.OpenAPISpec) (*model.OpenAPISpecURLs, error) {
	u := &model.OpenAPISpecURLs{
		Location: r.URLs.API("/v1/orgs/" + pathEscape(s.OrganizationID) + "/openapi/" + pathEscape(s.Slug)),
		App:      r.URLs.App("/o/" + pathEscape(s.OrganizationID) + "/openapi/" + pathEscape(s.Slug)),
	}
	if s.Visibility == store.OpenAPIPublic {
		p := r.URLs.API(PublishedOpenAPIPath + pathEscape(s.ID))
		u.Published = &p
	}
	return u, nil
}

func (r *openAPISpecResolver) Versions(ctx context.Context, s *store.OpenAPISpec, page *string, limit *int, _ *int, _ *string) (*model.OpenAPISpecVersionList, error) {
	return paginate(page, limit, listQuery[*store.OpenAPISpecVersion]{
		read: func(p store.Page) ([]*store.OpenAPISpecVersion, error) {
			return store.ListOpenAPISpecVersions(ctx, r.DB, s.ID, p)
		},
		key: func(v *store.OpenAPISpecVersion) store.Keyset { return store.Keyset{Time: v.CreatedAt, ID: v.ID} },
		prime: func(versions []*store.OpenAPISpecVersion) error {
			for _, v := range versions {
				v.Spec = s
			}
			return nil
		},
	})
}

func (r *openAPISpecResolver) Version(ctx context.Context, s *store.OpenAPISpec, id string) (*store.OpenAPISpecVersion, error) {
	if id == latestVersion {
		if s.LastVersionID == nil {
			return nil, NotFound("OpenAPI specification version")
		}
		id = *s.LastVersionID
	}
	v, err := store.GetOpenAPISpecVersion(ctx, r.DB, s.ID, id)
	if err != nil {
		return nil, orNotFound(err, "OpenAPI specification version")
	}
	v.Spec = s
	return v, nil
}

type openAPISpecVersionResolver struct{ *Resolver }

var _ generated.OpenAPISpecVersionResolver = (*openAPISpecVersionResolver)(nil)

func (r *Resolver) OpenAPISpecVersion() generated.OpenAPISpecVersionResolver {
	return &openAPISpecVersionResolver{r}
}

// rawOpenAPIScope keeps version signatures apart from file download ones,
// which sign (revision id, file id).
const rawOpenAPIScope = "openapi-spec-version"

func (r *openAPISpecVersionResolver) URL(ctx context.Context, v *store.OpenAPISpecVersion) (string, error) {
	key, err := r.key(ctx)
	if err != nil {
		return "", err
	}
	expires := downloadExpiry(r.now())
	return r.URLs.API(RawOpenAPIPath + pathEscape(v.ID) + "?expires=" + strconv.FormatInt(expires, 10) +
		"&signature=" + downloadSignature(key, rawOpenAPIScope, v.ID, expires)), nil
}

func (r *openAPISpecVersionResolver) Urls(ctx context.Context, v *store.OpenAPISpecVersion) (*model.OpenAPISpecVersionURLs, error) {
	s := v.Spec
	if s == nil {
		var err error
		if s, err = store.GetOpenAPISpecByID(ctx, r.DB, v.SpecID); err != nil {
			return nil, err
		}
	}
	return &model.OpenAPISpecVersionURLs{Location: r.URLs.API("/v1/orgs/" + pathEscape(s.OrganizationID) + "/openapi/" +
		pathEscape(s.Slug) + "/versions/" + pathEscape(v.ID))}, nil
}

func (r *openAPISpecVersionResolver) Content(ctx context.Context, v *store.OpenAPISpecVersion) (*model.OpenAPISpecContent, error) {
	if v.Files == nil { // a list reads versions without their content
		full, err := store.GetOpenAPISpecVersion(ctx, r.DB, v.SpecID, v.ID)
		if err != nil {
			return nil, err
		}
		full.Spec, v = v.Spec, full
	}
	url, err := r.URL(ctx, v)
	if err != nil {
		return nil, err
	}
	files := make(map[string]any, len(v.Files))
	for k, f := range v.Files {
		files[k] = f
	}
	return &model.OpenAPISpecContent{Filesystem: map[string]any{"entryPoint": v.Entry, "files": files}, URL: url}, nil
}

// RawOpenAPI is a version's bundled document at a signed address
// (RawOpenAPIPath, then the version id and the address's query); NotFound
// for anything else, an expired or altered address included.
func (r *Resolver) RawOpenAPI(ctx context.Context, id string, query url.Values) (*Served, error) {
	if err := r.checkSigned(ctx, query, rawOpenAPIScope, id); id == "" || errors.Is(err, errBadSignature) {
		return nil, NotFound("OpenAPI specification version")
	} else if err != nil {
		return nil, err
	}
	v, err := store.GetOpenAPISpecVersionByID(ctx, r.DB, id)
	if err != nil {
		return nil, NotFound("OpenAPI specification version")
	}
	return openAPIDocument(v, "private, max-age=3600"), nil
}

// PublishedOpenAPI is the newest version of a public spec, for anyone.
func (r *Resolver) PublishedOpenAPI(ctx context.Context, specID string) (*Served, error) {
	s, err := store.GetOpenAPISpecByID(ctx, r.DB, specID)
	if err != nil || s.Visibility != store.OpenAPIPublic || s.LastVersionID == nil {
		return nil, NotFound("OpenAPI specification version")
	}
	v, err := store.GetOpenAPISpecVersion(ctx, r.DB, s.ID, *s.LastVersionID)
	if err != nil {
		return nil, NotFound("OpenAPI specification version")
	}
	// Short: a new version or a switch back to private shows soon.
	return openAPIDocument(v, "public, max-age=60"), nil
}

// openAPIDocument serves a version's document; its digest is the ETag, so a
// client that has it gets 304.
func openAPIDocument(v *store.OpenAPISpecVersion, cache string) *Served {
	return &Served{ContentType: v.ContentType, ETag: `"` + v.Digest + `"`, Modified: v.CreatedAt, Cache: cache,
		Body: bytes.NewReader(v.Document)}
}

// ProcessOpenAPISpecArgs is the job that fetches and processes a spec.
type ProcessOpenAPISpecArgs struct {
	SpecID string `json:"specId"`
}

// Kind names the job in River's table.
func (ProcessOpenAPISpecArgs) Kind() string { return "process_openapi_spec" }

// OpenAPISpecsToProcess is what the periodic sweep enqueues: specs pending
// for over a minute (their enqueue failed) and specs a job took over ten
// minutes ago without finishing (it died), which are made pending again.
func (r *Resolver) OpenAPISpecsToProcess(ctx context.Context) ([]string, error) {
	now := r.now()
	return store.UnfinishedOpenAPISpecs(ctx, r.DB, now.Add(-time.Minute), now.Add(-openAPIStuckAfter))
}

// openAPIStuckAfter is how long a processing may take before the sweep
// deems its job dead.
const openAPIStuckAfter = 10 * time.Minute
