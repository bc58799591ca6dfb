package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"log"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// The baselines: what a hand-written server would do for the same two reads,
// with net/http and pgx and nothing else — no authentication, no GraphQL, no
// middleware. Each response says how many SQL queries it ran in
// X-SQL-Queries, as docsapi does in debug mode.

// newBaseline serves GET /tree/{organizationId}/{siteId} (the site tree, as
// the GraphQL query's data) and GET /v1/spaces/{spaceId}.
func newBaseline(pool *pgxpool.Pool, publicURL string) http.Handler {
	b := &baseline{pool: pool, publicURL: publicURL}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /tree/{organizationId}/{siteId}", b.tree)
	mux.HandleFunc("GET /v1/spaces/{spaceId}", b.space)
	return mux
}

type baseline struct {
	pool      *pgxpool.Pool
	publicURL string
}

// The JSON of the site tree query (treeQuery), member for member in the
// order of its selection sets.
type (
	treeData struct {
		Site *treeSite `json:"site"`
	}
	treeSite struct {
		ID        string        `json:"id"`
		Title     string        `json:"title"`
		Structure treeStructure `json:"structure"`
	}
	treeStructure struct {
		Type      string `json:"type"`
		Structure []any  `json:"structure"`
	}
	treeGroup struct {
		Typename string `json:"__typename"`
		ID       string `json:"id"`
		Title    string `json:"title"`
		Children []any  `json:"children"`
	}
	treeSection struct {
		Typename   string          `json:"__typename"`
		ID         string          `json:"id"`
		Title      string          `json:"title"`
		SiteSpaces []treeSiteSpace `json:"siteSpaces"`
	}
	// treeTypename is a nested group among a group's children: the query
	// selects nothing of it but its type.
	treeTypename struct {
		Typename string `json:"__typename"`
	}
	treeSiteSpace struct {
		ID    string     `json:"id"`
		Path  string     `json:"path"`
		Space *treeSpace `json:"space"`
	}
	// treeRootSiteSpace is a site space at the root of a site without sections.
	treeRootSiteSpace struct {
		Typename string `json:"__typename"`
		treeSiteSpace
	}
	treeSpace struct {
		ID    string `json:"id"`
		Title string `json:"title"`
	}
)

// row of the structure: a group or a section, ordered within its container
// (the root or a group) by position, then id.
type structRow struct {
	id, title string
	container *string
	position  int
	group     bool
}

type siteSpaceRow struct {
	id, spaceID, path string
	section           *string
	position          int
	space             *treeSpace
}

// tree loads the site with one query per level, each filtered by site_id,
// and assembles the structure exactly as docsapi orders it.
func (b *baseline) tree(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	orgID, siteID := r.PathValue("organizationId"), r.PathValue("siteId")
	queries := 0
	fail := func(err error) {
		if errors.Is(err, pgx.ErrNoRows) {
			http.Error(w, `{"error":"not found"}`, http.StatusNotFound)
			return
		}
		log.Printf("baseline tree: %v", err)
		http.Error(w, `{"error":"internal error"}`, http.StatusInternalServerError)
	}

	// 1. The site.
	site := &treeSite{}
	queries++
	err := b.pool.QueryRow(ctx, `SELECT id, title FROM sites WHERE id = $1 AND organization_id = $2`, siteID, orgID).
		Scan(&site.ID, &site.Title)
	if err != nil {
		fail(err)
		return
	}
	// 2. Groups.
	var entries []structRow
	queries++
	groups, err := collect(ctx, b.pool, `SELECT id, title, parent_group_id, position FROM site_section_groups WHERE site_id = $1`,
		[]any{siteID}, func(rows pgx.CollectableRow) (structRow, error) {
			e := structRow{group: true}
			return e, rows.Scan(&e.id, &e.title, &e.container, &e.position)
		})
	if err != nil {
		fail(err)
		return
	}
	entries = append(entries, groups...)
	// 3. Sections.
	queries++
	sections, err := collect(ctx, b.pool, `SELECT id, title, group_id, position FROM site_sections WHERE site_id = $1`,
		[]any{siteID}, func(rows pgx.CollectableRow) (structRow, error) {
			var e structRow
			return e, rows.Scan(&e.id, &e.title, &e.container, &e.position)
		})
	if err != nil {
		fail(err)
		return
	}
	entries = append(entries, sections...)
	// 4. Site spaces with the live spaces they publish, in one join (as
	// docsapi reads them: store.SiteSpacesWithSpaces); the organization
	// named for both tables, so that PostgreSQL probes the spaces by
	// primary key beside many other spaces, or hashes a few.
	queries++
	siteSpaces, err := collect(ctx, b.pool, `SELECT ss.id, ss.space_id, ss.path, ss.section_id, ss.position, s.title
		FROM site_spaces AS ss JOIN spaces AS s ON s.organization_id = $2 AND s.id = ss.space_id AND s.deleted_at IS NULL
		WHERE ss.organization_id = $2 AND ss.site_id = $1`,
		[]any{siteID, orgID}, func(rows pgx.CollectableRow) (siteSpaceRow, error) {
			s := siteSpaceRow{space: &treeSpace{}}
			err := rows.Scan(&s.id, &s.spaceID, &s.path, &s.section, &s.position, &s.space.Title)
			s.space.ID = s.spaceID
			return s, err
		})
	if err != nil {
		fail(err)
		return
	}

	// Site spaces by section (""; the root), live ones only, in order.
	slices.SortFunc(siteSpaces, func(a, b siteSpaceRow) int {
		return cmp.Or(cmp.Compare(a.position, b.position), cmp.Compare(a.id, b.id))
	})
	bySection := map[string][]treeSiteSpace{}
	for _, s := range siteSpaces {
		key := ""
		if s.section != nil {
			key = *s.section
		}
		bySection[key] = append(bySection[key], treeSiteSpace{ID: s.id, Path: s.path, Space: s.space})
	}
	sectionJSON := func(e structRow) treeSection {
		list := bySection[e.id]
		if list == nil {
			list = []treeSiteSpace{}
		}
		return treeSection{Typename: "SiteSection", ID: e.id, Title: e.title, SiteSpaces: list}
	}

	// Groups and sections by container, in order.
	slices.SortFunc(entries, func(a, b structRow) int {
		return cmp.Or(cmp.Compare(a.position, b.position), cmp.Compare(a.id, b.id))
	})
	byContainer := map[string][]structRow{}
	for _, e := range entries {
		key := ""
		if e.container != nil {
			key = *e.container
		}
		byContainer[key] = append(byContainer[key], e)
	}

	site.Structure = treeStructure{Type: "sections", Structure: []any{}}
	if len(entries) == 0 {
		site.Structure.Type = "siteSpaces"
		for _, s := range bySection[""] {
			site.Structure.Structure = append(site.Structure.Structure, treeRootSiteSpace{Typename: "SiteSpace", treeSiteSpace: s})
		}
	}
	for _, e := range byContainer[""] {
		if !e.group {
			site.Structure.Structure = append(site.Structure.Structure, sectionJSON(e))
			continue
		}
		g := treeGroup{Typename: "SiteSectionGroup", ID: e.id, Title: e.title, Children: []any{}}
		for _, c := range byContainer[e.id] {
			if c.group {
				g.Children = append(g.Children, treeTypename{Typename: "SiteSectionGroup"})
			} else {
				g.Children = append(g.Children, sectionJSON(c))
			}
		}
		site.Structure.Structure = append(site.Structure.Structure, g)
	}
	writeBareJSON(w, queries, treeData{Site: site})
}

// collect runs a query with args and scans every row with scan.
func collect[T any](ctx context.Context, pool *pgxpool.Pool, sql string, args []any, scan pgx.RowToFunc[T]) ([]T, error) {
	rows, err := pool.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, scan)
}

// bareSpace is a space as the bare handler returns it: the row, with the
// members of docsapi's REST answer that come from it.
type bareSpace struct {
	Object       string          `json:"object"`
	ID           string          `json:"id"`
	Title        string          `json:"title"`
	Emoji        string          `json:"emoji"`
	Visibility   string          `json:"visibility"`
	CreatedAt    time.Time       `json:"createdAt"`
	UpdatedAt    time.Time       `json:"updatedAt"`
	EditMode     string          `json:"editMode"`
	MergeRules   json.RawMessage `json:"mergeRules"`
	URLs         bareSpaceURLs   `json:"urls"`
	Organization string          `json:"organization"`
	Parent       *string         `json:"parent,omitempty"`
	Language     *string         `json:"language,omitempty"`
	Revision     string          `json:"revision"`
	DefaultLevel *string         `json:"defaultLevel,omitempty"`
}

type bareSpaceURLs struct {
	Location string `json:"location"`
	App      string `json:"app"`
}

// space reads one row of spaces by id and encodes it.
func (b *baseline) space(w http.ResponseWriter, r *http.Request) {
	s := bareSpace{Object: "space"}
	err := b.pool.QueryRow(r.Context(), `SELECT id, title, emoji, visibility, created_at, updated_at, edit_mode,
		merge_rules, organization_id, parent_id, language, revision_id, default_level
		FROM spaces WHERE id = $1 AND deleted_at IS NULL`, r.PathValue("spaceId")).
		Scan(&s.ID, &s.Title, &s.Emoji, &s.Visibility, &s.CreatedAt, &s.UpdatedAt, &s.EditMode,
			&s.MergeRules, &s.Organization, &s.Parent, &s.Language, &s.Revision, &s.DefaultLevel)
	if errors.Is(err, pgx.ErrNoRows) {
		http.Error(w, `{"error":"not found"}`, http.StatusNotFound)
		return
	} else if err != nil {
		log.Printf("baseline space: %v", err)
		http.Error(w, `{"error":"internal error"}`, http.StatusInternalServerError)
		return
	}
	s.URLs = bareSpaceURLs{Location: b.publicURL + "/v1/spaces/" + s.ID, App: b.publicURL + "/app/s/" + s.ID}
	writeBareJSON(w, 1, s)
}

// writeBareJSON writes v as compact JSON (no HTML escaping and no trailing
// newline, as gqlgen writes it).
func writeBareJSON(w http.ResponseWriter, queries int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		log.Printf("baseline: encode: %v", err)
		http.Error(w, `{"error":"internal error"}`, http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-SQL-Queries", strconv.Itoa(queries))
	_, _ = w.Write(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
}
