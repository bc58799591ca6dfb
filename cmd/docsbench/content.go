package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/docsapi/docsapi/store"
)

// The content scenario (-scenario content): what writing and finding
// documentation costs.
//
//  1. Import: a generated repository in GitBook's layout (-pages pages,
//     nested 4 deep, about -page-bytes of markdown each, SUMMARY.md giving
//     the tree) is imported into a new space through POST
//     /v1/spaces/{id}/git/import from a file:// URL; the time of that call.
//  2. Merge: a change request edits -merge-pages pages of that space (one
//     GraphQL updatePage each), then POST .../merge is timed; -merges change
//     requests, the median and the slowest reported.
//  3. Search: the same repository is imported into more spaces of the
//     organization until it holds -search-pages pages, and -search-others
//     other organizations are given a copy of its content (by SQL, then
//     VACUUM ANALYZE). The spaces are published in a public site. Then
//     -search-requests one-word and two-word queries, one at a time, are
//     asked of the organization's search (GET /v1/orgs/{id}/search), of
//     the site's search (POST /v1/orgs/{id}/sites/{id}/search, every site
//     space) and of the reader's page of results (GET
//     {published}/~gitbook/search?q=, as an anonymous visitor): p50 and
//     p99 of each, and the slowest organization searches.
//
// Import and merge have no limit: their figures are absolute. The three
// searches are measured with their limit, store.Search called in-process,
// query by query in turn (searchBench); goal: each p99 at most
// searchGoalP99 times the limit's.

// contentRepo is a generated repository on disk.
type contentRepo struct {
	url   string
	pages int
	bytes int
	words []string // the vocabulary its text is drawn from
}

// fanOut is the smallest fan-out with which a tree 4 levels deep holds n pages.
func fanOut(n int) int {
	f := 1
	for f+f*f+f*f*f+f*f*f*f < n {
		f++
	}
	return f
}

// vocabulary makes n pronounceable pseudo-words, all different.
func vocabulary(rng *rand.Rand, n int) []string {
	syllables := []string{"ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "ze", "pa", "qui", "dor", "len", "mar", "sol", "tan", "ver", "bri", "cos", "fel"}
	seen := map[string]bool{}
	words := make([]string, 0, n)
	for len(words) < n {
		var b strings.Builder
		for range 2 + rng.IntN(3) {
			b.WriteString(syllables[rng.IntN(len(syllables))])
		}
		if w := b.String(); !seen[w] {
			seen[w] = true
			words = append(words, w)
		}
	}
	return words
}

// generateRepo writes a repository of n pages under dir and commits it to
// refs/heads/main: its text is drawn from words with a generator seeded by
// seed, so repositories of different seeds share a vocabulary but no page. Page k's parent is page k/f-1 (breadth first, f the fan
// out), so the tree is 4 levels deep; a page with children is dir/README.md,
// a leaf dir/slug.md. Words follow a Zipf law, as in real text: a few are
// everywhere, most are rare.
func generateRepo(dir string, n, pageBytes int, words []string, seed uint64) (*contentRepo, error) {
	rng := rand.New(rand.NewPCG(seed, 2))
	zipf := rand.NewZipf(rng, 1.1, 2, uint64(len(words)-1))
	text := func(size int) string {
		var b strings.Builder
		for b.Len() < size {
			b.WriteString(words[zipf.Uint64()])
			if rng.IntN(12) == 0 {
				b.WriteString(". ")
			} else {
				b.WriteByte(' ')
			}
		}
		return b.String()
	}
	f := fanOut(n)
	parent := func(k int) int { return k/f - 1 }
	hasChildren := func(k int) bool { return (k+1)*f < n }
	file := make([]string, n) // path of page k's file
	dirOf := make([]string, n)
	for k := range n {
		base := ""
		if p := parent(k); p >= 0 {
			base = dirOf[p]
		}
		slug := fmt.Sprintf("page-%d", k)
		if hasChildren(k) {
			dirOf[k] = path.Join(base, slug)
			file[k] = path.Join(dirOf[k], "README.md")
		} else {
			file[k] = path.Join(base, slug+".md")
		}
	}
	files := map[string][]byte{}
	total := 0
	write := func(rel, content string) {
		files[rel] = []byte(content)
		total += len(content)
	}
	var summary strings.Builder
	summary.WriteString("# Table of contents\n\n")
	var walk func(k, depth int)
	walk = func(k, depth int) {
		fmt.Fprintf(&summary, "%s* [Page %d](%s)\n", strings.Repeat("  ", depth), k, file[k])
		for c := (k + 1) * f; c < min((k+2)*f, n); c++ {
			walk(c, depth+1)
		}
	}
	for k := range min(f, n) {
		walk(k, 0)
	}
	write("SUMMARY.md", summary.String())
	for k := range n {
		var b strings.Builder
		fmt.Fprintf(&b, "# Page %d\n\n%s\n\n", k, text(pageBytes/4))
		fmt.Fprintf(&b, "## %s %s\n\n%s\n\n", words[rng.IntN(len(words))], words[rng.IntN(len(words))], text(pageBytes/4))
		fmt.Fprintf(&b, "```sh\ndocs %s --%s\n```\n\n", words[rng.IntN(len(words))], words[rng.IntN(len(words))])
		fmt.Fprintf(&b, "## %s\n\n%s\n", words[rng.IntN(len(words))], text(pageBytes/2-80))
		write(file[k], b.String())
	}
	if err := commitFiles(dir, files); err != nil {
		return nil, err
	}
	return &contentRepo{url: "file://" + dir, pages: n, bytes: total, words: words}, nil
}

// commitFiles creates a bare repository at dir whose refs/heads/main is one
// commit of files. It writes the git objects directly: a worktree and its
// index would cost more than the whole import being measured.
func commitFiles(dir string, files map[string][]byte) error {
	repo, err := git.PlainInit(dir, true)
	if err != nil {
		return err
	}
	st := repo.Storer
	put := func(typ plumbing.ObjectType, encode func(plumbing.EncodedObject) error) (plumbing.Hash, error) {
		obj := st.NewEncodedObject()
		obj.SetType(typ)
		if err := encode(obj); err != nil {
			return plumbing.ZeroHash, err
		}
		return st.SetEncodedObject(obj)
	}
	type node struct {
		blobs map[string]plumbing.Hash
		dirs  map[string]*node
	}
	newNode := func() *node { return &node{blobs: map[string]plumbing.Hash{}, dirs: map[string]*node{}} }
	root := newNode()
	for p, data := range files {
		h, err := put(plumbing.BlobObject, func(o plumbing.EncodedObject) error {
			w, err := o.Writer()
			if err != nil {
				return err
			}
			if _, err := w.Write(data); err != nil {
				return err
			}
			return w.Close()
		})
		if err != nil {
			return err
		}
		parts := strings.Split(p, "/")
		d := root
		for _, part := range parts[:len(parts)-1] {
			if d.dirs[part] == nil {
				d.dirs[part] = newNode()
			}
			d = d.dirs[part]
		}
		d.blobs[parts[len(parts)-1]] = h
	}
	var writeTree func(d *node) (plumbing.Hash, error)
	writeTree = func(d *node) (plumbing.Hash, error) {
		var entries []object.TreeEntry
		for name, h := range d.blobs {
			entries = append(entries, object.TreeEntry{Name: name, Mode: filemode.Regular, Hash: h})
		}
		for name, sub := range d.dirs {
			h, err := writeTree(sub)
			if err != nil {
				return plumbing.ZeroHash, err
			}
			entries = append(entries, object.TreeEntry{Name: name, Mode: filemode.Dir, Hash: h})
		}
		// Git orders a tree's entries by name, a directory's name read with
		// a trailing slash.
		key := func(e object.TreeEntry) string {
			if e.Mode == filemode.Dir {
				return e.Name + "/"
			}
			return e.Name
		}
		slices.SortFunc(entries, func(a, b object.TreeEntry) int { return strings.Compare(key(a), key(b)) })
		tree := &object.Tree{Entries: entries}
		return put(plumbing.TreeObject, tree.Encode)
	}
	treeHash, err := writeTree(root)
	if err != nil {
		return err
	}
	sig := object.Signature{Name: "docsbench", Email: "docsbench@example.com", When: time.Now()}
	commit := &object.Commit{Author: sig, Committer: sig, Message: "Generated content", TreeHash: treeHash}
	commitHash, err := put(plumbing.CommitObject, commit.Encode)
	if err != nil {
		return err
	}
	if err := st.SetReference(plumbing.NewHashReference("refs/heads/main", commitHash)); err != nil {
		return err
	}
	return st.SetReference(plumbing.NewSymbolicReference(plumbing.HEAD, "refs/heads/main"))
}

// contentBench runs the content scenario against the server at api.
func contentBench(ctx context.Context, db *store.DB, api *apiClient, o options, gitRoot string, out io.Writer) ([]row, error) {
	genStart := time.Now()
	words := contentWords()
	generate := func(i int) (*contentRepo, error) {
		return generateRepo(filepath.Join(gitRoot, fmt.Sprintf("content-%d", i)), o.pages, o.pageBytes, words, uint64(i))
	}
	repo, err := generate(0)
	if err != nil {
		return nil, fmt.Errorf("generate the repository: %w", err)
	}
	fmt.Fprintf(out, "content: generated a repository of %d pages (%d KB of markdown, fan-out %d, 4 levels) in %s\n",
		repo.pages, repo.bytes/1024, fanOut(repo.pages), time.Since(genStart).Round(time.Millisecond))

	org, err := api.create(ctx, "/v1/orgs", map[string]any{"title": "Content bench"})
	if err != nil {
		return nil, err
	}
	newSpace := func(ctx context.Context, i int) (string, error) {
		return api.create(ctx, "/v1/orgs/"+org+"/spaces", map[string]any{"title": fmt.Sprintf("Docs %d", i)})
	}
	importInto := func(ctx context.Context, space string, repo *contentRepo) (time.Duration, error) {
		t0 := time.Now()
		err := api.do(ctx, "POST", "/v1/spaces/"+space+"/git/import",
			map[string]any{"url": repo.url, "ref": "refs/heads/main"}, http.StatusNoContent, nil)
		return time.Since(t0), err
	}

	// 1. Import.
	first, err := newSpace(ctx, 0)
	if err != nil {
		return nil, err
	}
	importTime, err := importInto(ctx, first, repo)
	if err != nil {
		return nil, fmt.Errorf("import: %w", err)
	}
	pageIDs, err := documentPages(ctx, api, first)
	if err != nil {
		return nil, err
	}
	if len(pageIDs) != repo.pages {
		return nil, fmt.Errorf("import: the space has %d pages, the repository %d", len(pageIDs), repo.pages)
	}

	// 2. Merges.
	rng := rand.New(rand.NewPCG(3, 4))
	var merges []time.Duration
	for m := range o.merges {
		cr, err := api.create(ctx, "/v1/spaces/"+first+"/change-requests", map[string]any{"subject": fmt.Sprintf("Edit %d pages", o.mergePages)})
		if err != nil {
			return nil, err
		}
		edited := rng.Perm(len(pageIDs))[:min(o.mergePages, len(pageIDs))]
		markdown := make([]string, len(edited))
		for i := range markdown {
			markdown[i] = fmt.Sprintf("Rewritten in change request %d: %s %s %s.\n", m,
				repo.words[rng.IntN(len(repo.words))], repo.words[rng.IntN(len(repo.words))], repo.words[rng.IntN(len(repo.words))])
		}
		err = parallel(ctx, o.seedConcurrency, len(edited), func(ctx context.Context, i int) error {
			return api.graphql(ctx, `mutation Edit($s: ID!, $c: ID!, $p: ID!, $m: String!) {
  updatePage(spaceId: $s, changeRequestId: $c, pageId: $p, input: {markdown: $m}) { id }
}`, map[string]any{"s": first, "c": cr, "p": pageIDs[edited[i]], "m": markdown[i]})
		})
		if err != nil {
			return nil, fmt.Errorf("edit: %w", err)
		}
		t0 := time.Now()
		if err := api.do(ctx, "POST", "/v1/spaces/"+first+"/change-requests/"+cr+"/merge", nil, http.StatusOK, nil); err != nil {
			return nil, fmt.Errorf("merge: %w", err)
		}
		merges = append(merges, time.Since(t0))
	}
	slices.Sort(merges)

	// 3. Search over -search-pages pages: more spaces, each its own
	// repository (so every page is different, as in a real organization).
	spaces := (o.searchPages + repo.pages - 1) / repo.pages
	seedStart := time.Now()
	var imports []time.Duration
	importTimes := make([]time.Duration, spaces-1)
	spaceIDs := make([]string, spaces)
	spaceIDs[0] = first
	err = parallel(ctx, o.importConcurrency, spaces-1, func(ctx context.Context, i int) error {
		repo, err := generate(i + 1)
		if err != nil {
			return err
		}
		space, err := newSpace(ctx, i+1)
		if err != nil {
			return err
		}
		spaceIDs[i+1] = space
		importTimes[i], err = importInto(ctx, space, repo)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("import for search: %w", err)
	}
	imports = append(append(imports, importTime), importTimes...)
	slices.Sort(imports)
	fmt.Fprintf(out, "content: %d more spaces of %d pages generated and imported in %s, %d at a time (%d pages in the organization)\n",
		spaces-1, repo.pages, time.Since(seedStart).Round(time.Millisecond), o.importConcurrency, spaces*repo.pages)
	// Other organizations' content, so that search is measured at a
	// realistic size: their sections share the vocabulary, so a word's
	// matches in the whole database are -search-others + 1 times the
	// organization's own.
	if o.searchOthers > 0 {
		t0 := time.Now()
		pages, err := copyContentToOthers(ctx, db, org, o.searchOthers)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(out, "content: %d other organizations given a copy of its content by SQL (%d pages in all) in %s\n",
			o.searchOthers, pages, time.Since(t0).Round(time.Millisecond))
	}
	// Fresh statistics and visibility map, as autovacuum would gather
	// within a minute of such a bulk load; without them PostgreSQL plans
	// the search for empty tables.
	if _, err := db.Pool.Exec(ctx, "VACUUM ANALYZE"); err != nil {
		return nil, err
	}

	qrng := rand.New(rand.NewPCG(5, 6))
	queries := make([]string, o.searchRequests)
	for i := range queries {
		q := repo.words[qrng.IntN(len(repo.words))]
		if i%2 == 1 {
			q += " " + repo.words[qrng.IntN(len(repo.words))]
		}
		queries[i] = q
	}
	// 4. The same queries: the organization's search, a published site's
	// search over the API and the reader's page of results, alternating
	// query by query with their limit (searchBench).
	stopProfile, err := startCPUProfile(o.cpuProfile)
	if err != nil {
		return nil, err
	}
	searches, err := searchBench(ctx, db, api, org, spaceIDs, queries)
	stopProfile()
	if err != nil {
		return nil, err
	}
	for _, i := range searches.slowest(searchOrg, 5) {
		fmt.Fprintf(out, "content: slow search %q: %s, %d KB\n", queries[i], searches.took[searchOrg][i].Round(10*time.Microsecond), searches.sizes[i]/1024)
	}
	// The reader's slowest pages beside the same query's other searches:
	// whether a slow page is a slow query or the page's own time.
	for _, i := range searches.slowest(searchReader, 5) {
		ms := func(k int) time.Duration { return searches.took[k][i].Round(10 * time.Microsecond) }
		fmt.Fprintf(out, "content: slow reader's search %q: %s (limit %s, organization %s, site %s)\n",
			queries[i], ms(searchReader), ms(searchBare), ms(searchOrg), ms(searchSite))
	}

	pages := spaces * repo.pages
	rows := []row{
		{what: fmt.Sprintf("git import, %d pages (first space)", repo.pages), docsapi: fmtSeconds(importTime)},
		{what: fmt.Sprintf("git import, %d pages (median of %d)", repo.pages, len(imports)), docsapi: fmtSeconds(imports[len(imports)/2])},
		{what: fmt.Sprintf("merge, change request editing %d pages (median of %d)", o.mergePages, len(merges)), docsapi: fmtMs(merges[len(merges)/2])},
		{what: fmt.Sprintf("merge, change request editing %d pages (slowest)", o.mergePages), docsapi: fmtMs(merges[len(merges)-1])},
	}
	bare := searches.result(searchBare)
	for _, k := range []struct {
		kind int
		what string
	}{
		{searchOrg, fmt.Sprintf("organization search over %d pages (%d queries, %d with results)", pages, len(queries), searches.hits)},
		{searchSite, fmt.Sprintf("site search (searchSiteContent, scope all) over %d pages", pages)},
		{searchReader, fmt.Sprintf("a reader's page of search results over %d pages", pages)},
	} {
		r := searches.result(k.kind)
		p99 := ratio(ms(r.percentile(99)), ms(bare.percentile(99)))
		rows = append(rows,
			row{what: k.what + ", p50", docsapi: fmtMs(r.percentile(50)), baseline: fmtMs(bare.percentile(50)),
				ratio: fmtRatio(ratio(ms(r.percentile(50)), ms(bare.percentile(50))))},
			row{what: k.what + ", p99", docsapi: fmtMs(r.percentile(99)), baseline: fmtMs(bare.percentile(99)),
				ratio: fmtRatio(p99), target: fmt.Sprintf("<= %.1fx", searchGoalP99), result: passMiss(p99 <= searchGoalP99)})
	}
	return rows, nil
}

// The search goal, a ratio to the limit measured in the same run: issue
// 38's p99 <= 50 ms for the site's search and the reader's page of results
// (and the organization's search's, docs/performance.md) divided by the
// limit's p99 as this project's 2-vCPU VM measured it, quiet, in a default
// run over 50,000 pages (-merges 1, 2026-11-29, nothing else running):
// 13.57 ms, 50 / 13.57 = 3.68, rounded down. Set quiet: a busy machine
// slows the bare statements more than the server's work around them
// (docs/decisions.md, "Goals against limits measured in the same run").
const searchGoalP99 = 3.5

// The searches measured, and their limit: store.Search, the two statements
// every search runs (the searched spaces' revisions, then the hits), called
// in-process on the server's pool with the same organization, spaces and
// query, without HTTP, authentication, access, GraphQL, JSON or HTML.
const (
	searchBare = iota
	searchOrg
	searchSite
	searchReader
	searchKinds
)

// searchRuns are the latencies of each kind by query.
type searchRuns struct {
	took  [searchKinds][]time.Duration
	sizes []int // the organization search's answer, by query
	hits  int   // organization searches with results
}

func (s *searchRuns) result(kind int) loadResult {
	lat := slices.Clone(s.took[kind])
	slices.Sort(lat)
	return loadResult{n: len(lat), lat: lat}
}

// slowest are the n slowest searches of kind, slowest first.
func (s *searchRuns) slowest(kind, n int) []int {
	took := s.took[kind]
	order := make([]int, len(took))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(took[b], took[a]) })
	return order[:min(n, len(order))]
}

// searchBench publishes the spaces in a public site, runs every query once
// through the limit (a warm-up: the pages' sections in PostgreSQL's
// buffers for every side alike), then measures, one query at a time, each
// query through the limit, the organization's search (GET
// /v1/orgs/{id}/search), the site's search over the API (POST
// /v1/orgs/{id}/sites/{id}/search, every site space) and the reader's page
// of results (GET {published}/~gitbook/search?q=, as an anonymous
// visitor), in turn: the machine's drift falls on all alike.
func searchBench(ctx context.Context, db *store.DB, api *apiClient, org string, spaceIDs, queries []string) (*searchRuns, error) {
	site, err := api.create(ctx, "/v1/orgs/"+org+"/sites", map[string]any{"title": "Searched", "visibility": "public", "spaces": spaceIDs})
	if err != nil {
		return nil, err
	}
	var published struct {
		URLs struct{ Published string } `json:"urls"`
	}
	if err := api.do(ctx, "POST", "/v1/orgs/"+org+"/sites/"+site+"/publish", nil, http.StatusOK, &published); err != nil {
		return nil, err
	}
	runs := &searchRuns{sizes: make([]int, len(queries))}
	ok := func(what string) func(status int, body []byte) error {
		return func(status int, body []byte) error {
			if status != http.StatusOK {
				return fmt.Errorf("%s: status %d: %.300s", what, status, body)
			}
			return nil
		}
	}
	var send [searchKinds]requester
	send[searchBare] = func(ctx context.Context, _ *bytes.Buffer, i int) error {
		_, err := store.Search(ctx, db, org, spaceIDs, queries[i])
		return err
	}
	send[searchOrg] = httpRequester(api.client, "GET", func(i int) string {
		return api.base + "/v1/orgs/" + org + "/search?query=" + url.QueryEscape(queries[i])
	}, nil, api.token, func(status int, body []byte) error {
		if err := ok("search")(status, body); err != nil {
			return err
		}
		var res struct {
			Items []json.RawMessage `json:"items"`
		}
		if err := json.Unmarshal(body, &res); err != nil {
			return err
		}
		if len(res.Items) > 0 {
			runs.hits++
		}
		return nil
	})
	send[searchSite] = httpRequesterEach(api.client, "POST", func(int) string { return api.base + "/v1/orgs/" + org + "/sites/" + site + "/search" },
		func(i int) []byte {
			body, _ := json.Marshal(map[string]any{"query": queries[i], "scope": map[string]any{"mode": "all"}})
			return body
		}, api.token, ok("site search"))
	send[searchReader] = httpRequester(api.client, "GET", func(i int) string {
		return published.URLs.Published + "/~gitbook/search?q=" + url.QueryEscape(queries[i])
	}, nil, "", ok("a reader's search"))

	var buf bytes.Buffer
	for i := range queries {
		if err := send[searchBare](ctx, &buf, i); err != nil {
			return nil, fmt.Errorf("search (warm-up): %w", err)
		}
	}
	for k := range runs.took {
		runs.took[k] = make([]time.Duration, len(queries))
	}
	for i := range queries {
		for k := range send {
			buf.Reset()
			t0 := time.Now()
			if err := send[k](ctx, &buf, i); err != nil {
				return nil, err
			}
			runs.took[k][i] = time.Since(t0)
			if k == searchOrg {
				runs.sizes[i] = buf.Len()
			}
		}
	}
	return runs, nil
}

// copyContentToOthers gives n new organizations a copy of org's spaces'
// current content (spaces, a revision each, the pages, their bodies and
// search sections), by SQL, and returns how many pages they hold in all.
// None of them is reachable by the bench's user.
func copyContentToOthers(ctx context.Context, db *store.DB, org string, n int) (int64, error) {
	// A prefix per run: DATABASE_URL may name a database a previous run
	// filled already.
	prefix := fmt.Sprintf("c%x-", time.Now().UnixNano()&0xffffffff)
	statements := []string{
		`INSERT INTO organizations (id, title, created_at, updated_at)
		 SELECT $1 || g, o.title || ' (copy ' || g || ')', now(), now()
		 FROM organizations o, generate_series(1, $3::int) g WHERE o.id = $2`,
		`INSERT INTO spaces (id, organization_id, title, revision_id, created_at, updated_at)
		 SELECT $1 || g || '-' || s.id, $1 || g, s.title, $1 || g || '-' || s.revision_id, now(), now()
		 FROM spaces s, generate_series(1, $3::int) g WHERE s.organization_id = $2 AND s.deleted_at IS NULL`,
		`INSERT INTO revisions (id, space_id, organization_id, type, created_at)
		 SELECT $1 || g || '-' || s.revision_id, $1 || g || '-' || s.id, $1 || g, 'edits', now()
		 FROM spaces s, generate_series(1, $3::int) g WHERE s.organization_id = $2 AND s.deleted_at IS NULL`,
		`INSERT INTO page_bodies (organization_id, sha256, markdown)
		 SELECT $1 || g, b.sha256, b.markdown FROM page_bodies b, generate_series(1, $3::int) g WHERE b.organization_id = $2`,
		`INSERT INTO body_sections (organization_id, body_sha256, position, anchor, heading, body)
		 SELECT $1 || g, b.body_sha256, b.position, b.anchor, b.heading, b.body
		 FROM body_sections b, generate_series(1, $3::int) g WHERE b.organization_id = $2`,
		`INSERT INTO revision_pages (organization_id, revision_id, page_id, parent_id, position, type, title, slug, body_sha256, created_at, updated_at)
		 SELECT $1 || g, $1 || g || '-' || rp.revision_id, rp.page_id, rp.parent_id, rp.position, rp.type, rp.title, rp.slug, rp.body_sha256, now(), now()
		 FROM spaces s JOIN revision_pages rp ON rp.revision_id = s.revision_id, generate_series(1, $3::int) g
		 WHERE s.organization_id = $2 AND s.deleted_at IS NULL`,
	}
	var pages int64
	for _, q := range statements {
		tag, err := db.Pool.Exec(ctx, q, prefix, org, n)
		if err != nil {
			return 0, fmt.Errorf("other organizations' content: %w", err)
		}
		pages = tag.RowsAffected() // the last statement's: the pages
	}
	return pages, nil
}

// documentPages lists the ids of a space's document pages, depth first.
func documentPages(ctx context.Context, api *apiClient, space string) ([]string, error) {
	type page struct {
		ID    string  `json:"id"`
		Type  string  `json:"type"`
		Pages []*page `json:"pages"`
	}
	var rev struct {
		Pages []*page `json:"pages"`
	}
	if err := api.do(ctx, "GET", "/v1/spaces/"+space+"/content", nil, http.StatusOK, &rev); err != nil {
		return nil, err
	}
	var ids []string
	var walk func([]*page)
	walk = func(ps []*page) {
		for _, p := range ps {
			if p.Type == "document" {
				ids = append(ids, p.ID)
			}
			walk(p.Pages)
		}
	}
	walk(rev.Pages)
	return ids, nil
}

func printContentTable(w io.Writer, rows []row) {
	writeRows(w, "docsapi", "limit", rows)
	fmt.Fprintln(w)
	fmt.Fprintln(w, "ratio = docsapi / limit; search's limit: store.Search (the same statements, organization, spaces and query) called in-process, alternating query by query with the three searches.")
}

func fmtSeconds(d time.Duration) string { return fmt.Sprintf("%.2f s", d.Seconds()) }
