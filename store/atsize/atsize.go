// Package atsize fills a database with what a busy instance holds, by SQL:
// organizations with spaces (each with its revision), sites publishing
// them, change requests, comments on content and on change requests with
// replies, pages whose bodies are indexed for search, and members. The benchmark
// (cmd/docsbench) and the plan tests (store/plans_test.go) measure at that
// size: on an almost empty database every plan is fast, and a plan that
// scans every tenant's rows only shows once the tables hold other
// organizations' rows and PostgreSQL has analyzed them.
//
// Everything is inserted set-based (INSERT ... SELECT over generate_series,
// a statement per table): 100,000 spaces and their data take tens of
// seconds, where the API would take an hour. Every row is what the
// application would have written: organization_id is its parent's, change
// request numbers count 1, 2, 3... per space, the counters on spaces are
// kept by their triggers (the rows go through them), and a page's body is
// stored with the search sections store.SaveBody would give it
// (store.SplitSections of the same markdown).
package atsize

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Plan is what Fill inserts. Spaces are numbered 1..Spaces; space g
// belongs to organization 1 + g % Organizations. The rows that hang off
// spaces (change requests, comments on content, pages) go to the first
// Busy spaces, round robin, as in a real instance where some spaces are
// worked on and most are not.
type Plan struct {
	// Prefix starts every id Fill makes, so that two fills (or a fill and
	// a database a previous run filled) never collide.
	Prefix string
	// Organization, when set, is an existing organization that receives
	// every row; otherwise Organizations new ones are made.
	Organization  string
	Organizations int
	// Author is the existing user who writes the change requests,
	// comments and replies; "" makes one.
	Author string

	Spaces int
	// Busy is how many spaces carry the change requests, content comments
	// and pages; 0 means a tenth of the spaces (at least one).
	Busy int
	// SiteSpaces: spaces 1..SiteSpaces are published, each by a site of
	// its organization (one site per organization).
	SiteSpaces int
	// ChangeRequests, statuses in turn open, draft, merged, archived.
	ChangeRequests int
	// Comments: half on spaces' content, half on change requests; open
	// and resolved in turn.
	Comments int
	// Replies go to every third comment, in turn.
	Replies int
	// Pages: document pages of the busy spaces' revisions, each with its
	// own body of two sections (a title heading and a subheading) drawn
	// from Words.
	Pages int
	// Words is the vocabulary of the pages; nil: a small built-in one.
	Words []string
	// Members are users who are members of the organizations, in turn
	// (all of Organization's when it is set): most with the read role,
	// every tenth with edit, every hundredth an admin, and every
	// twentieth a guest.
	Members int
}

// busy is the number of spaces carrying change requests, comments and
// pages.
func (p Plan) busy() int {
	if p.Busy > 0 {
		return min(p.Busy, p.Spaces)
	}
	return max(1, p.Spaces/10)
}

func (p Plan) orgs() int {
	if p.Organization != "" {
		return 1
	}
	return max(1, p.Organizations)
}

// ContentComments and ChangeRequestComments split Comments.
func (p Plan) ContentComments() int       { return p.Comments - p.Comments/2 }
func (p Plan) ChangeRequestComments() int { return p.Comments / 2 }

// SpaceID is the id of space g (1-based).
func (p Plan) SpaceID(g int) string { return fmt.Sprintf("%sspace-%d", p.Prefix, g) }

// OrganizationID is the id of the organization of space g.
func (p Plan) OrganizationID(g int) string {
	if p.Organization != "" {
		return p.Organization
	}
	return fmt.Sprintf("%sorg-%d", p.Prefix, 1+g%p.orgs())
}

// MemberID is the user id of member m (1-based).
func (p Plan) MemberID(m int) string { return fmt.Sprintf("%smember-%d", p.Prefix, m) }

// ChangeRequestID is the id of change request i (1-based).
func (p Plan) ChangeRequestID(i int) string { return fmt.Sprintf("%scr-%d", p.Prefix, i) }

// ChangeRequestSpace is the space (its number) of change request i.
func (p Plan) ChangeRequestSpace(i int) int { return 1 + (i-1)%p.busy() }

// ChangeRequestStatus is the status of change request i.
func (p Plan) ChangeRequestStatus(i int) string { return statuses[(i-1)%len(statuses)] }

var statuses = []string{"open", "draft", "merged", "archived"}

// ContentCommentID is the id of comment i (1-based) on a space's content,
// on space ContentCommentSpace(i).
func (p Plan) ContentCommentID(i int) string { return fmt.Sprintf("%scomment-%d", p.Prefix, i) }
func (p Plan) ContentCommentSpace(i int) int { return 1 + (i-1)%p.busy() }
func (p Plan) ChangeRequestCommentID(j int) string {
	return fmt.Sprintf("%scomment-%d", p.Prefix, p.ContentComments()+j)
}

// ChangeRequestCommentTarget is the change request of comment j (1-based)
// on change requests.
func (p Plan) ChangeRequestCommentTarget(j int) int { return 1 + (j-1)%p.ChangeRequests }

// PageID is the id of page k (1-based), in the revision of space
// PageSpace(k).
func (p Plan) PageID(k int) string { return fmt.Sprintf("%spage-%d", p.Prefix, k) }
func (p Plan) PageSpace(k int) int { return 1 + (k-1)%p.busy() }

// defaultWords make the pages' text when the plan gives none.
var defaultWords = strings.Fields(`account api branch cache change client comment config content deploy
	document editor error export field file guide header import index install invite key link
	member merge migrate module network node option page permission plan proxy query rate release
	request revision role schema search section server session site space status sync table team
	template token update upload user version webhook workflow`)

// Fill inserts the plan's rows in one transaction (without the pool's
// statement timeout: a statement inserts a table's share of the plan), then
// ANALYZEs the database (as autovacuum would within a minute of such a
// load). It returns the first error, with the statement that failed.
func Fill(ctx context.Context, pool *pgxpool.Pool, p Plan) error {
	if p.Spaces < 1 || p.SiteSpaces > p.Spaces {
		return fmt.Errorf("atsize: a plan needs spaces, and no more site spaces than spaces")
	}
	if p.ChangeRequestComments() > 0 && p.ChangeRequests == 0 {
		return fmt.Errorf("atsize: comments on change requests need change requests")
	}
	words := p.Words
	if len(words) == 0 {
		words = defaultWords
	}
	author := p.Author
	// @prefix the prefix, @org the existing organization ("": new ones), @orgs the
	// number of organizations, @author the author, @busy the busy spaces; the
	// organization of space number x is org(x).
	org := func(x string) string {
		return fmt.Sprintf("(CASE WHEN @org <> '' THEN @org ELSE @prefix || 'org-' || (1 + (%s) %% @orgs::int) END)", x)
	}
	type statement struct {
		sql  string
		args pgx.NamedArgs // besides the common ones
		skip bool
	}
	statements := []statement{
		{sql: `INSERT INTO organizations (id, title, created_at, updated_at)
			SELECT @prefix || 'org-' || k, 'Organization ' || k, now(), now()
			FROM generate_series(1, @orgs::int) k WHERE @org = ''`},
		{sql: `INSERT INTO users (id, email, display_name, created_at, updated_at)
			SELECT @author, @prefix || 'author@example.com', 'Author', now(), now()`, skip: p.Author != ""},
		{sql: `INSERT INTO spaces (id, organization_id, title, revision_id, default_level, created_by, created_at, updated_at)
			SELECT @prefix || 'space-' || g, ` + org("g") + `, 'Space ' || g, @prefix || 'rev-' || g, 'inherit', @author,
				now() - g * interval '1 minute', now()
			FROM generate_series(1, @n::int) g`, args: pgx.NamedArgs{"n": p.Spaces}},
		{sql: `INSERT INTO revisions (id, organization_id, space_id, type, created_by, created_at)
			SELECT @prefix || 'rev-' || g, ` + org("g") + `, @prefix || 'space-' || g, 'edits', @author, now() - g * interval '1 minute'
			FROM generate_series(1, @n::int) g`, args: pgx.NamedArgs{"n": p.Spaces}},
		{sql: `INSERT INTO users (id, email, display_name, created_at, updated_at)
			SELECT @prefix || 'member-' || m, @prefix || 'member-' || m || '@example.com', 'Member ' || m, now(), now()
			FROM generate_series(1, @n::int) m`, args: pgx.NamedArgs{"n": p.Members}, skip: p.Members == 0},
		{sql: `INSERT INTO organization_members (organization_id, user_id, role, joined_at)
			SELECT ` + org("m") + `, @prefix || 'member-' || m,
				CASE WHEN m % 100 = 0 THEN 'admin' WHEN m % 20 = 0 THEN NULL WHEN m % 10 = 0 THEN 'edit' ELSE 'read' END,
				now() - m * interval '1 minute'
			FROM generate_series(1, @n::int) m`, args: pgx.NamedArgs{"n": p.Members}, skip: p.Members == 0},
		// One site per organization, publishing its first spaces at its
		// root.
		{sql: `INSERT INTO sites (id, organization_id, title, share_key, created_at, updated_at)
			SELECT @prefix || 'site-' || k, CASE WHEN @org <> '' THEN @org ELSE @prefix || 'org-' || k END, 'Site ' || k, @prefix || 'key-' || k, now(), now()
			FROM generate_series(1, @orgs::int) k`, skip: p.SiteSpaces == 0},
		// Its visitor authentication settings, which every site has.
		{sql: `INSERT INTO site_publishing_auths (site_id, organization_id, backend, private_key, updated_at)
			SELECT @prefix || 'site-' || k, CASE WHEN @org <> '' THEN @org ELSE @prefix || 'org-' || k END, 'custom', @prefix || 'private-key-' || k, now()
			FROM generate_series(1, @orgs::int) k`, skip: p.SiteSpaces == 0},
		{sql: `INSERT INTO site_spaces (id, organization_id, site_id, space_id, path, position, created_at)
			SELECT @prefix || 'site-space-' || g, ` + org("g") + `, @prefix || 'site-' || (1 + g % @orgs::int), @prefix || 'space-' || g, 'space-' || g, g, now()
			FROM generate_series(1, @n::int) g`, args: pgx.NamedArgs{"n": p.SiteSpaces}, skip: p.SiteSpaces == 0},
		// Change request i on busy space s = 1 + (i-1) % busy, numbered
		// 1, 2, 3... in that space; its revisions are the space's.
		{sql: `INSERT INTO change_requests (id, organization_id, space_id, number, status, subject, created_by, created_at, updated_at, revision_initial, revision)
			SELECT @prefix || 'cr-' || i, ` + org("s") + `, @prefix || 'space-' || s, (i - 1) / @busy::int + 1,
				(ARRAY['open', 'draft', 'merged', 'archived'])[1 + (i - 1) % 4], 'Change ' || i, @author,
				now() - i * interval '1 second', now(), @prefix || 'rev-' || s, @prefix || 'rev-' || s
			FROM generate_series(1, @n::int) i, LATERAL (SELECT 1 + (i - 1) % @busy::int AS s) x`, args: pgx.NamedArgs{"n": p.ChangeRequests}},
		{sql: `INSERT INTO comments (id, organization_id, space_id, revision_id, body, posted_by, posted_at, status, resolved_at, resolved_by)
			SELECT @prefix || 'comment-' || i, ` + org("s") + `, @prefix || 'space-' || s, @prefix || 'rev-' || s, 'Comment ' || i, @author,
				now() - i * interval '1 second', st, CASE WHEN st = 'resolved' THEN now() END, CASE WHEN st = 'resolved' THEN @author END
			FROM generate_series(1, @n::int) i,
				LATERAL (SELECT 1 + (i - 1) % @busy::int AS s, (ARRAY['open', 'resolved'])[1 + i % 2] AS st) x`, args: pgx.NamedArgs{"n": p.ContentComments()}},
		// Comments on change requests take the space and revision of
		// theirs.
		{sql: `INSERT INTO comments (id, organization_id, space_id, change_request_id, revision_id, body, posted_by, posted_at, status, resolved_at, resolved_by)
			SELECT @prefix || 'comment-' || (@n::int + j), cr.organization_id, cr.space_id, cr.id, cr.revision, 'Comment ' || (@n::int + j), @author,
				now() - j * interval '1 second', st, CASE WHEN st = 'resolved' THEN now() END, CASE WHEN st = 'resolved' THEN @author END
			FROM generate_series(1, @m::int) j
			JOIN change_requests cr ON cr.id = @prefix || 'cr-' || (1 + (j - 1) % @k::int),
			LATERAL (SELECT (ARRAY['open', 'resolved'])[1 + j % 2] AS st) x`,
			args: pgx.NamedArgs{"n": p.ContentComments(), "m": p.ChangeRequestComments(), "k": max(1, p.ChangeRequests)}, skip: p.ChangeRequestComments() == 0},
		{sql: `INSERT INTO comment_replies (id, organization_id, comment_id, body, posted_by, posted_at)
			SELECT @prefix || 'reply-' || r, c.organization_id, c.id, 'Reply ' || r, @author, c.posted_at + r * interval '1 second'
			FROM generate_series(1, @n::int) r
			JOIN comments c ON c.id = @prefix || 'comment-' || (1 + ((r - 1) * 3) % @m::int)`,
			args: pgx.NamedArgs{"n": p.Replies, "m": max(1, p.Comments)}, skip: p.Replies == 0 || p.Comments == 0},
		// Pages: the markdown is made once (src), then stored as a body,
		// its two sections and a page of the space's revision, in one
		// statement (the foreign keys are checked at its end). Words are
		// picked by a hash of the page and word number, skewed towards
		// the start of the vocabulary (cubed: a few words are everywhere,
		// most are rare, as in real text).
		{sql: `WITH words AS (SELECT @words::text[] AS w, cardinality(@words::text[]) AS n),
			src AS (
				SELECT k, s, ` + org("s") + ` AS org, h0, t0, h1, t1,
					'# ' || h0 || E'\n\n' || t0 || E'\n\n## ' || h1 || E'\n\n' || t1 || E'\n' AS markdown
				FROM generate_series(1, @n::int) k,
				LATERAL (SELECT 1 + (k - 1) % @busy::int AS s) x,
				LATERAL (SELECT
					(SELECT string_agg(w[1 + floor(n * ((hashint8(k::bigint * 1024 + i) & 2147483647)::float8 / 2147483648.0::float8) ^ 3::float8)::int], ' ')
						FROM words, generate_series(1, 3) i) AS h0,
					(SELECT string_agg(w[1 + floor(n * ((hashint8(k::bigint * 1024 + i) & 2147483647)::float8 / 2147483648.0::float8) ^ 3::float8)::int], ' ')
						FROM words, generate_series(4, 43) i) AS t0,
					(SELECT string_agg(w[1 + floor(n * ((hashint8(k::bigint * 1024 + i) & 2147483647)::float8 / 2147483648.0::float8) ^ 3::float8)::int], ' ')
						FROM words, generate_series(44, 45) i) AS h1,
					(SELECT string_agg(w[1 + floor(n * ((hashint8(k::bigint * 1024 + i) & 2147483647)::float8 / 2147483648.0::float8) ^ 3::float8)::int], ' ')
						FROM words, generate_series(46, 105) i) AS t1) t),
			hashed AS (SELECT src.*, encode(sha256(convert_to(markdown, 'UTF8')), 'hex') AS sha FROM src),
			bodies AS (INSERT INTO page_bodies (organization_id, sha256, markdown) SELECT org, sha, markdown FROM hashed),
			sections AS (INSERT INTO body_sections (organization_id, body_sha256, position, anchor, heading, body)
				SELECT org, sha, 0, trim(both '-' from regexp_replace(lower(h0), '[^a-z0-9]+', '-', 'g')), h0, t0 FROM hashed
				UNION ALL
				SELECT org, sha, 1, trim(both '-' from regexp_replace(lower(h1), '[^a-z0-9]+', '-', 'g')), h1, t1 FROM hashed)
			INSERT INTO revision_pages (organization_id, revision_id, page_id, position, type, title, slug, body_sha256, created_at, updated_at)
			SELECT org, @prefix || 'rev-' || s, @prefix || 'page-' || k, (k - 1) / @busy::int, 'document', initcap(h0),
				'page-' || k, sha, now(), now()
			FROM hashed`, args: pgx.NamedArgs{"n": p.Pages, "words": words}, skip: p.Pages == 0},
	}
	if author == "" {
		author = p.Prefix + "author"
	}
	tx, err := pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("atsize: %w", err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck // after Commit, a no-op
	if _, err := tx.Exec(ctx, "SET LOCAL statement_timeout = 0"); err != nil {
		return fmt.Errorf("atsize: %w", err)
	}
	for _, s := range statements {
		if s.skip {
			continue
		}
		args := pgx.NamedArgs{"prefix": p.Prefix, "org": p.Organization, "orgs": p.orgs(), "author": author, "busy": p.busy()}
		for k, v := range s.args {
			args[k] = v
		}
		if _, err := tx.Exec(ctx, s.sql, args); err != nil {
			return fmt.Errorf("atsize: %w\n%s", err, s.sql)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("atsize: %w", err)
	}
	if _, err := pool.Exec(ctx, "ANALYZE"); err != nil {
		return fmt.Errorf("atsize: %w", err)
	}
	return nil
}
