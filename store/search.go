package store

import (
	"context"
	"regexp"
	"strings"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
)

// Section is a part of a page body: the text under one heading.
type Section struct {
	Position int
	Anchor   string
	Heading  string
	Body     string
}

var (
	atxHeading = regexp.MustCompile(`^ {0,3}(#{1,6})[ \t]+(.*?)[ \t#]*$`)
	codeFence  = regexp.MustCompile("^ {0,3}(```|~~~)")
	nonAnchor  = regexp.MustCompile(`[^a-z0-9]+`)
	// headingAnchor is the empty anchor GitBook's git sync ends a heading
	// with to keep its id: `## Usage <a href="#use" id="use"></a>`.
	headingAnchor = regexp.MustCompile(`\s*<a\s[^>]*\bid="([^"]*)"[^>]*>\s*</a>\s*$`)
)

// SplitSections splits markdown at its headings (outside code blocks).
func SplitSections(markdown string) []Section {
	var out []Section
	cur := Section{}
	var body []string
	fenced := false
	flush := func() {
		cur.Body = strings.TrimSpace(strings.Join(body, "\n"))
		if cur.Heading != "" || cur.Body != "" {
			cur.Position = len(out)
			out = append(out, cur)
		}
		body = nil
	}
	for _, line := range strings.Split(markdown, "\n") {
		if codeFence.MatchString(line) {
			fenced = !fenced
		}
		if m := atxHeading.FindStringSubmatch(line); m != nil && !fenced {
			flush()
			heading, anchor := m[2], ""
			if a := headingAnchor.FindStringSubmatch(heading); a != nil {
				heading, anchor = heading[:len(heading)-len(a[0])], a[1]
			}
			if anchor == "" {
				anchor = strings.Trim(nonAnchor.ReplaceAllString(strings.ToLower(heading), "-"), "-")
			}
			cur = Section{Heading: heading, Anchor: anchor}
			continue
		}
		body = append(body, line)
	}
	flush()
	return out
}

// saveSections indexes a new body's sections.
func saveSections(ctx context.Context, db bun.IDB, orgID, digest, markdown string) error {
	for _, s := range SplitSections(markdown) {
		_, err := db.NewRaw(`INSERT INTO body_sections (organization_id, body_sha256, position, anchor, heading, body) VALUES (?, ?, ?, ?, ?, ?)
			ON CONFLICT DO NOTHING`, orgID, digest, s.Position, s.Anchor, s.Heading, s.Body).Exec(ctx)
		if err != nil {
			return translate(err)
		}
	}
	return nil
}

// SearchHit is a page (or a section of it) matching a search.
type SearchHit struct {
	SpaceID string  `bun:"space_id"`
	PageID  string  `bun:"page_id"`
	Anchor  *string `bun:"anchor"` // nil: the page's title matched
	Heading string  `bun:"heading"`
	Body    string  `bun:"body"`
	Rank    float64 `bun:"rank"`
}

// A search's work is bounded, whatever the words: a common word matches
// tens of thousands of sections in a large organization, and ranking them
// all (reading each from the heap, ranking it, finding its pages) took
// hundreds of milliseconds for an answer of which a reader looks at the
// first few pages.
const (
	// maxSearchHits bounds the hits one search returns, best first: enough
	// for pages of results grouped by space, where 2,000 made answers of
	// 2.5 MB whose encoding alone took longer than the query.
	maxSearchHits = 200
	// maxSearchCandidates bounds each kind of candidate a search ranks:
	// sections whose heading matches, sections whose text matches, page
	// titles.
	maxSearchCandidates = 500
	// SearchRanked is the most rows one search ranks (each kind of
	// candidate, up to maxSearchCandidates), whatever page of its results
	// is asked for: the GraphQL cost of a search counts it.
	SearchRanked = 3 * maxSearchCandidates
)

// Search finds the pages of the current content of these spaces (of
// organization orgID) whose title or body sections match query (web
// search syntax), best first (ts_rank; a title counts double).
//
// Candidates, each found through a GIN index leading with the
// organization (other tenants' sections are never read, let alone
// ranked) and holding only the sections some live space's current
// revision shows (body_sections.shown, kept by triggers: migration 0039),
// and kept only if a page of a searched space's current revision shows it
// (current_pages by body, from the index alone; kept by the same
// triggers):
//
//   - sections whose heading matches, up to maxSearchCandidates: a word in
//     a heading weighs 1 against 0.4 in the text, so for a one-word query
//     every such section ranks above any whose text alone matches;
//   - sections whose text matches, up to maxSearchCandidates, in the
//     order the index gives them (storage order, roughly oldest first);
//   - page titles, up to maxSearchCandidates.
//
// Both stay the size of the organization's current content however much
// it is edited (search p50 grew 1.5x over a mixed run doubling the data by
// edits; docs/decisions.md, search at size): the indexes leave out the
// sections no current content shows (an edit keeps the body it replaced,
// which older revisions and change requests show, and indexed, such
// sections were found and dropped one by one), and a candidate's check
// reads a row per live space showing its body, where revision_pages has
// one per revision (every change request's revision copies its space's
// pages).
//
// Ranking semantics: a query matching at most maxSearchCandidates sections
// of the searched pages ranks them all, as before. Beyond that, the
// sections whose text alone matches are a sample (the first found), not
// the best of all: for a word on every page, every page is about as good,
// and the sample costs a few milliseconds where ranking 60,000 sections
// took 200-500 ms. Sections are read (heading, text) only for the hits
// kept.
//
// The tsquery comes from a materialized CTE, opaque to the planner: it
// plans every query as a selective one (GIN bitmap, then the few
// candidates' pages by index, stopping at the LIMIT), which is the plan
// that stays bounded for common words too, rather than hash-joining every
// page of the searched spaces when its statistics say a word is common.
// A search of a few of the organization's spaces does hash their pages,
// by choice rather than by statistics (narrowCandidates): there the pages
// are few and the matches outside them many.
//
// The searched spaces (live, of the organization) and their current
// revisions are read first, and the statement is given their ids as
// arrays: the candidates' pages are checked against the spaces (a filter
// on current_pages_body_idx, which holds the space), titles are looked up
// in the revisions. Joined to the searched spaces instead, the check's plan
// followed the statistics: while an organization's revision_pages grew
// (each edit copies its space's pages) and were not yet analyzed,
// PostgreSQL expected a handful of candidates and searched spaces, and
// chose a nested loop rescanning the materialized candidates for every
// searched space, spilled to disk: 2 to 52 s per search until autovacuum
// analyzed the table (docs/decisions.md, search at size).
func Search(ctx context.Context, db bun.IDB, orgID string, spaceIDs []string, query string) ([]*SearchHit, error) {
	ctx = inOrganization(ctx, orgID)
	var hits []*SearchHit
	if len(spaceIDs) == 0 {
		return hits, nil
	}
	var searched []struct {
		ID         string `bun:"id"`
		RevisionID string `bun:"revision_id"`
		// OrgSpaces counts the organization's live spaces, up to one more
		// than twice those searched: all narrowSearch needs to know. In
		// spaces_org_idx's order, so that the count reads that index (by
		// LIMIT alone, the planner may scan the table for the first rows
		// of the organization: TestHotReadPlansDoNotScanTenantTables).
		OrgSpaces int `bun:"org_spaces"`
	}
	err := db.NewRaw(`SELECT id, revision_id,
			(SELECT count(*) FROM (SELECT 1 FROM spaces WHERE organization_id = ?1 AND deleted_at IS NULL
				ORDER BY created_at, id LIMIT ?2) o) AS org_spaces
		FROM spaces WHERE id IN (?0) AND organization_id = ?1 AND deleted_at IS NULL`,
		bun.List(spaceIDs), orgID, 2*len(spaceIDs)+1).Scan(ctx, &searched)
	if err != nil || len(searched) == 0 {
		return hits, translate(err)
	}
	spaces := make([]string, len(searched))
	revisions := make([]string, len(searched))
	for i, s := range searched {
		spaces[i], revisions[i] = s.ID, s.RevisionID
	}
	candidates := wideCandidates
	if narrowSearch(len(searched), searched[0].OrgSpaces) {
		candidates = narrowCandidates
	}
	err = db.NewRaw(`WITH q AS MATERIALIZED (SELECT websearch_to_tsquery('english', ?0) AS q),
		`+candidates+`,
		titles AS MATERIALIZED (
			SELECT s.space_id, rp.page_id, 2 * ts_rank(to_tsvector('english', rp.title), q.q) AS rank
			FROM q, unnest(?4::text[], ?2::text[]) AS s(revision_id, space_id)
			JOIN revision_pages rp ON rp.revision_id = s.revision_id AND rp.organization_id = ?1
			WHERE to_tsvector('english', rp.title) @@ q.q
			LIMIT ?3),
		hits AS (
			SELECT * FROM by_heading
			UNION
			SELECT * FROM by_text
			UNION ALL
			SELECT space_id, page_id, NULL, NULL, rank FROM titles),
		top AS (SELECT * FROM hits ORDER BY rank DESC, space_id, page_id, position NULLS FIRST LIMIT ?5)
		SELECT top.space_id, top.page_id, bs.anchor, coalesce(bs.heading, '') AS heading, coalesce(bs.body, '') AS body, top.rank
		FROM top LEFT JOIN body_sections bs ON bs.organization_id = ?1 AND bs.body_sha256 = top.body_sha256
			AND bs.position = top.position
		ORDER BY top.rank DESC, top.space_id, top.page_id, top.position NULLS FIRST`,
		query, orgID, pgdialect.Array(spaces), maxSearchCandidates, pgdialect.Array(revisions), maxSearchHits).Scan(ctx, &hits)
	return hits, translate(err)
}

// narrowSearch says whether a search of searched spaces, in an
// organization of orgSpaces live spaces (counted up to 2*searched+1),
// finds its candidates through narrowCandidates: when the searched spaces
// are at most half of the organization's.
func narrowSearch(searched, orgSpaces int) bool { return orgSpaces > 2*searched }

// The candidates of a search (the CTEs by_heading and by_text, each up to
// maxSearchCandidates rows of space, page, body, section position and
// rank), found in one of two ways; arguments: ?0 the query, ?1 the
// organization, ?2 the searched spaces, ?3 maxSearchCandidates.
//
// Both find the organization's matching sections through its GIN index
// and keep those a page of a searched space shows. What they cost is the
// matches they read before maxSearchCandidates are kept: for a word on a
// few hundred pages of each space, an organization-wide search keeps the
// first 500 it reads, where a search of one space of 25 reads all 10,000
// matches of the organization and keeps 400 (docsbench content, the
// reader's page of results, which searches the current site space).
const (
	// wideCandidates checks each match against current_pages by index
	// (the space a filter on current_pages_body_idx), stopping at the
	// limit: cheapest when most matches are in the searched spaces, and
	// its cost never grows with their pages.
	wideCandidates = `by_heading AS MATERIALIZED (
			SELECT cp.space_id, cp.page_id, bs.body_sha256, bs.position, ts_rank(bs.tsv, q.q) AS rank
			FROM q, body_sections bs
			JOIN current_pages cp ON cp.body_sha256 = bs.body_sha256 AND cp.organization_id = bs.organization_id
			WHERE bs.organization_id = ?1 AND bs.shown AND to_tsvector('english', bs.heading) @@ q.q AND cp.space_id = ANY(?2::text[])
			LIMIT ?3),
		by_text AS MATERIALIZED (
			SELECT cp.space_id, cp.page_id, bs.body_sha256, bs.position, ts_rank(bs.tsv, q.q) AS rank
			FROM q, body_sections bs
			JOIN current_pages cp ON cp.body_sha256 = bs.body_sha256 AND cp.organization_id = bs.organization_id
			WHERE bs.organization_id = ?1 AND bs.shown AND bs.tsv @@ q.q AND cp.space_id = ANY(?2::text[])
			LIMIT ?3)`
	// narrowCandidates reads the searched spaces' pages first (scope) and
	// checks each match against them in a hash (a semi-join, the scope the
	// hashed side), then joins the kept sections to their pages: for one
	// space of 25, a quarter of the buffers of wideCandidates, whose index
	// lookup per match was three quarters of its reads. The hash holds
	// every page of the searched spaces, which is why a search of most of
	// an organization's spaces does not take this way.
	narrowCandidates = `scope AS MATERIALIZED (
			SELECT space_id, page_id, body_sha256 FROM current_pages
			WHERE organization_id = ?1 AND space_id = ANY(?2::text[])),
		heading_matches AS MATERIALIZED (
			SELECT bs.body_sha256, bs.position, ts_rank(bs.tsv, q.q) AS rank
			FROM q, body_sections bs
			WHERE bs.organization_id = ?1 AND bs.shown AND to_tsvector('english', bs.heading) @@ q.q
				AND EXISTS (SELECT FROM scope WHERE scope.body_sha256 = bs.body_sha256)
			LIMIT ?3),
		text_matches AS MATERIALIZED (
			SELECT bs.body_sha256, bs.position, ts_rank(bs.tsv, q.q) AS rank
			FROM q, body_sections bs
			WHERE bs.organization_id = ?1 AND bs.shown AND bs.tsv @@ q.q
				AND EXISTS (SELECT FROM scope WHERE scope.body_sha256 = bs.body_sha256)
			LIMIT ?3),
		by_heading AS MATERIALIZED (
			SELECT s.space_id, s.page_id, m.body_sha256, m.position, m.rank
			FROM heading_matches m JOIN scope s ON s.body_sha256 = m.body_sha256
			LIMIT ?3),
		by_text AS MATERIALIZED (
			SELECT s.space_id, s.page_id, m.body_sha256, m.position, m.rank
			FROM text_matches m JOIN scope s ON s.body_sha256 = m.body_sha256
			LIMIT ?3)`
)
