package graph

import (
	"cmp"
	"context"
	"errors"
	"slices"

	"github.com/99designs/gqlgen/graphql"
	"github.com/uptrace/bun"

	"github.com/docsapi/docsapi/graph/generated"
	"github.com/docsapi/docsapi/graph/model"
	"github.com/docsapi/docsapi/store"
)

// Collections organize an organization's spaces in a tree. The children of
// a container (the root, or a collection) — collections and spaces alike —
// share one order. Creating needs the create role; changing, moving,
// transferring and deleting need admin. Every change to the tree happens
// under the organization's lock, on the tree read inside that transaction.

const (
	maxCollectionTitle       = 50
	maxCollectionDescription = 100
)

func (r *queryResolver) Collection(ctx context.Context, id string) (*store.Collection, error) {
	return r.collection(ctx, id)
}

// collection reads a collection the caller may see: 404 otherwise.
func (r *Resolver) collection(ctx context.Context, id string) (*store.Collection, error) {
	c, err := store.GetCollection(ctx, r.DB, id)
	if err != nil {
		return nil, orNotFound(err, "collection")
	}
	// SECURITY: those with a role on the collection only (access.go).
	if _, err := r.collectionRole(ctx, c); err != nil {
		return nil, err
	}
	return c, nil
}

func (r *organizationResolver) Collections(ctx context.Context, o *store.Organization, page *string, limit *int, _ *int, _ *string, nested *bool) (*model.CollectionList, error) {
	// SECURITY: members only; what each may see is decided per item below.
	if _, err := orgRole(ctx, o.ID, "organization"); err != nil {
		return nil, err
	}
	g, err := callerGrantee(ctx, o.ID)
	if err != nil {
		return nil, err
	}
	topLevel := nested != nil && !*nested
	return paginate(page, limit, listQuery[*store.Collection]{
		read: func(p store.Page) ([]*store.Collection, error) {
			return store.ListCollections(ctx, r.DB, o.ID, topLevel, p)
		},
		key: func(c *store.Collection) store.Keyset { return store.Keyset{Time: c.CreatedAt, ID: c.ID} },
		// SECURITY: only the collections the caller has a role on.
		visible: func(c *store.Collection) (bool, error) {
			role, err := r.collectionRoleOf(ctx, g, c)
			return role != "", err
		},
		total: r.collectionTotal(o.ID, topLevel, g),
	})
}

type collectionResolver struct{ *Resolver }

var _ generated.CollectionResolver = (*collectionResolver)(nil)

func (r *Resolver) Collection() generated.CollectionResolver { return &collectionResolver{r} }

func (r *collectionResolver) Urls(_ context.Context, c *store.Collection) (*model.CollectionURLs, error) {
	id := pathEscape(c.ID)
	return &model.CollectionURLs{Location: r.URLs.API("/v1/collections/" + id), App: r.URLs.App("/o/" + pathEscape(c.OrganizationID) + "/c/" + id)}, nil
}

func (r *collectionResolver) Permissions(ctx context.Context, c *store.Collection) (*model.CollectionPermissions, error) {
	g, err := callerGrantee(ctx, c.OrganizationID)
	if err != nil {
		return nil, err
	}
	role, err := r.collectionRoleOf(ctx, g, c)
	if err != nil {
		return nil, err
	}
	admin := role.AtLeast(store.RoleAdmin)
	return &model.CollectionPermissions{View: role.AtLeast(store.RoleRead), Admin: admin, ViewInviteLinks: admin,
		Create: role.AtLeast(store.RoleCreate)}, nil
}

func (r *collectionResolver) Spaces(ctx context.Context, c *store.Collection, page *string, limit *int, _ *int, _ *string) (*model.SpaceList, error) {
	g, err := callerGrantee(ctx, c.OrganizationID)
	if err != nil {
		return nil, err
	}
	return paginate(page, limit, listQuery[*store.Space]{
		read: func(p store.Page) ([]*store.Space, error) {
			return store.ListSpacesInCollection(ctx, r.DB, c.OrganizationID, c.ID, p)
		},
		// A collection's spaces are in their order in it.
		key: func(s *store.Space) store.Keyset { return store.Keyset{Pos: s.Position, ID: s.ID} },
		// SECURITY: only the spaces the caller has a role on.
		visible: r.spaceVisibleTo(ctx, g),
		prime:   func(spaces []*store.Space) error { return r.primeSpaces(ctx, spaces) },
		total:   r.spaceTotal(c.OrganizationID, &c.ID, g),
	})
}

func (r *mutationResolver) CreateCollection(ctx context.Context, orgID string, input model.CreateCollectionInput) (*store.Collection, error) {
	caller, err := CallerFrom(ctx)
	if err != nil {
		return nil, err
	}
	// SECURITY: the create role or higher makes new content.
	if err := requireOrgRole(ctx, orgID, store.RoleCreate, "organization"); err != nil {
		return nil, err
	}
	if err := checkLength("title", input.Title, 0, maxCollectionTitle); err != nil {
		return nil, err
	}
	parent, _ := input.Parent.ValueOK()
	now := r.now()
	inherit := store.DefaultLevelInherit
	c := &store.Collection{ID: store.NewID(), OrganizationID: orgID, Title: input.Title, DefaultLevel: &inherit,
		CreatedBy: &caller.User.ID, CreatedAt: now, UpdatedAt: now, ParentID: parent}
	if err := r.checkNewParent(ctx, orgID, parent); err != nil {
		return nil, err
	}
	return c, r.createInTree(ctx, orgID, parent, errNoParent, func(ctx context.Context, tx bun.Tx, position int) error {
		c.Position = position
		return store.CreateCollection(ctx, tx, c)
	})
}

// errNoParent answers content created in a collection that is not one of
// the organization's.
var errNoParent = Invalid("parent", "no such collection in this organization")

// checkNewParent checks the caller may create content in parent (nil: the
// root), which must be a collection of orgID.
func (r *Resolver) checkNewParent(ctx context.Context, orgID string, parent *string) error {
	if parent == nil {
		return nil
	}
	c, err := store.GetCollection(ctx, r.DB, *parent)
	if errors.Is(err, store.ErrNotFound) || (err == nil && c.OrganizationID != orgID) {
		return errNoParent
	} else if err != nil {
		return err
	}
	// SECURITY: content is created in collections one may create in;
	// one the caller cannot see does not exist for them.
	role, err := r.collectionRole(ctx, c)
	if err != nil {
		return errNoParent
	}
	if !role.AtLeast(store.RoleCreate) {
		return Forbidden("creating content in this collection needs the create role on it")
	}
	return nil
}

// createInTree runs create in a transaction holding orgID's content lock,
// with the position new content takes at the end of parent (nil: the
// root). When parent is no longer a collection of orgID (deleted or
// transferred since it was checked) nothing is created and the answer is
// gone.
func (r *Resolver) createInTree(ctx context.Context, orgID string, parent *string, gone error, create func(ctx context.Context, tx bun.Tx, position int) error) error {
	return store.RunInTx(ctx, r.DB, func(ctx context.Context, tx bun.Tx) error {
		position, err := store.PlaceNew(ctx, tx, orgID, parent)
		if errors.Is(err, store.ErrNotFound) {
			return gone
		} else if err != nil {
			return err
		}
		return create(ctx, tx, position)
	})
}

func (r *mutationResolver) UpdateCollection(ctx context.Context, id string, input model.UpdateCollectionInput) (*store.Collection, error) {
	c, err := r.adminCollection(ctx, id)
	if err != nil {
		return nil, err
	}
	p := &patch{}
	setRequired(p, "title", "title", input.Title, &c.Title, length("title", 0, maxCollectionTitle))
	setOptional(p, "description", "description", input.Description, &c.Description, length("description", 0, maxCollectionDescription))
	setOptional(p, "defaultLevel", "default_level", input.DefaultLevel, &c.DefaultLevel, nil)
	if p.err != nil || !p.changed() {
		return c, p.err
	}
	c.UpdatedAt = r.now()
	defer r.loaders(ctx).OrgAccess.Clear(ctx, c.OrganizationID) // the default level may have changed
	return c, store.UpdateCollection(ctx, r.DB, c, p.columns...)
}

// adminCollection reads a collection the caller administers: 404 when they
// cannot see it, 403 when they can but are no admin.
func (r *Resolver) adminCollection(ctx context.Context, id string) (*store.Collection, error) {
	c, err := r.collection(ctx, id)
	if err != nil {
		return nil, err
	}
	// SECURITY: collections are changed by their admins.
	if err := r.requireCollectionRole(ctx, c, store.RoleAdmin); err != nil {
		return nil, err
	}
	return c, nil
}

func (r *mutationResolver) DeleteCollection(ctx context.Context, id string) (bool, error) {
	c, err := store.GetCollection(ctx, r.DB, id)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	// SECURITY: deleting a collection is for its admins. Strangers are
	// answered as for a collection that does not exist (nothing deleted,
	// 204): a 404 here would tell them the id names one.
	if err := r.requireCollectionRole(ctx, c, store.RoleAdmin); isNotFound(err) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	deleted := false
	err = r.changeContent(ctx, c.OrganizationID, func(ctx context.Context, tx bun.Tx, t *contentTree) error {
		c := t.collection(id)
		if c == nil {
			return nil
		}
		// Its children take its place in its parent, in their order.
		siblings := t.children(c.ParentID)
		i := slices.IndexFunc(siblings, func(x contentItem) bool { return x.collection == c })
		list := slices.Concat(siblings[:i], t.children(&c.ID), siblings[i+1:])
		if err := t.writeContainer(ctx, tx, c.ParentID, list); err != nil {
			return err
		}
		deleted, err = store.DeleteCollection(ctx, tx, c.OrganizationID, c.ID)
		return err
	})
	return deleted, err
}

func (r *mutationResolver) MoveCollection(ctx context.Context, id string, input model.MoveContentInput) (*store.Collection, error) {
	c, err := r.adminCollection(ctx, id)
	if err != nil {
		return nil, err
	}
	var out *store.Collection
	err = r.changeContent(ctx, c.OrganizationID, func(ctx context.Context, tx bun.Tx, t *contentTree) error {
		out = t.collection(id)
		if out == nil {
			return NotFound("collection")
		}
		return t.move(ctx, tx, contentItem{collection: out}, input)
	})
	return out, err
}

func (r *mutationResolver) MoveSpace(ctx context.Context, id string, input model.MoveContentInput) (*store.Space, error) {
	s, err := r.adminSpace(ctx, id)
	if err != nil {
		return nil, err
	}
	var out *store.Space
	err = r.changeContent(ctx, s.OrganizationID, func(ctx context.Context, tx bun.Tx, t *contentTree) error {
		out = t.space(id)
		if out == nil || out.DeletedAt != nil {
			return NotFound("space")
		}
		return t.move(ctx, tx, contentItem{space: out}, input)
	})
	return out, err
}

func (r *mutationResolver) TransferCollection(ctx context.Context, id string, input model.TransferContentInput) (*store.Collection, error) {
	c, err := r.adminCollection(ctx, id)
	if err != nil {
		return nil, err
	}
	var out *store.Collection
	err = r.transfer(ctx, c.OrganizationID, input.Organization, "collection", func(t *contentTree) (contentItem, error) {
		out = t.collection(id)
		if out == nil {
			return contentItem{}, NotFound("collection")
		}
		return contentItem{collection: out}, nil
	})
	return out, err
}

func (r *mutationResolver) TransferSpace(ctx context.Context, id string, input model.TransferContentInput) (*store.Space, error) {
	s, err := r.adminSpace(ctx, id)
	if err != nil {
		return nil, err
	}
	var out *store.Space
	err = r.transfer(ctx, s.OrganizationID, input.Organization, "space", func(t *contentTree) (contentItem, error) {
		out = t.space(id)
		if out == nil || out.DeletedAt != nil {
			return contentItem{}, NotFound("space")
		}
		return contentItem{space: out}, nil
	})
	return out, err
}

// adminSpace reads a live space the caller administers.
func (r *Resolver) adminSpace(ctx context.Context, id string) (*store.Space, error) {
	s, err := r.space(ctx, id)
	if err != nil {
		return nil, err
	}
	// SECURITY: moving and transferring a space are for its admins.
	if err := r.requireSpaceRole(ctx, s, store.RoleAdmin); err != nil {
		return nil, err
	}
	return s, nil
}

// transfer gives the item pick finds (with everything in it) to the
// organization target, at the end of its root. The caller administers the
// item (checked by the caller of transfer), and must administer both the
// source organization and the target.
func (r *Resolver) transfer(ctx context.Context, source, target, what string, pick func(*contentTree) (contentItem, error)) error {
	// SECURITY: an item leaves an organization only by its admins' hand: an
	// admin grant on the item is not enough to give it away.
	if err := requireOrgRole(ctx, source, store.RoleAdmin, what); err != nil {
		return err
	}
	// SECURITY: only into an organization the caller administers; one they
	// are not a member of does not exist for them.
	if err := requireOrgRole(ctx, target, store.RoleAdmin, "organization"); err != nil {
		return err
	}
	if target == source {
		return Conflict("the %s already belongs to this organization", what)
	}
	defer r.loaders(ctx).OrgAccess.Clear(ctx, source)
	defer r.loaders(ctx).OrgAccess.Clear(ctx, target)
	return store.RunInTx(ctx, r.DB, func(ctx context.Context, tx bun.Tx) error {
		// Both organizations' trees change: lock them in a fixed order.
		for _, org := range slices.Sorted(slices.Values([]string{source, target})) {
			if err := store.LockOrganization(ctx, tx, org); err != nil {
				return err
			}
		}
		src, err := r.loadContentTree(ctx, tx, source)
		if err != nil {
			return err
		}
		item, err := pick(src)
		if err != nil {
			return err
		}
		collections, spaces := src.subtree(item)
		if err := store.LockForTransfer(ctx, tx, source, spaces); err != nil {
			return err
		}
		published, err := store.SpacesPublishedIn(ctx, tx, spaces)
		if err != nil {
			return err
		}
		if len(published) > 0 {
			return PreconditionFailed("the %s cannot be transferred: space %s is published by a site; remove it from the site first", what, published[0])
		}
		dst, err := r.loadContentTree(ctx, tx, target)
		if err != nil {
			return err
		}
		// Grants name the old organization's members and teams: they stay behind.
		if err := store.DeleteGrantsOn(ctx, tx, source, collections, spaces); err != nil {
			return err
		}
		if err := store.MoveToOrganization(ctx, tx, source, target, collections, spaces); err != nil {
			return err
		}
		item.setOrganization(target)
		return item.place(ctx, tx, nil, dst.nextPosition(nil))
	})
}

// changeContent runs fn on orgID's content tree, under the organization's lock.
func (r *Resolver) changeContent(ctx context.Context, orgID string, fn func(ctx context.Context, tx bun.Tx, t *contentTree) error) error {
	defer r.loaders(ctx).OrgAccess.Clear(ctx, orgID) // the tree changed under the request's snapshot
	return store.RunInTx(ctx, r.DB, func(ctx context.Context, tx bun.Tx) error {
		if err := store.LockOrganization(ctx, tx, orgID); err != nil {
			return err
		}
		t, err := r.loadContentTree(ctx, tx, orgID)
		if err != nil {
			return err
		}
		return fn(ctx, tx, t)
	})
}

// contentTree is an organization's collections and spaces in memory.
type contentTree struct {
	*store.ContentTree
	r *Resolver // for permission checks on destinations
}

func (r *Resolver) loadContentTree(ctx context.Context, tx bun.IDB, orgID string) (*contentTree, error) {
	t, err := store.LoadContentTree(ctx, tx, orgID)
	if err != nil {
		return nil, err
	}
	return &contentTree{ContentTree: t, r: r}, nil
}

// contentItem is a child of a container: a collection or a space.
type contentItem struct {
	collection *store.Collection
	space      *store.Space
}

func (i contentItem) id() string {
	if i.collection != nil {
		return i.collection.ID
	}
	return i.space.ID
}

func (i contentItem) kind() string {
	if i.collection != nil {
		return "collection"
	}
	return "space"
}

func (i contentItem) parent() *string {
	if i.collection != nil {
		return i.collection.ParentID
	}
	return i.space.ParentID
}

func (i contentItem) position() int {
	if i.collection != nil {
		return i.collection.Position
	}
	return i.space.Position
}

func (i contentItem) organization() string {
	if i.collection != nil {
		return i.collection.OrganizationID
	}
	return i.space.OrganizationID
}

func (i contentItem) setOrganization(orgID string) {
	if i.collection != nil {
		i.collection.OrganizationID = orgID
	} else {
		i.space.OrganizationID = orgID
	}
}

// place writes the item's parent and position, when they change.
func (i contentItem) place(ctx context.Context, tx bun.IDB, parent *string, position int) error {
	if sameContainer(i.parent(), parent) && i.position() == position {
		return nil
	}
	table := "spaces"
	if i.collection != nil {
		table, i.collection.ParentID, i.collection.Position = "collections", parent, position
	} else {
		i.space.ParentID, i.space.Position = parent, position
	}
	return store.SetPlace(ctx, tx, table, i.organization(), i.id(), parent, position)
}

func (t *contentTree) collection(id string) *store.Collection {
	i := slices.IndexFunc(t.Collections, func(c *store.Collection) bool { return c.ID == id })
	if i < 0 {
		return nil
	}
	return t.Collections[i]
}

func (t *contentTree) space(id string) *store.Space {
	i := slices.IndexFunc(t.Spaces, func(s *store.Space) bool { return s.ID == id })
	if i < 0 {
		return nil
	}
	return t.Spaces[i]
}

// children are the items of a container (nil: the root) in order, deleted
// spaces included so they keep their place for a restore.
func (t *contentTree) children(parent *string) []contentItem {
	var out []contentItem
	for _, c := range t.Collections {
		if sameContainer(c.ParentID, parent) {
			out = append(out, contentItem{collection: c})
		}
	}
	for _, s := range t.Spaces {
		if sameContainer(s.ParentID, parent) {
			out = append(out, contentItem{space: s})
		}
	}
	slices.SortFunc(out, func(a, b contentItem) int {
		return cmp.Or(cmp.Compare(a.position(), b.position()), cmp.Compare(a.id(), b.id()))
	})
	return out
}

func (t *contentTree) nextPosition(parent *string) int {
	children := t.children(parent)
	if len(children) == 0 {
		return 0
	}
	return children[len(children)-1].position() + 1
}

// within tells whether collection id is ancestor or one of its descendants.
func (t *contentTree) within(id, ancestor string) bool {
	for seen := 0; seen <= len(t.Collections); seen++ { // a bound, should the data hold a cycle
		if id == ancestor {
			return true
		}
		c := t.collection(id)
		if c == nil || c.ParentID == nil {
			return false
		}
		id = *c.ParentID
	}
	return false
}

// subtree lists the ids of an item and of everything in it.
func (t *contentTree) subtree(item contentItem) (collections, spaces []string) {
	if item.space != nil {
		return nil, []string{item.space.ID}
	}
	for _, c := range t.Collections {
		if t.within(c.ID, item.collection.ID) {
			collections = append(collections, c.ID)
		}
	}
	for _, s := range t.Spaces {
		if s.ParentID != nil && slices.Contains(collections, *s.ParentID) {
			spaces = append(spaces, s.ID)
		}
	}
	return collections, spaces
}

// writeContainer makes list the children of parent, in this order.
func (t *contentTree) writeContainer(ctx context.Context, tx bun.IDB, parent *string, list []contentItem) error {
	for i, item := range list {
		if err := item.place(ctx, tx, parent, i); err != nil {
			return err
		}
	}
	return nil
}

// move carries out a MoveContentInput for item.
func (t *contentTree) move(ctx context.Context, tx bun.IDB, item contentItem, input model.MoveContentInput) error {
	parent := item.parent()
	newParent, parentSet := input.Parent.ValueOK()
	position, positionSet := input.Position.ValueOK()
	if !parentSet && (!positionSet || position == nil) {
		return BadRequest("give a parent, a position or both")
	}
	if parentSet {
		parent = newParent
		if parent != nil {
			if t.collection(*parent) == nil {
				return Invalid("parent", "no such collection in this organization")
			}
			if err := t.checkDestination(ctx, *parent); err != nil {
				return err
			}
			if item.collection != nil && t.within(*parent, item.collection.ID) {
				return Invalid("parent", "a collection cannot move into itself or one of its descendants")
			}
		}
	}
	var target *pointer
	placeAfter := false
	if position != nil {
		before, err := contentPointer("position.before", position.Before)
		if err != nil {
			return err
		}
		after, err := contentPointer("position.after", position.After)
		if err != nil {
			return err
		}
		if target, placeAfter, err = movePosition("position", before, after); err != nil {
			return err
		}
	}

	siblings := t.children(parent)
	from := slices.IndexFunc(siblings, func(x contentItem) bool { return x.id() == item.id() })
	list := slices.DeleteFunc(slices.Clone(siblings), func(x contentItem) bool { return x.id() == item.id() })
	at := len(list)
	if target != nil {
		i := slices.IndexFunc(list, func(x contentItem) bool { return x.kind() == target.kind && x.id() == target.id })
		if i < 0 {
			return Invalid("position", "the %s %s is not among the children of the destination", target.kind, target.id)
		}
		at = i
		if placeAfter {
			at++
		}
	}
	if from >= 0 && from == at {
		return Conflict("the %s is already there: the move would change nothing", item.kind())
	}
	return t.writeContainer(ctx, tx, parent, slices.Insert(list, at, item))
}

// checkDestination checks the caller may move content into collection id:
// they administer it (and one they cannot see does not exist for them).
func (t *contentTree) checkDestination(ctx context.Context, id string) error {
	role, err := t.r.collectionRole(ctx, t.collection(id))
	if err != nil {
		return Invalid("parent", "no such collection in this organization")
	}
	if !role.AtLeast(store.RoleAdmin) {
		return Forbidden("moving content into this collection needs the admin role on it")
	}
	return nil
}

// contentPointer reads one side of a ContentPosition.
func contentPointer(field string, p graphql.Omittable[*model.ContentPointer]) (*pointer, error) {
	ptr, ok := p.ValueOK()
	if !ok || ptr == nil {
		return nil, nil
	}
	switch ptr.Type {
	case model.ContentPointerTypeSpace:
		if id, _ := ptr.Space.ValueOK(); id != nil {
			return &pointer{kind: "space", id: *id}, nil
		}
		return nil, Invalid(field+".space", "is required with type space")
	default:
		if id, _ := ptr.Collection.ValueOK(); id != nil {
			return &pointer{kind: "collection", id: *id}, nil
		}
		return nil, Invalid(field+".collection", "is required with type collection")
	}
}
