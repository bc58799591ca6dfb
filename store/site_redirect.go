package store

import (
	"context"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
)

// Redirects of published sites: a site's own (GitBook's SiteRedirect),
// which those who manage the site make, and the automatic redirects of a
// space's pages whose path changed, which every new revision of the space
// keeps up to date (RecordPageMoves). The reader serves both as 301s, the
// automatic ones first, at addresses that lead to no page.

// SiteRedirect is a redirect of a site: a visitor whose address under the
// site is Source is sent to Destination.
type SiteRedirect struct {
	bun.BaseModel `bun:"table:site_redirects,alias:site_redirect"`

	ID             string `bun:"id,pk"`
	OrganizationID string `bun:"organization_id"`
	SiteID         string `bun:"site_id"`
	// Source is a path under the site's address ("/old/page"), in its
	// canonical form (percent-encoding where needed only, upper-case hex):
	// the one a request's path is matched in. Unique within the site.
	Source      string                  `bun:"source"`
	Destination SiteRedirectDestination `bun:"embed:destination_"`
	CreatedAt   time.Time               `bun:"created_at"`
	UpdatedAt   time.Time               `bun:"updated_at"`
}

// Object is the REST type name of a site redirect.
func (SiteRedirect) Object() string { return "site-redirect" }

// SiteRedirectDestination is where a site redirect leads: the field its
// Kind names is set, the others nil. Ids are not checked against the site
// once written: a destination gone leads nowhere.
type SiteRedirectDestination struct {
	Kind          SiteRedirectDestinationKind `bun:"kind"`
	SiteSectionID *string                     `bun:"site_section_id"`
	SiteSpaceID   *string                     `bun:"site_space_id"`
	PageID        *string                     `bun:"page_id"`
	// URL is a path of the site ("/guides/setup", perhaps with a query or
	// a fragment) or an absolute http(s) URL.
	URL *string `bun:"url"`
}

// CreateSiteRedirect inserts r: ErrConflict when the site has a redirect
// from the same source.
func CreateSiteRedirect(ctx context.Context, db bun.IDB, r *SiteRedirect) error {
	_, err := db.NewInsert().Model(r).Exec(ctx)
	return translate(err)
}

// ListSiteRedirects pages through the redirects of site siteID of orgID,
// oldest first; with search, those whose source holds it (ignoring case).
func ListSiteRedirects(ctx context.Context, db bun.IDB, orgID, siteID, search string, p Page) ([]*SiteRedirect, error) {
	ctx = inOrganization(ctx, orgID)
	var rows []*SiteRedirect
	q := db.NewSelect().Model(&rows).Where("site_redirect.organization_id = ? AND site_redirect.site_id = ?", orgID, siteID)
	if search != "" {
		q = q.Where("site_redirect.source ILIKE ? ESCAPE '\\'", "%"+escapeLike(search)+"%")
	}
	err := p.scan(ctx, p.byCreation(q, "site_redirect"))
	return rows, translate(err)
}

// CountSiteRedirects is the number of redirects of site siteID of orgID.
func CountSiteRedirects(ctx context.Context, db bun.IDB, orgID, siteID string) (int, error) {
	ctx = inOrganization(ctx, orgID)
	n, err := db.NewSelect().Model((*SiteRedirect)(nil)).
		Where("organization_id = ? AND site_id = ?", orgID, siteID).Count(ctx)
	return int(n), translate(err)
}

// GetSiteRedirect returns redirect id of site siteID of orgID: ErrNotFound
// when the site has none of that id.
func GetSiteRedirect(ctx context.Context, db bun.IDB, orgID, siteID, id string) (*SiteRedirect, error) {
	ctx = inOrganization(ctx, orgID)
	return selectRow[SiteRedirect](ctx, db, "organization_id = ? AND site_id = ? AND id = ?", orgID, siteID, id)
}

// SiteRedirectBySource returns the redirect of site siteID of orgID from
// source (canonical): ErrNotFound when there is none.
func SiteRedirectBySource(ctx context.Context, db bun.IDB, orgID, siteID, source string) (*SiteRedirect, error) {
	ctx = inOrganization(ctx, orgID)
	return selectRow[SiteRedirect](ctx, db, "organization_id = ? AND site_id = ? AND source = ?", orgID, siteID, source)
}

// UpdateSiteRedirect writes the given columns of r, and its UpdatedAt:
// ErrConflict when its new source is another redirect's.
func UpdateSiteRedirect(ctx context.Context, db bun.IDB, r *SiteRedirect, columns ...string) error {
	_, err := byKey(db, db.NewUpdate().Model(r).Column(append(columns, "updated_at")...), r).Exec(ctx)
	return translate(err)
}

// DeleteSiteRedirect removes redirect id of site siteID of orgID,
// reporting whether there was one.
func DeleteSiteRedirect(ctx context.Context, db bun.IDB, orgID, siteID, id string) (bool, error) {
	return deleteRows(ctx, db, (*SiteRedirect)(nil), "organization_id = ? AND site_id = ? AND id = ?", orgID, siteID, id)
}

// PageRedirect is an automatic redirect of a space: the page that was at
// Path is PageID, wherever it is now.
type PageRedirect struct {
	bun.BaseModel `bun:"table:page_redirects,alias:page_redirect"`

	OrganizationID string `bun:"organization_id,pk"`
	SpaceID        string `bun:"space_id,pk"`
	// Path is the page's path then, as a revision's page tree makes paths
	// (slugs under their ancestors', "getting-started/install").
	Path      string    `bun:"path,pk"`
	PageID    string    `bun:"page_id"`
	CreatedAt time.Time `bun:"created_at"`
}

// MaxPageRedirects bounds a space's automatic redirects: past it, the
// oldest go first. A move of a part of the tree redirects every page under
// it, so the bound is well above a large space's pages.
const MaxPageRedirects = 10_000

// PageRedirectAt returns the automatic redirect of space spaceID of orgID
// from path: ErrNotFound when there is none.
func PageRedirectAt(ctx context.Context, db bun.IDB, orgID, spaceID, path string) (*PageRedirect, error) {
	ctx = inOrganization(ctx, orgID)
	return selectRow[PageRedirect](ctx, db, "organization_id = ? AND space_id = ? AND path = ?", orgID, spaceID, path)
}

// RecordPageMoves keeps the automatic redirects of space spaceID of orgID
// up to date as its content goes from before to after (a new live
// revision), in the transaction that makes it so:
//
//   - every page of both whose path changed leaves a redirect from its old
//     path to itself, unless a page is at that path now;
//   - a redirect from a path where a page is now goes (it would never be
//     followed: a page is served first), as do the redirects to a page no
//     longer there;
//   - past MaxPageRedirects, the oldest go.
//
// Redirects lead to a page by id: after A→B then B→C, A and B both lead to
// C. Every redirect so leads to a page of the live revision, at a path no
// page holds.
func RecordPageMoves(ctx context.Context, db bun.IDB, orgID, spaceID string, before, after *PageTree, at time.Time) error {
	before, after = orEmpty(before), orEmpty(after)
	live := make(map[string]bool, len(after.paths))
	for _, p := range after.paths {
		live[p] = true
	}
	was := make(map[string]bool, len(before.paths))
	for _, p := range before.paths {
		was[p] = true
	}
	var moved []*PageRedirect
	var gone []string
	for id, old := range before.paths {
		now, still := after.paths[id]
		switch {
		case !still:
			gone = append(gone, id)
		case now != old && !live[old]:
			moved = append(moved, &PageRedirect{OrganizationID: orgID, SpaceID: spaceID, Path: old, PageID: id, CreatedAt: at})
		}
	}
	var taken []string // paths a page holds now and held none before
	for _, p := range after.paths {
		if !was[p] {
			taken = append(taken, p)
		}
	}
	if len(taken) > 0 || len(gone) > 0 {
		_, err := db.NewDelete().Model((*PageRedirect)(nil)).
			Where("organization_id = ? AND space_id = ? AND (path = ANY(?) OR page_id = ANY(?))",
				orgID, spaceID, pgdialect.Array(nonEmpty(taken)), pgdialect.Array(nonEmpty(gone))).Exec(ctx)
		if err != nil {
			return translate(err)
		}
	}
	if len(moved) == 0 {
		return nil
	}
	_, err := db.NewInsert().Model(&moved).
		On("CONFLICT (organization_id, space_id, path) DO UPDATE").
		Set("page_id = EXCLUDED.page_id, created_at = EXCLUDED.created_at").Exec(ctx)
	if err != nil {
		return translate(err)
	}
	// The oldest past the bound go: those before the last one kept, read
	// once (ties of a batch are broken by path).
	_, err = db.NewDelete().Model((*PageRedirect)(nil)).
		Where(`organization_id = ? AND space_id = ? AND (created_at, path) < (SELECT created_at, path FROM page_redirects
			WHERE organization_id = ? AND space_id = ? ORDER BY created_at DESC, path DESC OFFSET ? LIMIT 1)`,
			orgID, spaceID, orgID, spaceID, MaxPageRedirects-1).Exec(ctx)
	return translate(err)
}

// orEmpty is t, or an empty tree for nil.
func orEmpty(t *PageTree) *PageTree {
	if t == nil {
		return NewPageTree(nil)
	}
	return t
}
