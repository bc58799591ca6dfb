package graph

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"github.com/docsapi/docsapi/graph/generated"
	"github.com/docsapi/docsapi/graph/internal/document"
	"github.com/docsapi/docsapi/graph/model"
	"github.com/docsapi/docsapi/graph/translator"
	"github.com/docsapi/docsapi/store"
)

// Translations. A translation names a source space and a target
// language; runTranslation makes it pending and, after the commit, enqueues
// a job (RunTranslationArgs, run by graph/jobs) that translates the source's
// current pages through the configured provider into the result space. A
// periodic sweep re-enqueues runs left pending or whose job died. With no
// provider configured, a run fails with a message saying so: there is never
// a stand-in translation.
//
// Readers of the organization see the translations of spaces they can read;
// those who may create content (a run creates a space) change and run them.

// maxTranslationBatch bounds the texts of one provider request (characters).
const maxTranslationBatch = 12000

// translationStuckAfter is how long a run may take before the sweep deems
// its job dead and runs it again.
const translationStuckAfter = 30 * time.Minute

func (r *organizationResolver) Translations(ctx context.Context, o *store.Organization, page *string, limit *int, _ *int, _ *string) (*model.TranslationList, error) {
	// SECURITY: the organization's readers; each item needs its source
	// space to be readable too (below).
	if err := requireContentRole(ctx, o.ID, store.RoleRead, "organization"); err != nil {
		return nil, err
	}
	spaces := &r.loaders(ctx).Space
	return paginate(page, limit, listQuery[*store.Translation]{
		read: func(p store.Page) ([]*store.Translation, error) {
			rows, err := store.ListTranslations(ctx, r.DB, o.ID, p)
			// The rows' source spaces in one batch, for visible.
			ids := make([]string, len(rows))
			for i, t := range rows {
				ids[i] = t.SourceSpaceID
			}
			spaces.LoadMany(ctx, ids)()
			return rows, err
		},
		key: func(t *store.Translation) store.Keyset { return store.Keyset{Time: t.CreatedAt, ID: t.ID} },
		// A translation is listed when its source space is one the caller
		// can read; a deleted one is not found. Pages read on until full,
		// so a page's items, edges and cursor agree.
		visible: func(t *store.Translation) (bool, error) {
			s, err := spaces.Load(ctx, t.SourceSpaceID)()
			if err == nil {
				_, err = r.spaceRole(ctx, s)
			}
			if isNotFound(err) {
				return false, nil
			}
			return err == nil, err
		},
	})
}

func (r *organizationResolver) Translation(ctx context.Context, o *store.Organization, id string) (*store.Translation, error) {
	return r.translation(ctx, o.ID, id)
}

// translation is translation id of orgID, for a caller who can read its
// source space; NotFound otherwise.
func (r *Resolver) translation(ctx context.Context, orgID, id string) (*store.Translation, error) {
	// SECURITY: readers of the organization, and of the source space.
	if err := requireContentRole(ctx, orgID, store.RoleRead, "translation"); err != nil {
		return nil, err
	}
	t, err := store.GetTranslation(ctx, r.DB, orgID, id)
	if err != nil {
		return nil, orNotFound(err, "translation")
	}
	if _, err := r.space(ctx, t.SourceSpaceID); isNotFound(err) {
		return nil, NotFound("translation")
	} else if err != nil {
		return nil, err
	}
	return t, nil
}

// editableTranslation is translation id for a caller who may change it.
func (r *Resolver) editableTranslation(ctx context.Context, orgID, id string) (*store.Translation, error) {
	t, err := r.translation(ctx, orgID, id)
	if err != nil {
		return nil, err
	}
	// SECURITY: a run creates content: the create role is needed.
	if err := requireContentRole(ctx, orgID, store.RoleCreate, "translation"); err != nil {
		return nil, err
	}
	return t, nil
}

func (r *mutationResolver) CreateTranslation(ctx context.Context, orgID string, input model.CreateTranslationInput) (*store.Translation, error) {
	// SECURITY: a run creates content: the create role is needed.
	if err := requireContentRole(ctx, orgID, store.RoleCreate, "organization"); err != nil {
		return nil, err
	}
	if input.Source == nil {
		return nil, Invalid("source", "is required: {\"space\": \"...\", \"language\": \"en\"}")
	}
	src, err := r.space(ctx, input.Source.Space)
	if isNotFound(err) || (err == nil && src.OrganizationID != orgID) {
		return nil, Invalid("source.space", "no space %q in this organization", input.Source.Space)
	} else if err != nil {
		return nil, err
	}
	if input.Language == input.Source.Language {
		return nil, Invalid("language", "must differ from the source's language (%s)", input.Language)
	}
	instructions := map[string]any{}
	if v, _ := input.Instructions.ValueOK(); v != nil {
		instructions = v
	}
	now := r.now()
	t := &store.Translation{ID: store.NewID(), OrganizationID: orgID, SourceSpaceID: src.ID,
		SourceLanguage: input.Source.Language, Language: input.Language, Instructions: instructions,
		Status: store.TranslationCompleted, TranslatedPages: []string{}, CreatedAt: now, UpdatedAt: now}
	if err := store.CreateTranslation(ctx, r.DB, t); err != nil {
		return nil, err
	}
	return t, nil
}

func (r *mutationResolver) UpdateTranslation(ctx context.Context, orgID, id string, input model.UpdateTranslationInput) (*store.Translation, error) {
	t, err := r.editableTranslation(ctx, orgID, id)
	if err != nil {
		return nil, err
	}
	t.Instructions, t.UpdatedAt = input.Instructions, r.now()
	if err := store.UpdateTranslation(ctx, r.DB, t, "instructions", "updated_at"); err != nil {
		return nil, err
	}
	return t, nil
}

func (r *mutationResolver) DeleteTranslation(ctx context.Context, orgID, id string) (bool, error) {
	// SECURITY: outsiders get 404 and low roles 403 before anything is
	// looked up; then a translation the caller cannot see is as good as
	// missing: deleting it is done (false), and nothing is deleted.
	if err := requireContentRole(ctx, orgID, store.RoleCreate, "organization"); err != nil {
		return false, err
	}
	if _, err := r.editableTranslation(ctx, orgID, id); isNotFound(err) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	return store.DeleteTranslation(ctx, r.DB, orgID, id)
}

func (r *mutationResolver) RunTranslation(ctx context.Context, orgID, id string) (bool, error) {
	t, err := r.editableTranslation(ctx, orgID, id)
	if err != nil {
		return false, err
	}
	// A run already due or under way covers this request.
	if t.Status != store.TranslationPending && t.Status != store.TranslationRunning {
		t.Status, t.StatusMessage, t.UpdatedAt = store.TranslationPending, nil, r.now()
		if err := store.UpdateTranslation(ctx, r.DB, t, "status", "status_message", "updated_at"); err != nil {
			return false, err
		}
	}
	r.enqueue(ctx, RunTranslationArgs{TranslationID: t.ID})
	return true, nil
}

// RunTranslationArgs is the job that runs a translation.
type RunTranslationArgs struct {
	TranslationID string `json:"translationId"`
}

// Kind names the job in River's table.
func (RunTranslationArgs) Kind() string { return "run_translation" }

// TranslationsToRun is what the periodic sweep enqueues: runs pending for
// over a minute (their enqueue failed) and runs whose job died.
func (r *Resolver) TranslationsToRun(ctx context.Context) ([]string, error) {
	now := r.now()
	return store.UnfinishedTranslations(ctx, r.DB, now.Add(-time.Minute), now.Add(-translationStuckAfter))
}

// RunTranslation is the job's work: claim the pending translation, translate
// the source's current pages, write them to the result space, record the
// outcome. A failure is recorded on the translation (status failed with a
// message) and not retried by the queue: running it again is the user's call.
func (r *Resolver) RunTranslation(ctx context.Context, id string) error {
	start := time.Now()
	t, err := store.ClaimTranslation(ctx, r.DB, id, r.now())
	if errors.Is(err, store.ErrNotFound) {
		return nil // not pending: another job has it, or it was deleted
	} else if err != nil {
		return err
	}
	run, err := r.translateSpace(ctx, t)
	if err != nil {
		return r.recordTranslationFailure(ctx, t, err)
	}
	t.Status, t.StatusMessage = store.TranslationCompleted, nil
	t.ResultSpaceID, t.ResultRevisionID = &run.space, &run.revision
	seconds := int(math.Ceil(time.Since(start).Seconds()))
	t.Runs++
	t.LatestDuration, t.LatestPages, t.LatestWords = seconds, len(run.pages), run.words
	t.TotalDuration += seconds
	t.TotalWords += run.words
	for _, p := range run.pages {
		if !slices.Contains(t.TranslatedPages, p) {
			t.TranslatedPages = append(t.TranslatedPages, p)
		}
	}
	t.UpdatedAt = r.now()
	return store.UpdateTranslation(ctx, r.DB, t, "status", "status_message", "result_space_id", "result_revision_id",
		"runs", "latest_duration", "latest_pages", "latest_words", "total_duration", "total_words", "translated_pages", "updated_at")
}

func (r *Resolver) recordTranslationFailure(ctx context.Context, t *store.Translation, cause error) error {
	msg := cause.Error()
	var e *Error
	if errors.As(cause, &e) {
		msg = e.Message
	}
	if r.Log != nil {
		r.Log.WarnContext(ctx, "translation run failed", "translation", t.ID, "err", cause)
	}
	t.Status, t.StatusMessage, t.UpdatedAt = store.TranslationFailed, &msg, r.now()
	return store.UpdateTranslation(context.WithoutCancel(ctx), r.DB, t, "status", "status_message", "updated_at")
}

// translationRun is what a run produced.
type translationRun struct {
	space, revision string
	pages           []string // source page ids translated
	words           int
}

// translateSpace translates the source's current content and writes it to
// the result space: a new space the first time (or when the last one was
// deleted), a new revision of it afterwards.
func (r *Resolver) translateSpace(ctx context.Context, t *store.Translation) (*translationRun, error) {
	if r.Translator == nil {
		return nil, errors.New("no translation provider is configured (DOCSAPI_TRANSLATION_URL and DOCSAPI_TRANSLATION_MODEL)")
	}
	src, err := store.GetSpace(ctx, r.DB, t.SourceSpaceID)
	if err != nil || src.DeletedAt != nil {
		return nil, errors.New("the source space no longer exists")
	}
	content, err := store.LoadContent(ctx, r.DB, src.OrganizationID, src.RevisionID)
	if err != nil {
		return nil, err
	}
	content = content.Copy()
	var digests []string
	for _, p := range content.Pages {
		if p.BodySHA256 != nil {
			digests = append(digests, *p.BodySHA256)
		}
	}
	bodies := map[string]string{}
	if len(digests) > 0 {
		if bodies, err = store.PageBodies(ctx, r.DB, src.OrganizationID, digests); err != nil {
			return nil, err
		}
	}
	tr := &pageTranslator{provider: r.Translator, req: translator.Request{From: string(t.SourceLanguage), To: string(t.Language),
		Instructions: strings.TrimSpace(document.Text(t.Instructions))}}
	run := &translationRun{}
	for _, p := range content.Pages {
		body := ""
		if p.BodySHA256 != nil {
			body = bodies[*p.BodySHA256]
		}
		title, description, markdown, err := tr.page(ctx, p, body)
		if err != nil {
			return nil, fmt.Errorf("page %q: %w", p.Title, err)
		}
		run.words += translator.Words(p.Title, body)
		if p.Description != nil {
			run.words += translator.Words(*p.Description)
		}
		p.Title, p.Description = title, description
		if p.BodySHA256, err = store.SaveBody(ctx, r.DB, t.OrganizationID, markdown); err != nil {
			return nil, err
		}
		run.pages = append(run.pages, p.ID)
	}
	now := r.now()
	err = store.RunInTx(ctx, r.DB, func(ctx context.Context, tx bun.Tx) error {
		// The organization's tree first, as every writer of the tree takes
		// it: a new result space is placed under it, and a transfer holding
		// it may be moving the old (deleted) result locked below.
		if err := store.LockOrganization(ctx, tx, src.OrganizationID); err != nil {
			return err
		}
		var result *store.Space
		if t.ResultSpaceID != nil {
			s, err := store.LockSpace(ctx, tx, src.OrganizationID, *t.ResultSpaceID)
			if err == nil && s.DeletedAt == nil {
				result = s
			} else if err != nil && !errors.Is(err, store.ErrNotFound) {
				return err
			}
		}
		if result == nil {
			return r.createTranslatedSpace(ctx, tx, t, src, content, now, run)
		}
		before, err := store.RevisionPages(ctx, tx, result.OrganizationID, result.RevisionID)
		if err != nil {
			return err
		}
		rev := &store.Revision{ID: store.NewID(), SpaceID: result.ID, Parents: []string{result.RevisionID}, Type: "edits", CreatedAt: now}
		if err := store.CreateRevision(ctx, tx, rev, content); err != nil {
			return err
		}
		// Pages whose translated path changed leave redirects.
		if err := r.recordPageMoves(ctx, tx, result, before, store.NewPageTree(content.Pages)); err != nil {
			return err
		}
		result.RevisionID, result.UpdatedAt = rev.ID, now
		run.space, run.revision = result.ID, rev.ID
		return store.UpdateSpace(ctx, tx, result, "revision_id")
	})
	return run, err
}

// createTranslatedSpace makes the result space: beside the source, titled
// after it and the language, with the source's settings.
func (r *Resolver) createTranslatedSpace(ctx context.Context, tx bun.Tx, t *store.Translation, src *store.Space, content store.Content, now time.Time, run *translationRun) error {
	s := copyOf(src)
	s.ID, s.RevisionID = store.NewID(), store.NewID()
	s.Language = &t.Language
	s.Title = truncateRunes(fmt.Sprintf("%s (%s)", src.Title, t.Language), maxSpaceTitle)
	s.CreatedAt, s.UpdatedAt, s.GitInfo = now, now, nil
	var err error
	s.Position, err = store.PlaceNew(ctx, tx, s.OrganizationID, s.ParentID)
	if errors.Is(err, store.ErrNotFound) {
		// The source's collection went away during the run: the result
		// goes to the root rather than nowhere.
		s.ParentID = nil
		s.Position, err = store.PlaceNew(ctx, tx, s.OrganizationID, nil)
	}
	if err != nil {
		return err
	}
	if err := store.CreateSpace(ctx, tx, s, content); err != nil {
		return err
	}
	run.space, run.revision = s.ID, s.RevisionID
	return nil
}

// pageTranslator translates pages in provider requests of bounded size.
type pageTranslator struct {
	provider translator.Provider
	req      translator.Request
}

// page translates a page's title, description and body prose in one or
// more provider requests.
func (p *pageTranslator) page(ctx context.Context, page *store.RevisionPage, body string) (string, *string, string, error) {
	segs := translator.Segments(body)
	texts := []string{page.Title}
	if page.Description != nil {
		texts = append(texts, *page.Description)
	}
	// Providers get the prose without the spaces around it; Apply puts them back.
	for _, s := range segs {
		texts = append(texts, strings.TrimSpace(s.Text))
	}
	out, err := p.translate(ctx, texts)
	if err != nil {
		return "", nil, "", err
	}
	title, rest := strings.TrimSpace(out[0]), out[1:]
	description := page.Description
	if description != nil {
		d := strings.TrimSpace(rest[0])
		description, rest = &d, rest[1:]
	}
	return title, description, translator.Apply(body, segs, rest), nil
}

// translate sends texts in batches of at most maxTranslationBatch characters.
func (p *pageTranslator) translate(ctx context.Context, texts []string) ([]string, error) {
	out := make([]string, 0, len(texts))
	for start := 0; start < len(texts); {
		end, size := start, 0
		for end < len(texts) && (end == start || size+len(texts[end]) <= maxTranslationBatch) {
			size += len(texts[end])
			end++
		}
		req := p.req
		req.Texts = texts[start:end]
		got, err := p.provider.Translate(ctx, req)
		if err != nil {
			return nil, err
		}
		out = append(out, got...)
		start = end
	}
	return out, nil
}

type translationResolver struct{ *Resolver }

var _ generated.TranslationResolver = (*translationResolver)(nil)

func (r *Resolver) Translation() generated.TranslationResolver { return &translationResolver{r} }

// Instructions is a whole JSON document, as the reference has it: none is
// the empty document, and a document given without data has empty data.
func (r *translationResolver) Instructions(_ context.Context, t *store.Translation) (map[string]any, error) {
	doc := map[string]any{"object": "document", "data": map[string]any{}, "nodes": []any{}}
	for k, v := range t.Instructions {
		doc[k] = v
	}
	return doc, nil
}

func (r *translationResolver) Source(_ context.Context, t *store.Translation) (*model.TranslationSource, error) {
	return &model.TranslationSource{Space: t.SourceSpaceID, Language: t.SourceLanguage}, nil
}

func (r *translationResolver) Result(_ context.Context, t *store.Translation) (*model.TranslationResult, error) {
	if t.ResultSpaceID == nil || t.ResultRevisionID == nil {
		return nil, nil
	}
	return &model.TranslationResult{Space: *t.ResultSpaceID, Revision: *t.ResultRevisionID}, nil
}

func (r *translationResolver) Stats(_ context.Context, t *store.Translation) (*model.TranslationStats, error) {
	return &model.TranslationStats{Runs: t.Runs, TotalWords: t.TotalWords, TotalPages: len(t.TranslatedPages),
		TotalDuration: t.TotalDuration, LatestRunDuration: t.LatestDuration, LatestPages: t.LatestPages, LatestWords: t.LatestWords}, nil
}

func (r *translationResolver) Permissions(ctx context.Context, t *store.Translation) (*model.TranslationPermissions, error) {
	role, err := contentRole(ctx, t.OrganizationID, "translation")
	if err != nil {
		return nil, err
	}
	return &model.TranslationPermissions{View: true, Edit: role.AtLeast(store.RoleCreate)}, nil
}

func (r *translationResolver) Urls(_ context.Context, t *store.Translation) (*model.TranslationURLs, error) {
	return &model.TranslationURLs{Location: r.URLs.API("/v1/orgs/" + pathEscape(t.OrganizationID) + "/translations/" + pathEscape(t.ID))}, nil
}
