package store

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"
	"time"

	"github.com/uptrace/bun"
)

// Revision is one immutable state of a space's content.
type Revision struct {
	bun.BaseModel `bun:"table:revisions,alias:revision"`

	ID             string    `bun:"id,pk"`
	OrganizationID string    `bun:"organization_id"`
	SpaceID        string    `bun:"space_id"`
	Parents        []string  `bun:"parents,array"`
	Type           string    `bun:"type"`
	CreatedBy      *string   `bun:"created_by"`
	CreatedAt      time.Time `bun:"created_at"`
	// Git is the commit a git sync made or read, when there was one.
	Git *GitCommit `bun:"git,type:jsonb"`
}

// GitCommit is a revision's git commit.
type GitCommit struct {
	OID              string `json:"oid"`
	Message          string `json:"message"`
	CreatedByGitBook bool   `json:"createdByGitBook"`
	URL              string `json:"url,omitempty"`
	Ref              string `json:"ref,omitempty"`
}

// Object is the REST type name of a revision.
func (Revision) Object() string { return "revision" }

// RevisionPage is a page as one revision holds it.
type RevisionPage struct {
	bun.BaseModel `bun:"table:revision_pages,alias:rp"`

	RevisionID string `bun:"revision_id,pk"`
	ID         string `bun:"page_id,pk"`
	// OrganizationID is read, and written by CreateRevision (the
	// revision's).
	OrganizationID string  `bun:"organization_id"`
	ParentID       *string `bun:"parent_id"`
	Position       int     `bun:"position"`
	Type           string  `bun:"type"`
	Title          string  `bun:"title"`
	Slug           string  `bun:"slug"`
	Emoji          *string `bun:"emoji"`
	Description    *string `bun:"description"`
	Hidden         bool    `bun:"hidden"`
	// NoIndex: left out of the site's search; NoRobotsIndex: out of
	// search engines (sitemap, robots.txt, noindex).
	NoIndex       bool      `bun:"no_index"`
	NoRobotsIndex bool      `bun:"no_robots_index"`
	BodySHA256    *string   `bun:"body_sha256"`
	CreatedAt     time.Time `bun:"created_at"`
	UpdatedAt     time.Time `bun:"updated_at"`
	// GitPath and GitOID say where a git sync read or wrote the page.
	GitPath *string `bun:"git_path"`
	GitOID  *string `bun:"git_oid"`
}

// Page types.
const (
	PageDocument = "document"
	PageGroup    = "group"
)

// NewEmptyRevision returns the first revision of a new space.
func NewEmptyRevision(spaceID string, createdBy *string, now time.Time) *Revision {
	return &Revision{ID: NewID(), SpaceID: spaceID, Parents: []string{}, Type: "edits", CreatedBy: createdBy, CreatedAt: now}
}

// GetRevision returns revision id of space spaceID.
func GetRevision(ctx context.Context, db bun.IDB, orgID, spaceID, id string) (*Revision, error) {
	ctx = inOrganization(ctx, orgID)
	return selectRow[Revision](ctx, db, "organization_id = ? AND id = ? AND space_id = ?", orgID, id, spaceID)
}

// RevisionPages returns every page of a revision of orgID.
func RevisionPages(ctx context.Context, db bun.IDB, orgID, revisionID string) ([]*RevisionPage, error) {
	ctx = inOrganization(ctx, orgID)
	return selectRows[RevisionPage](ctx, db, "organization_id = ? AND revision_id = ?", "", orgID, revisionID)
}

// RevisionsPages returns every page of these revisions of orgID, by
// revision.
func RevisionsPages(ctx context.Context, db bun.IDB, orgID string, revisionIDs []string) (map[string][]*RevisionPage, error) {
	ctx = inOrganization(ctx, orgID)
	rows, err := selectRows[RevisionPage](ctx, db, "organization_id = ? AND revision_id = ANY(?)", "", orgID, revisionIDs)
	out := make(map[string][]*RevisionPage, len(revisionIDs))
	for _, p := range rows {
		out[p.RevisionID] = append(out[p.RevisionID], p)
	}
	return out, err
}

// pageTreeCacheSize is how many revisions' page trees a process keeps.
const pageTreeCacheSize = 256

// PageTrees returns the page trees of these revisions of orgID. A revision never
// changes once written, so its tree is cached for the life of the process
// (the most recently used ones) with no invalidation: reads of the same
// content, and searches over many spaces, read the pages once. The trees
// and their pages are shared between requests: callers must not modify
// them (edits build their own trees from LoadContent).
func (db *DB) PageTrees(ctx context.Context, orgID string, revisionIDs []string) (map[string]*PageTree, error) {
	out := make(map[string]*PageTree, len(revisionIDs))
	var missing []string
	for _, id := range revisionIDs {
		if t, ok := db.trees.Get(id); ok {
			out[id] = t
		} else {
			missing = append(missing, id)
		}
	}
	if len(missing) == 0 {
		return out, nil
	}
	pages, err := RevisionsPages(ctx, db, orgID, missing)
	if err != nil {
		return nil, err
	}
	for _, id := range missing {
		t := NewPageTree(pages[id])
		out[id] = t
		db.trees.Add(id, t)
	}
	return out, nil
}

// PageBodies returns the markdown of these body digests of orgID.
func PageBodies(ctx context.Context, db bun.IDB, orgID string, digests []string) (map[string]string, error) {
	ctx = inOrganization(ctx, orgID)
	var rows []struct {
		SHA256   string `bun:"sha256"`
		Markdown string `bun:"markdown"`
	}
	err := db.NewSelect().TableExpr("page_bodies").Column("sha256", "markdown").
		Where("organization_id = ? AND sha256 IN (?)", orgID, bun.List(digests)).Scan(ctx, &rows)
	out := make(map[string]string, len(rows))
	for _, r := range rows {
		out[r.SHA256] = r.Markdown
	}
	return out, translate(err)
}

// SaveBody stores a page body of organization orgID (the organization of
// the space whose pages will show it) and returns its digest (nil for an
// empty body). Bodies are stored once per organization and text.
func SaveBody(ctx context.Context, db bun.IDB, orgID, markdown string) (*string, error) {
	if markdown == "" {
		return nil, nil
	}
	digest := bodyDigest(markdown)
	// The body and its search sections are written together.
	err := RunInTx(ctx, db, func(ctx context.Context, tx bun.Tx) error {
		res, err := tx.NewRaw(`INSERT INTO page_bodies (organization_id, sha256, markdown) VALUES (?, ?, ?)
			ON CONFLICT (sha256, organization_id) DO NOTHING`, orgID, digest, markdown).Exec(ctx)
		if err != nil {
			return translate(err)
		}
		if n, _ := res.RowsAffected(); n > 0 {
			return saveSections(ctx, tx, orgID, digest, markdown)
		}
		return nil
	})
	return &digest, err
}

// SaveSpaceBody is SaveBody in the organization of space spaceID, read by
// the insert itself (no round trip). Nothing is stored when there is no
// such space: the edit that would show the body fails on the space anyway.
func SaveSpaceBody(ctx context.Context, db bun.IDB, spaceID, markdown string) (*string, error) {
	if markdown == "" {
		return nil, nil
	}
	digest := bodyDigest(markdown)
	err := RunInTx(ctx, db, func(ctx context.Context, tx bun.Tx) error {
		var orgID []string
		err := tx.NewRaw(`INSERT INTO page_bodies (organization_id, sha256, markdown)
			SELECT organization_id, ?, ? FROM spaces WHERE id = ?
			ON CONFLICT (sha256, organization_id) DO NOTHING RETURNING organization_id`, digest, markdown, spaceID).Scan(ctx, &orgID)
		if err != nil {
			return translate(err)
		}
		if len(orgID) > 0 {
			return saveSections(ctx, tx, orgID[0], digest, markdown)
		}
		return nil
	})
	return &digest, err
}

func bodyDigest(markdown string) string {
	sum := sha256.Sum256([]byte(markdown))
	return hex.EncodeToString(sum[:])
}

// Content is what a revision holds: its pages and files.
type Content struct {
	Pages []*RevisionPage
	Files []*RevisionFile
}

// Copy returns copies of c's rows, for a new revision to hold.
func (c Content) Copy() Content {
	out := Content{Pages: make([]*RevisionPage, len(c.Pages)), Files: make([]*RevisionFile, len(c.Files))}
	for i, p := range c.Pages {
		cp := *p
		out.Pages[i] = &cp
	}
	for i, f := range c.Files {
		cf := *f
		out.Files[i] = &cf
	}
	return out
}

// LoadContent reads the pages and files of a revision of orgID.
func LoadContent(ctx context.Context, db bun.IDB, orgID, revisionID string) (Content, error) {
	ctx = inOrganization(ctx, orgID)
	pages, err := RevisionPages(ctx, db, orgID, revisionID)
	if err != nil {
		return Content{}, err
	}
	files, err := RevisionFiles(ctx, db, orgID, revisionID)
	return Content{Pages: pages, Files: files}, err
}

// CreateRevision inserts rev with its content, all in the space's
// organization.
func CreateRevision(ctx context.Context, db bun.IDB, rev *Revision, c Content) error {
	if err := inParentOrganization(ctx, db, &rev.OrganizationID, "spaces", rev.SpaceID); err != nil {
		return err
	}
	if _, err := db.NewInsert().Model(rev).Exec(ctx); err != nil {
		return translate(err)
	}
	if len(c.Pages) > 0 {
		for _, p := range c.Pages {
			p.RevisionID = rev.ID
		}
		if _, err := db.NewInsert().Model(&c.Pages).Value("organization_id", "?", rev.OrganizationID).Exec(ctx); err != nil {
			return translate(err)
		}
	}
	if len(c.Files) > 0 {
		for _, f := range c.Files {
			f.RevisionID = rev.ID
		}
		if _, err := db.NewInsert().Model(&c.Files).Value("organization_id", "?", rev.OrganizationID).Exec(ctx); err != nil {
			return translate(err)
		}
	}
	return nil
}

// RevisionFile is a file as one revision holds it.
type RevisionFile struct {
	bun.BaseModel `bun:"table:revision_files,alias:rf"`

	RevisionID string `bun:"revision_id,pk"`
	ID         string `bun:"file_id,pk"`
	// OrganizationID is read, and written by CreateRevision (the
	// revision's).
	OrganizationID string  `bun:"organization_id"`
	Name           string  `bun:"name"`
	ContentType    string  `bun:"content_type"`
	Size           int64   `bun:"size"`
	BlobSHA256     string  `bun:"blob_sha256"`
	Width          *int    `bun:"width"`
	Height         *int    `bun:"height"`
	GitPath        *string `bun:"git_path"`
	GitOID         *string `bun:"git_oid"`
}

// RevisionFiles returns the files of a revision of orgID, by name.
func RevisionFiles(ctx context.Context, db bun.IDB, orgID, revisionID string) ([]*RevisionFile, error) {
	ctx = inOrganization(ctx, orgID)
	return selectRows[RevisionFile](ctx, db, "organization_id = ? AND revision_id = ?", "name, file_id", orgID, revisionID)
}

// FileByDigest returns a file of one of the revisions revisionIDs of
// orgID whose bytes have digest sha256 (hex), or ErrNotFound.
func FileByDigest(ctx context.Context, db bun.IDB, orgID string, revisionIDs []string, sha256 string) (*RevisionFile, error) {
	ctx = inOrganization(ctx, orgID)
	return selectRow[RevisionFile](ctx, db, "organization_id = ? AND revision_id = ANY(?) AND blob_sha256 = ?",
		orgID, revisionIDs, sha256)
}

// ServerSecret returns the server's secret called name, made (32 random
// bytes) the first time any process asks.
func ServerSecret(ctx context.Context, db bun.IDB, name string) ([]byte, error) {
	var value []byte
	fresh := make([]byte, 32)
	if _, err := rand.Read(fresh); err != nil {
		return nil, err
	}
	err := db.NewRaw(`INSERT INTO server_secrets (name, value) VALUES (?, ?)
		ON CONFLICT (name) DO UPDATE SET name = EXCLUDED.name RETURNING value`, name, fresh).Scan(ctx, &value)
	return value, translate(err)
}

// LockSpace reads space id for update, for the rest of tx. orgID is the
// organization the caller read it in ("" if none): the space returned is
// where it is now, should a transfer have moved it meanwhile (lockRow).
//
// Rows are locked FOR NO KEY UPDATE throughout the store, the lock an UPDATE
// of non-key columns takes: ids never change, and the stronger FOR UPDATE
// would also block every insert of a row referring to the locked one (a
// foreign key check takes KEY SHARE). Submitting a review with a comment
// (change request, then space by the comment's key) and merging (space, then
// change request) deadlocked on exactly that.
func LockSpace(ctx context.Context, tx bun.Tx, orgID, id string) (*Space, error) {
	s := new(Space)
	err := lockRow(ctx, tx, "spaces", orgID, id, "NO KEY UPDATE", func(q *bun.SelectQuery) error { return q.Model(s).Scan(ctx) })
	return s, err
}

// PageTree is a revision's pages with the indexes reads need.
type PageTree struct {
	Pages    []*RevisionPage
	byID     map[string]*RevisionPage
	children map[string][]*RevisionPage // by parent id; "" is the root
	paths    map[string]string
}

// NewPageTree indexes pages.
func NewPageTree(pages []*RevisionPage) *PageTree {
	t := &PageTree{Pages: pages, byID: make(map[string]*RevisionPage, len(pages)), children: map[string][]*RevisionPage{}, paths: map[string]string{}}
	for _, p := range pages {
		t.byID[p.ID] = p
		t.children[parentKey(p.ParentID)] = append(t.children[parentKey(p.ParentID)], p)
	}
	for _, list := range t.children {
		slices.SortFunc(list, func(a, b *RevisionPage) int {
			return cmp.Or(cmp.Compare(a.Position, b.Position), cmp.Compare(a.ID, b.ID))
		})
	}
	var walk func(parent string, prefix string)
	walk = func(parent, prefix string) {
		for _, p := range t.children[parent] {
			path := p.Slug
			if prefix != "" {
				path = prefix + "/" + p.Slug
			}
			t.paths[p.ID] = path
			walk(p.ID, path)
		}
	}
	walk("", "")
	return t
}

func parentKey(id *string) string {
	if id == nil {
		return ""
	}
	return *id
}

// Page returns page id, or nil.
func (t *PageTree) Page(id string) *RevisionPage { return t.byID[id] }

// Children are the pages under parent (nil: the top level), in order.
func (t *PageTree) Children(parent *string) []*RevisionPage { return t.children[parentKey(parent)] }

// Path is a page's path in the revision: its slug under its ancestors'.
func (t *PageTree) Path(id string) string { return t.paths[id] }

// ByPath returns the page at path (surrounding slashes ignored), or nil.
func (t *PageTree) ByPath(path string) *RevisionPage {
	path = strings.Trim(path, "/")
	for id, p := range t.paths {
		if p == path {
			return t.byID[id]
		}
	}
	return nil
}

// Within tells whether page id is ancestor or one of its descendants.
func (t *PageTree) Within(id, ancestor string) bool {
	for range len(t.Pages) + 1 {
		if id == ancestor {
			return true
		}
		p := t.byID[id]
		if p == nil || p.ParentID == nil {
			return false
		}
		id = *p.ParentID
	}
	return false
}

// Depth is the level of page id: 1 at the top.
func (t *PageTree) Depth(id string) int {
	d := 0
	for p := t.byID[id]; p != nil && d <= len(t.Pages); d++ {
		if p.ParentID == nil {
			return d + 1
		}
		p = t.byID[*p.ParentID]
	}
	return d
}

// Height is the number of levels of page id's subtree: 1 without pages under it.
func (t *PageTree) Height(id string) int {
	h := 0
	for _, c := range t.children[id] {
		h = max(h, t.Height(c.ID))
	}
	return h + 1
}

// RevisionOrganization is the organization of revision id (an address
// signed for a download names the revision alone), from the directory.
func RevisionOrganization(ctx context.Context, db *DB, id string) (string, error) {
	orgs, err := db.OrganizationsOf(ctx, "revisions", []string{id})
	if err != nil {
		return "", err
	}
	org, ok := orgs[id]
	if !ok {
		return "", ErrNotFound
	}
	return org, nil
}

// RevisionByID returns revision id of orgID, of whichever space (callers
// reached it through a space they checked).
func RevisionByID(ctx context.Context, db bun.IDB, orgID, id string) (*Revision, error) {
	ctx = inOrganization(ctx, orgID)
	return selectRow[Revision](ctx, db, "organization_id = ? AND id = ?", orgID, id)
}
