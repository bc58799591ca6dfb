package store

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/uptrace/bun"
)

// The structure of a site: section groups and sections share one ordering
// per container (the site root or a group); site spaces are ordered within
// their section, or at the site root when the site has no sections. The
// ordering rules live in graph; this file reads and writes rows.

// SiteSectionGroup groups sections (and other groups) of a site.
type SiteSectionGroup struct {
	bun.BaseModel `bun:"table:site_section_groups"`

	ID             string    `bun:"id,pk"`
	OrganizationID string    `bun:"organization_id"`
	SiteID         string    `bun:"site_id"`
	ParentGroupID  *string   `bun:"parent_group_id"`
	Title          string    `bun:"title"`
	Icon           *string   `bun:"icon"`
	Position       int       `bun:"position"`
	CreatedAt      time.Time `bun:"created_at"`
}

// Object is the REST type name of a section group.
func (SiteSectionGroup) Object() string { return "site-section-group" }

// SiteSection is a section of a site, holding site spaces (its variants).
type SiteSection struct {
	bun.BaseModel `bun:"table:site_sections"`

	ID             string    `bun:"id,pk"`
	OrganizationID string    `bun:"organization_id"`
	SiteID         string    `bun:"site_id"`
	GroupID        *string   `bun:"group_id"`
	Title          string    `bun:"title"`
	Description    *string   `bun:"description"`
	Path           string    `bun:"path"`
	Icon           *string   `bun:"icon"`
	Condition      *string   `bun:"condition"`
	IsDefault      bool      `bun:"is_default"`
	Position       int       `bun:"position"`
	CreatedAt      time.Time `bun:"created_at"`
}

// Object is the REST type name of a section.
func (SiteSection) Object() string { return "site-section" }

// SiteSpace publishes a space in a site.
type SiteSpace struct {
	bun.BaseModel `bun:"table:site_spaces"`

	ID             string    `bun:"id,pk"`
	OrganizationID string    `bun:"organization_id"`
	SiteID         string    `bun:"site_id"`
	SectionID      *string   `bun:"section_id"`
	SpaceID        string    `bun:"space_id"`
	Path           string    `bun:"path"`
	Condition      *string   `bun:"condition"`
	IsDefault      bool      `bun:"is_default"`
	Position       int       `bun:"position"`
	CreatedAt      time.Time `bun:"created_at"`
}

// Object is the REST type name of a site space.
func (SiteSpace) Object() string { return "site-space" }

// GroupsOfSites returns the section groups of these sites of orgID, by
// site and position.
func GroupsOfSites(ctx context.Context, db bun.IDB, orgID string, siteIDs []string) ([]*SiteSectionGroup, error) {
	ctx = inOrganization(ctx, orgID)
	rows, err := selectRows[SiteSectionGroup](ctx, db, "organization_id = ? AND site_id = ANY(?)", "", orgID, siteIDs)
	sortBySitePosition(rows, func(g *SiteSectionGroup) (string, int, string) { return g.SiteID, g.Position, g.ID })
	return rows, err
}

// SectionsOfSites returns the sections of these sites of orgID, by site
// and position.
func SectionsOfSites(ctx context.Context, db bun.IDB, orgID string, siteIDs []string) ([]*SiteSection, error) {
	ctx = inOrganization(ctx, orgID)
	rows, err := selectRows[SiteSection](ctx, db, "organization_id = ? AND site_id = ANY(?)", "", orgID, siteIDs)
	sortBySitePosition(rows, func(s *SiteSection) (string, int, string) { return s.SiteID, s.Position, s.ID })
	return rows, err
}

// sortBySitePosition orders the rows of a site's structure by site,
// position and id. The reads of a whole site sort here rather than with
// ORDER BY: PostgreSQL compares text through the database's collation, and
// sorting a site's thousand site spaces took it ~1.5 ms of a 3 ms read.
// Go compares bytes, which is the order of the C.UTF-8 collation the
// embedded server is created with; ids and sites only break ties in any
// case (positions are unique within a container).
func sortBySitePosition[T any](rows []*T, key func(*T) (site string, position int, id string)) {
	slices.SortFunc(rows, func(a, b *T) int {
		sa, pa, ia := key(a)
		sb, pb, ib := key(b)
		return cmp.Or(strings.Compare(sa, sb), cmp.Compare(pa, pb), strings.Compare(ia, ib))
	})
}

// SiteSpacesOfSites returns the site spaces of these sites, by site and
// position.
// With live set, site spaces of deleted spaces are left out: they are hidden
// while the space can be restored.
func SiteSpacesOfSites(ctx context.Context, db bun.IDB, orgID string, siteIDs []string, live bool) ([]*SiteSpace, error) {
	ctx = inOrganization(ctx, orgID)
	where, args := "site_space.organization_id = ? AND site_space.site_id = ANY(?)", []any{orgID, siteIDs}
	if live {
		where += " AND " + publishesLiveSpace("site_space")
		args = append(args, orgID)
	}
	rows, err := selectRows[SiteSpace](ctx, db, where, "", args...)
	sortBySitePosition(rows, func(s *SiteSpace) (string, int, string) { return s.SiteID, s.Position, s.ID })
	return rows, err
}

// GetLiveSiteSpace returns site space id of site siteID of orgID:
// ErrNotFound when there is none, or when the space it publishes is deleted
// (hidden while it can be restored, as SiteSpacesOfSites leaves it out).
func GetLiveSiteSpace(ctx context.Context, db bun.IDB, orgID, siteID, id string) (*SiteSpace, error) {
	ctx = inOrganization(ctx, orgID)
	return selectRow[SiteSpace](ctx, db, "site_space.organization_id = ? AND site_space.site_id = ? AND site_space.id = ? AND "+
		publishesLiveSpace("site_space"), orgID, siteID, id, orgID)
}

// publishesLiveSpace is the condition that the site space aliased alias
// publishes a space that is not deleted; its argument is the site's
// organization. Deleted spaces are few (purged 7 days after deletion) and
// indexed apart (spaces_org_deleted_idx), so PostgreSQL checks the site
// spaces against a small hash of them; the equivalent EXISTS on live
// spaces joined every space of the database, which cost a site of a
// thousand site spaces 0.4 to 0.8 ms, as much as the rest of the read.
// (The foreign key makes every space_id a space's of the organization.)
// Restricted to the organization, the sub-select reads the shard the rest
// of the read reads on a Citus cluster (every organization's deleted
// spaces were hashed before, 8 % faster on one PostgreSQL).
func publishesLiveSpace(alias string) string {
	return alias + ".space_id NOT IN (SELECT deleted.id FROM spaces AS deleted WHERE deleted.organization_id = ? AND deleted.deleted_at IS NOT NULL)"
}

// SpacesOfSites returns the live spaces the site spaces of these sites of
// orgID point to, in one query filtered by site (indexed) rather than by a
// list of space ids.
func SpacesOfSites(ctx context.Context, db bun.IDB, orgID string, siteIDs []string) ([]*Space, error) {
	ctx = inOrganization(ctx, orgID)
	return selectRows[Space](ctx, db, spacesOfSites, "", orgID, orgID, siteIDs)
}

// spacesOfSites reaches the spaces through the ids the site spaces name:
// the sub-select runs first (an InitPlan on site_spaces_site_idx), and the
// spaces are joined to its array unnested. Written as a join on site_spaces
// or IN (SELECT space_id ...), PostgreSQL weighs a thousand index probes
// against one pass over the table, and once the database holds some
// 100,000 spaces of other organizations it chose a hash join over a
// sequential scan of all of them (2.3 ms became 15 ms). The array's length
// is unknown when the statement is planned, so the planner expects a few
// ids: on a large table it probes the primary key once per id, on a small
// one it hashes them (store/plans_test.go checks both). Compared with
// id = ANY(ARRAY(...)), that small table is no longer checked row by row
// against the whole array (a thousand ids against a thousand spaces: 5.7
// ms, against 0.5 ms hashed). The price: at size the thousand probes of
// the nested loop take 1.50 ms where one index scan over the array took
// 1.24 ms (TestHotReadTimings), and on small sites of a small database
// five spaces among a thousand are hashed and the table scanned (0.1 ms,
// against 0.02 ms by the index). Bounded costs, where the array filter
// grew with the site times the table. The array may name a space
// twice (published twice in a site): the semi-join reads it once.
const spacesOfSites = "space.organization_id = ? AND space.id IN (SELECT unnest(ARRAY(SELECT ss.space_id FROM site_spaces AS ss WHERE ss.organization_id = ? AND ss.site_id = ANY(?)))) AND space.deleted_at IS NULL"

// SpaceSummaryColumns are the columns of a space that navigation shows: its
// id, organization, title, emoji, icon, visibility and parent collection.
// default_level is read for the read rules (who may see the space), not shown.
var SpaceSummaryColumns = []string{"id", "organization_id", "title", "emoji", "icon", "visibility", "parent_id", "default_level"}

// SpaceSummariesOfSites is SpacesOfSites reading only SpaceSummaryColumns:
// the other fields of the spaces are zero. The site tree of a front end
// shows these, and a site of a thousand spaces reads several times faster
// without the rest.
func SpaceSummariesOfSites(ctx context.Context, db bun.IDB, orgID string, siteIDs []string) ([]*Space, error) {
	ctx = inOrganization(ctx, orgID)
	return selectColumns[Space](ctx, db, SpaceSummaryColumns, spacesOfSites, "", orgID, orgID, siteIDs)
}

// SiteSpacesWithSpaces is SiteSpacesOfSites (live) and SpacesOfSites (or,
// with summaries, SpaceSummariesOfSites) in one statement: the site spaces
// of these sites of orgID that publish a live space, by site and position,
// and those spaces, each once. A site's tree that shows its spaces reads
// them so: on a Citus cluster each statement costs some 250 µs of planning
// on the worker, and the spaces' own read went through the site spaces
// again. A join, which PostgreSQL answers as the site and the database
// call for: one probe of the spaces' primary key per site space beside
// many spaces, a hash of the organization's spaces when they are few
// (forcing the probes, a LATERAL sub-select, cost a site of a thousand
// site spaces in an organization of a thousand spaces 1.6 ms against 0.9;
// the plans at size are checked, store/plans_test.go). It reads on the
// pool (a tree is read outside any transaction).
func SiteSpacesWithSpaces(ctx context.Context, db *DB, orgID string, siteIDs []string, summaries bool) ([]*SiteSpace, []*Space, error) {
	ctx = inOrganization(ctx, orgID)
	pairs, err := selectModel[siteSpaceAndSpace](ctx, db, siteSpacesWithSpacesModel(db, summaries),
		"site_space.organization_id = ? AND site_space.site_id = ANY(?)", "", orgID, orgID, siteIDs)
	if err != nil {
		return nil, nil, err
	}
	siteSpaces := make([]*SiteSpace, len(pairs))
	spaces := make([]*Space, 0, len(pairs))
	seen := make(map[string]bool, len(pairs))
	for i, p := range pairs {
		siteSpaces[i] = &p.SiteSpace
		if !seen[p.Space.ID] {
			seen[p.Space.ID] = true
			spaces = append(spaces, &p.Space)
		}
	}
	sortBySitePosition(siteSpaces, func(s *SiteSpace) (string, int, string) { return s.SiteID, s.Position, s.ID })
	return siteSpaces, spaces, nil
}

// siteSpaceAndSpace is a row of SiteSpacesWithSpaces.
type siteSpaceAndSpace struct {
	SiteSpace SiteSpace
	Space     Space
}

// siteSpacesWithSpacesModels are SiteSpacesWithSpaces' models: the spaces
// whole, and their summaries.
var siteSpacesWithSpacesModels [2]atomic.Pointer[readModel]

func siteSpacesWithSpacesModel(db bun.IDB, summaries bool) *readModel {
	i := 0
	if summaries {
		i = 1
	}
	if m := siteSpacesWithSpacesModels[i].Load(); m != nil {
		return m
	}
	spaces := readModelOf[Space](db)
	if summaries {
		spaces = spaces.only(SpaceSummaryColumns)
	}
	// The first argument is the organization (the spaces' shard on a
	// cluster is named, as the site spaces' is).
	siteSpaces := readModelOf[SiteSpace](db)
	m := pairModel[siteSpaceAndSpace](siteSpaces, spaces, siteSpaces.from+
		" JOIN spaces AS space ON space.organization_id = ? AND space.id = site_space.space_id AND space.deleted_at IS NULL")
	siteSpacesWithSpacesModels[i].Store(m)
	return m
}

// Insert adds rows (groups, sections or site spaces).
func Insert[T any](ctx context.Context, db bun.IDB, rows ...*T) error {
	if len(rows) == 0 {
		return nil
	}
	_, err := db.NewInsert().Model(&rows).Exec(ctx)
	return translate(err)
}

// Update writes the given columns of row.
func Update[T any](ctx context.Context, db bun.IDB, row *T, columns ...string) error {
	_, err := byKey(db, db.NewUpdate().Model(row).Column(columns...), row).Exec(ctx)
	return translate(err)
}

// Delete removes row by primary key.
func Delete[T any](ctx context.Context, db bun.IDB, row *T) error {
	_, err := byKey(db, db.NewDelete().Model(row), row).Exec(ctx)
	return translate(err)
}

// StructureItem is what a site's structure holds: a section group, a section
// or a site space.
type StructureItem interface{ isStructureItem() }

func (SiteSectionGroup) isStructureItem() {}
func (SiteSection) isStructureItem()      {}
func (SiteSpace) isStructureItem()        {}
