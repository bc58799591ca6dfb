package graph

import (
	"context"
	"errors"
	"time"

	"github.com/uptrace/bun"

	"github.com/docsapi/docsapi/graph/engine"
	"github.com/docsapi/docsapi/graph/generated"
	"github.com/docsapi/docsapi/graph/model"
	"github.com/docsapi/docsapi/store"
)

// SpaceRetention is how long a deleted space can be restored before it is
// removed for good.
const SpaceRetention = 7 * 24 * time.Hour

// maxSpaceTitle bounds a space's title, in characters.
const maxSpaceTitle = 50

func (r *queryResolver) Space(ctx context.Context, id string, shareKey *string) (*store.Space, error) {
	return r.space(ctx, id)
}

// space loads a live space the caller can read. It reads directly rather
// than through the loader: a single lookup gains nothing from waiting for a
// batch.
func (r *Resolver) space(ctx context.Context, id string) (*store.Space, error) {
	s, err := store.GetSpace(ctx, r.DB, id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && s.DeletedAt != nil) {
		return nil, NotFound("space")
	} else if err != nil {
		return nil, err
	}
	if VisitorFrom(ctx) != nil {
		// SECURITY: a visitor reads the spaces its site shows it.
		if ok, err := r.viewer(ctx).visitorReadsSpace(s.ID); err != nil {
			return nil, err
		} else if !ok {
			return nil, NotFound("space")
		}
		return s, nil
	}
	// SECURITY: those with a role on the space only (access.go).
	if _, err := r.spaceRole(ctx, s); err != nil {
		return nil, err
	}
	return s, nil
}

func (r *organizationResolver) Spaces(ctx context.Context, o *store.Organization, page *string, limit *int, _ *int, _ *string) (*model.SpaceList, error) {
	// SECURITY: members only; what each may see is decided per item below.
	if _, err := orgRole(ctx, o.ID, "organization"); err != nil {
		return nil, err
	}
	g, err := callerGrantee(ctx, o.ID)
	if err != nil {
		return nil, err
	}
	return paginate(page, limit, listQuery[*store.Space]{
		read: func(p store.Page) ([]*store.Space, error) { return store.ListSpaces(ctx, r.DB, o.ID, p, false) },
		key:  spaceKey,
		// SECURITY: only the spaces the caller has a role on.
		visible: r.spaceVisibleTo(ctx, g),
		prime:   func(spaces []*store.Space) error { return r.primeSpaces(ctx, spaces) },
		total:   r.spaceTotal(o.ID, nil, g),
	})
}

// primeSpaces primes the space loader with a page of spaces, which their
// fields (and the lists under them) ask for again.
func (r *Resolver) primeSpaces(ctx context.Context, spaces []*store.Space) error {
	for _, s := range spaces {
		r.loaders(ctx).Space.Prime(ctx, s.ID, s)
	}
	return nil
}

func (r *mutationResolver) CreateSpace(ctx context.Context, organizationID string, input model.CreateSpaceInput) (*store.Space, error) {
	// SECURITY: creating content needs the create role.
	if err := requireOrgRole(ctx, organizationID, store.RoleCreate, "organization"); err != nil {
		return nil, err
	}
	caller, _ := CallerFrom(ctx)
	now := r.now()
	inherit := store.DefaultLevelInherit
	s := &store.Space{
		ID: store.NewID(), OrganizationID: organizationID, Visibility: store.VisibilityPrivate, EditMode: store.EditModeLive,
		MergeRules: store.MergeRules{Type: store.MergeRulesInherit}, DefaultLevel: &inherit,
		RevisionID: store.NewID(), CreatedBy: &caller.User.ID, CreatedAt: now, UpdatedAt: now,
	}
	p := &patch{}
	setRequired(p, "title", "title", input.Title, &s.Title, length("title", 0, maxSpaceTitle))
	setRequired(p, "emoji", "emoji", input.Emoji, &s.Emoji, length("emoji", 0, 50))
	setOptional(p, "language", "language", input.Language, &s.Language, nil)
	setRequired(p, "editMode", "edit_mode", input.EditMode, &s.EditMode, nil)
	if p.err != nil {
		return nil, p.err
	}
	parent, _ := input.Parent.ValueOK()
	if err := r.checkNewParent(ctx, organizationID, parent); err != nil {
		return nil, err
	}
	s.ParentID = parent
	err := r.createInTree(ctx, organizationID, parent, errNoParent, func(ctx context.Context, tx bun.Tx, position int) error {
		s.Position = position
		return store.CreateSpace(ctx, tx, s, store.Content{})
	})
	if err != nil {
		return nil, err
	}
	return s, nil
}

func (r *mutationResolver) UpdateSpace(ctx context.Context, id string, input model.UpdateSpaceInput) (*store.Space, error) {
	s, err := r.space(ctx, id)
	if err != nil {
		return nil, err
	}
	// SECURITY: space settings are for space admins.
	if err := r.requireSpaceRole(ctx, s, store.RoleAdmin); err != nil {
		return nil, err
	}
	s = copyOf(s) // the loaded one is shared with the rest of the request
	previousVisibility := s.Visibility
	p := &patch{}
	setRequired(p, "editMode", "edit_mode", input.EditMode, &s.EditMode, nil)
	setRequired(p, "visibility", "visibility", input.Visibility, &s.Visibility, func(v store.ContentVisibility) error {
		if v == store.VisibilityInCollection && s.ParentID == nil {
			return Invalid("visibility", "in-collection is only for a space in a collection")
		}
		return nil
	})
	setRequired(p, "title", "title", input.Title, &s.Title, length("title", 0, maxSpaceTitle))
	setOptional(p, "defaultLevel", "default_level", input.DefaultLevel, &s.DefaultLevel, nil)
	setOptional(p, "language", "language", input.Language, &s.Language, nil)
	setRequired(p, "mergeRules", "merge_rules", input.MergeRules, &s.MergeRules, func(mr store.MergeRules) error {
		return checkMergeRules("mergeRules", mr, true)
	})
	var emoji *string
	setOptional(p, "emoji", "emoji", input.Emoji, &emoji, length("emoji", 0, 50))
	if input.Emoji.IsSet() {
		s.Emoji = "" // null removes the emoji
		if emoji != nil {
			s.Emoji = *emoji
		}
	}
	setOptional(p, "icon", "icon", input.Icon, &s.Icon, func(u string) error { return checkURL("icon", u, 2048) })
	if p.err != nil || !p.changed() {
		return s, p.err
	}
	s.UpdatedAt = r.now()
	err = store.RunInTx(ctx, r.DB, func(ctx context.Context, tx bun.Tx) error {
		if err := store.UpdateSpace(ctx, tx, s, p.columns...); err != nil {
			return err
		}
		if s.Visibility == previousVisibility {
			return nil
		}
		return store.RecordSpaceVisibilityUpdated(ctx, tx, s, previousVisibility, actorID(ctx), s.UpdatedAt)
	})
	if err != nil {
		return nil, err
	}
	r.loaders(ctx).OrgAccess.Clear(ctx, s.OrganizationID) // the default level or visibility may have changed
	return s, nil
}

func (r *mutationResolver) DeleteSpace(ctx context.Context, id string) (bool, error) {
	s, err := store.GetSpace(ctx, r.DB, id)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	// SECURITY: deleting a space is for its admins. Strangers are answered
	// as for a space that does not exist (nothing deleted, 204): a 404 here
	// would tell them the id names one.
	if err := r.requireSpaceRole(ctx, s, store.RoleAdmin); isNotFound(err) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	if s.DeletedAt != nil {
		return false, nil
	}
	now := r.now()
	s.DeletedAt = &now
	s.UpdatedAt = now
	return true, store.UpdateSpace(ctx, r.DB, s, "deleted_at")
}

func (r *mutationResolver) RestoreSpace(ctx context.Context, id string) (*store.Space, error) {
	s, err := store.GetSpace(ctx, r.DB, id)
	if err != nil {
		return nil, orNotFound(err, "space")
	}
	// SECURITY: restoring is for the space's admins.
	if err := r.requireSpaceRole(ctx, s, store.RoleAdmin); err != nil {
		return nil, err
	}
	if s.DeletedAt == nil {
		return s, nil
	}
	if r.now().Sub(*s.DeletedAt) > SpaceRetention {
		// Past retention the space is as good as gone; the purge job removes it.
		return nil, NotFound("space")
	}
	s.DeletedAt = nil
	s.UpdatedAt = r.now()
	if err := store.UpdateSpace(ctx, r.DB, s, "deleted_at"); err != nil {
		return nil, orNotFound(err, "space")
	}
	return s, nil
}

func (r *mutationResolver) DuplicateSpace(ctx context.Context, id string) (*store.Space, error) {
	src, err := r.space(ctx, id)
	if err != nil {
		return nil, err
	}
	// SECURITY: a copy is new content: the create role is needed.
	if err := requireOrgRole(ctx, src.OrganizationID, store.RoleCreate, "space"); err != nil {
		return nil, err
	}
	caller, _ := CallerFrom(ctx)
	now := r.now()
	dup := copyOf(src)
	dup.ID, dup.RevisionID = store.NewID(), store.NewID()
	dup.CreatedBy, dup.CreatedAt, dup.UpdatedAt = &caller.User.ID, now, now
	// The copy goes at the end of the original's collection, with the
	// original's settings and current pages (page bodies are shared: they
	// are stored by content).
	content, err := store.LoadContent(ctx, r.DB, src.OrganizationID, src.RevisionID)
	if err != nil {
		return nil, err
	}
	moved := Conflict("the space's collection was deleted or transferred while it was duplicated: try again")
	err = r.createInTree(ctx, dup.OrganizationID, dup.ParentID, moved, func(ctx context.Context, tx bun.Tx, position int) error {
		dup.Position = position
		return store.CreateSpace(ctx, tx, dup, content)
	})
	if err != nil {
		return nil, err
	}
	return dup, nil
}

type spaceResolver struct{ *Resolver }

var _ generated.SpaceResolver = (*spaceResolver)(nil)

func (r *Resolver) Space() generated.SpaceResolver { return &spaceResolver{r} }

func (r *spaceResolver) Urls(ctx context.Context, s *store.Space) (*model.SpaceURLs, error) {
	id := pathEscape(s.ID)
	u := &model.SpaceURLs{
		Location: r.URLs.API("/v1/spaces/" + id),
		App:      r.URLs.App("/s/" + id),
		Icon:     s.Icon,
	}
	if s.Visibility != store.VisibilityPrivate {
		published := r.URLs.Published("/s/" + id)
		u.Published = &published
		if s.Visibility == store.VisibilityPublic {
			u.Public = &published
		}
	}
	return u, nil
}

func (r *spaceResolver) Permissions(ctx context.Context, s *store.Space) (*model.SpacePermissions, error) {
	// A site may show a space its reader has no role on: all false then.
	// A visitor of a published site holds no role on any space (it reads
	// the spaces its site shows): all false for it too.
	if VisitorFrom(ctx) != nil {
		return spacePermissions(""), nil
	}
	g, err := callerGrantee(ctx, s.OrganizationID)
	if err != nil {
		return nil, err
	}
	role, err := r.spaceRoleOf(ctx, g, s)
	if err != nil {
		return nil, err
	}
	return spacePermissions(role), nil
}

func spaceKey(s *store.Space) store.Keyset { return store.Keyset{Time: s.CreatedAt, ID: s.ID} }

// spaceVisibleTo tells which spaces g has a role on.
func (r *Resolver) spaceVisibleTo(ctx context.Context, g grantee) func(*store.Space) (bool, error) {
	return func(s *store.Space) (bool, error) {
		role, err := r.spaceRoleOf(ctx, g, s)
		return role != "", err
	}
}

func copyOf[T any](v *T) *T {
	c := *v
	return &c
}

// spaceSummary: the spaces of site spaces are read as summaries
// (store.SpaceSummaryColumns) when nothing in an operation asks a space for
// more than these fields, which a summary row carries all the data of (urls
// needs the id, icon and visibility). A site's navigation is read so.
var spaceSummary = engine.Summary{Type: "Space", Fields: map[string]bool{
	"__typename":   true,
	"object":       true,
	"id":           true,
	"title":        true,
	"emoji":        true,
	"visibility":   true,
	"urls":         true,
	"organization": true,
	"parent":       true,
}}

// spaceSummariesSuffice reports whether the operation of ctx reads spaces
// as summaries.
func spaceSummariesSuffice(ctx context.Context) bool {
	return engine.SummariesSuffice(ctx, spaceSummary.Type)
}

// spaceDirect declares spaces to the engine's direct writer: a space read
// by id (REST's GET /v1/spaces/{id} runs Query.space) or published in a
// site's structure is written without gqlgen's per-field execution.
func (r *Resolver) spaceDirect(d *engine.DirectWriter) {
	d.Entry("Query", "space")
	d.Object("Space", (*store.Space)(nil), map[string]engine.Field{
		"object":              engine.String((*store.Space).Object),
		"id":                  engine.String(func(s *store.Space) string { return s.ID }),
		"title":               engine.String(func(s *store.Space) string { return s.Title }),
		"emoji":               engine.String(func(s *store.Space) string { return s.Emoji }),
		"visibility":          engine.Enum(func(s *store.Space) store.ContentVisibility { return s.Visibility }),
		"createdAt":           engine.Time(func(s *store.Space) time.Time { return s.CreatedAt }),
		"updatedAt":           engine.Time(func(s *store.Space) time.Time { return s.UpdatedAt }),
		"deletedAt":           engine.OptTime(func(s *store.Space) *time.Time { return s.DeletedAt }),
		"editMode":            engine.Enum(func(s *store.Space) store.SpaceEditMode { return s.EditMode }),
		"mergeRules":          engine.Struct(func(s *store.Space) *store.MergeRules { return &s.MergeRules }),
		"urls":                engine.Child(r.Space().Urls),
		"organization":        engine.String(func(s *store.Space) string { return s.OrganizationID }),
		"parent":              engine.OptString(func(s *store.Space) *string { return s.ParentID }),
		"language":            engine.OptEnum(func(s *store.Space) *store.Language { return s.Language }),
		"revision":            engine.String(func(s *store.Space) string { return s.RevisionID }),
		"defaultLevel":        engine.OptEnum(func(s *store.Space) *store.DefaultLevel { return s.DefaultLevel }),
		"comments":            engine.Int(func(s *store.Space) int { return s.OpenComments }),
		"changeRequests":      engine.Int((*store.Space).ChangeRequests),
		"changeRequestsOpen":  engine.Int(func(s *store.Space) int { return s.ChangeRequestsOpen }),
		"changeRequestsDraft": engine.Int(func(s *store.Space) int { return s.ChangeRequestsDraft }),
		"permissions":         engine.Child(r.Space().Permissions),
	})
	d.Object("MergeRules", (*store.MergeRules)(nil), map[string]engine.Field{
		"type":  engine.Enum(func(m *store.MergeRules) store.MergeRulesType { return m.Type }),
		"rules": engine.ValueList(func(m *store.MergeRules) []store.MergeRule { return m.Rules }),
	})
	d.Object("MergeRule", (*store.MergeRule)(nil), map[string]engine.Field{
		"rule":       engine.Enum(func(m *store.MergeRule) store.MergeRuleKind { return m.Rule }),
		"users":      engine.IDs(func(m *store.MergeRule) []string { return m.Users }),
		"expression": engine.OptString(func(m *store.MergeRule) *string { return m.Expression }),
	})
	d.Object("SpaceURLs", (*model.SpaceURLs)(nil), map[string]engine.Field{
		"location":  engine.String(func(u *model.SpaceURLs) string { return u.Location }),
		"app":       engine.String(func(u *model.SpaceURLs) string { return u.App }),
		"published": engine.OptString(func(u *model.SpaceURLs) *string { return u.Published }),
		"public":    engine.OptString(func(u *model.SpaceURLs) *string { return u.Public }),
		"icon":      engine.OptString(func(u *model.SpaceURLs) *string { return u.Icon }),
	})
	d.Object("SpacePermissions", (*model.SpacePermissions)(nil), map[string]engine.Field{
		"view":               engine.Bool(func(p *model.SpacePermissions) bool { return p.View }),
		"access":             engine.Bool(func(p *model.SpacePermissions) bool { return p.Access }),
		"admin":              engine.Bool(func(p *model.SpacePermissions) bool { return p.Admin }),
		"viewInviteLinks":    engine.Bool(func(p *model.SpacePermissions) bool { return p.ViewInviteLinks }),
		"edit":               engine.Bool(func(p *model.SpacePermissions) bool { return p.Edit }),
		"triggerGitSync":     engine.Bool(func(p *model.SpacePermissions) bool { return p.TriggerGitSync }),
		"comment":            engine.Bool(func(p *model.SpacePermissions) bool { return p.Comment }),
		"merge":              engine.Bool(func(p *model.SpacePermissions) bool { return p.Merge }),
		"review":             engine.Bool(func(p *model.SpacePermissions) bool { return p.Review }),
		"installIntegration": engine.Bool(func(p *model.SpacePermissions) bool { return p.InstallIntegration }),
	})
}
