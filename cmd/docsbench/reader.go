package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/docsapi/docsapi/cmd/docsapi/server"
	"github.com/docsapi/docsapi/store"
	"github.com/docsapi/docsapi/store/blob"
)

// The reader scenario (-scenario reader): what a visitor of a published
// site waits for (package published renders each page from the API's
// GraphQL operations, run in-process as the visitor).
//
// The limit it is compared with is net/http's FileServer serving the very
// bytes docsapi answered for the same page, from a file on disk, on
// another loopback listener of this process: the cost of handing those
// bytes to an HTTP client at all, the least any server could do, measured
// on this machine in this run (absolute times differ 3× between boxes).
// Issue's goal: a page view's throughput at concurrency 8 at least 0.5×
// the file server's. Passes alternate between the two, -reader-rounds
// times; the ratio is the median of the rounds' ratios, so that drift of
// the machine falls on both alike. Every answer is compared with the bytes
// first fetched: both sides serve the same page, and a pass stops at the
// first that differs.
//
//  1. Seeding, through the REST and GraphQL APIs: an organization, a space
//     of -reader-pages pages made one GraphQL createPage after another
//     (a few KB of markdown each: headings, a code block, a hint, a list, a
//     table, relative links to other pages; nested 4 deep under a few top
//     pages), then a public site with that space, published.
//  2. The first view of the site's front page, right after that first
//     publish, is timed: nothing of the site has been read yet.
//  3. One page deep in the space is fetched once and written to disk;
//     docsapi's page view and the file server's copy are measured at
//     -reader-concurrency with keep-alive clients (load.go, a warm-up
//     before each pass; requests/s, p50, p99, CPU per request from
//     cpu.go). Beside it, without a target, the same for -reader-mix
//     distinct pages requested in turn (each file server request serves
//     that page's own bytes).
//  4. What a reader sees after the content changes: a page is viewed, then
//     edited (GraphQL updatePage, a new revision of the space), and the
//     first view after the edit is timed, -reader-first-views times on
//     different pages: p50 and max. An answer without the edit is stale;
//     the view is then repeated until the edit shows, and that wait is
//     reported too.
//  5. Memory: the reader's cache, as /metrics reports it
//     (docsapi_published_cache_bytes and docsapi_published_cache_entries;
//     "n/a" when the server has no such gauges) after the page views and
//     after the edits, and this process's Go heap after a collection: the
//     server runs in this process, beside the load clients and the file
//     server.
//
// The database is an embedded PostgreSQL in a temporary directory, or the
// server at DATABASE_URL (the run then leaves its user, organization and
// site behind). One docsapi server (without Debug) is started; its rate
// budget is on as in the tree scenario (visitors' page views spend none).
// A completed run exits 0 whatever the figures.
func readerBench(ctx context.Context, o options, out io.Writer) (err error) {
	fmt.Fprintf(out, "docsbench reader: a published space of %d pages; concurrency %d; %s per pass, %d rounds; load average %s\n",
		o.readerPages, o.readerConcurrency, o.duration, o.readerRounds, loadAverage())
	// The database's directory apart: pgserver hands it to the server's
	// OS user. The other holds the blobs and the file server's pages.
	var dirs [2]string
	for i := range dirs {
		if dirs[i], err = os.MkdirTemp("", "docsbench-reader-"); err != nil {
			return err
		}
		defer os.RemoveAll(dirs[i])
	}
	dbDir, filesDir := dirs[0], dirs[1]
	connect := store.ConnectOptions{DatabaseURL: os.Getenv("DATABASE_URL"), MaxConns: int32(o.dbMaxConns)}
	dbWhere := "DATABASE_URL"
	if connect.DatabaseURL == "" {
		connect.DataDir = dbDir
		dbWhere = "embedded, in a temporary directory"
	}
	db, closeDB, pgVersion, err := openDatabase(ctx, connect)
	if err != nil {
		return err
	}
	defer closeDB()
	// PostgreSQL's CPU is the embedded server's alone (other servers may
	// run on this machine); at DATABASE_URL, every postgres process's.
	var postmasters []int
	if pg := db.Embedded(); pg != nil {
		postmasters = []int{pg.PID()}
	}

	blobURL, err := blob.FileURL(filepath.Join(filesDir, "blobs"))
	if err != nil {
		return err
	}
	pagesDir := filepath.Join(filesDir, "pages")
	if err := os.Mkdir(pagesDir, 0o755); err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	var listeners servers
	defer listeners.close()
	var srv *server.Server
	docsURL, err := listeners.start(func(url string) (http.Handler, error) {
		s, err := server.New(db, server.Config{PublicURL: url, Log: logger, BlobURL: blobURL, MaxBodyBytes: 8 << 20,
			RateLimit: o.rateLimit, RateWindow: o.rateWindow})
		srv = s
		return s, err
	})
	if err != nil {
		return err
	}
	defer srv.Close()
	filesURL, err := listeners.start(func(string) (http.Handler, error) { return http.FileServer(http.Dir(pagesDir)), nil })
	if err != nil {
		return err
	}
	client := newClient(o.readerConcurrency + o.seedConcurrency)
	defer client.CloseIdleConnections()
	created, err := srv.Resolver.CreateUser(ctx, fmt.Sprintf("bench-%d@example.com", time.Now().UnixNano()), "Bench")
	if err != nil {
		return err
	}
	api := &apiClient{client: client, base: docsURL, token: created.Token}
	// bench.send (bench.go) reads only the bench's client: a GET with its
	// status, headers and body.
	get := func(ctx context.Context, url string) (int, http.Header, []byte, error) {
		return (&bench{client: client}).send(ctx, "GET", url, nil, "")
	}

	// 1. The space, its site, published.
	seedStart := time.Now()
	sp, err := seedReaderSpace(ctx, api, o.readerPages)
	if err != nil {
		return fmt.Errorf("seed: %w", err)
	}
	fmt.Fprintf(out, "seeded through the API in %s: %d pages (%d KB of markdown, fan-out %d, 4 levels), one createPage after another\n",
		time.Since(seedStart).Round(time.Millisecond), len(sp.pages), sp.markdownBytes()/1024, fanOut(len(sp.pages)))
	// Fresh statistics, as autovacuum would gather within a minute.
	if _, err := db.Pool.Exec(ctx, "ANALYZE"); err != nil {
		return err
	}
	base, err := publishReaderSite(ctx, api, sp)
	if err != nil {
		return fmt.Errorf("publish: %w", err)
	}

	// 2. The first view of the front page.
	t0 := time.Now()
	status, h, front, err := get(ctx, base)
	firstFront := time.Since(t0)
	if err != nil {
		return err
	}
	if status != http.StatusOK || !strings.HasPrefix(h.Get("Content-Type"), "text/html") {
		return fmt.Errorf("the front page %s: status %d, %s: %.300s", base, status, h.Get("Content-Type"), front)
	}
	fmt.Fprintf(out, "published at %s; its front page first viewed in %s (%d KB)\n", base, firstFront.Round(10*time.Microsecond), len(front)/1024)
	heapPublished := heapAfterGC()

	// 3. The pages measured, fetched once and written to disk.
	one := len(sp.pages) / 2
	mixed := make([]int, min(o.readerMix, len(sp.pages)))
	for i := range mixed {
		mixed[i] = i * len(sp.pages) / len(mixed)
	}
	single, err := fetchReaderPages(ctx, get, base, pagesDir, sp, []int{one})
	if err != nil {
		return err
	}
	mix, err := fetchReaderPages(ctx, get, base, pagesDir, sp, mixed)
	if err != nil {
		return err
	}
	// The bench's own copies of the pages, in the heaps measured after.
	held := int64(len(single.bodies[0]) + mix.meanBytes()*len(mix.bodies))
	resolved, linked := sp.linksResolved(base, one, single.bodies[0])
	fmt.Fprintf(out, "page measured: /%s (%d KB of HTML from %d KB of markdown; %d of its %d links to other pages at their published address); mix: %d pages, %d KB of HTML on average\n",
		sp.pages[one].path, len(single.bodies[0])/1024, len(sp.pages[one].markdown)/1024, resolved, linked, len(mix.urls), mix.meanBytes()/1024)

	stopProfile, err := startCPUProfile(o.cpuProfile)
	if err != nil {
		return err
	}
	type pair struct{ docs, files []loadResult }
	var views, mixes pair
	for r := range o.readerRounds {
		for _, m := range []struct {
			name string
			set  *readerPageSet
			into *pair
		}{{"page view", single, &views}, {fmt.Sprintf("mix of %d pages", len(mix.urls)), mix, &mixes}} {
			f, err := timedPass(ctx, o, fmt.Sprintf("%s, round %d (file server)", m.name, r+1), o.readerConcurrency, m.set.requester(client, filesURL), postmasters)
			if err != nil {
				stopProfile()
				return err
			}
			d, err := timedPass(ctx, o, fmt.Sprintf("%s, round %d (docsapi)", m.name, r+1), o.readerConcurrency, m.set.requester(client, ""), postmasters)
			if err != nil {
				stopProfile()
				return err
			}
			m.into.docs, m.into.files = append(m.into.docs, d), append(m.into.files, f)
		}
	}
	stopProfile()
	cacheViews := readCacheMetrics(ctx, get, docsURL)
	heapViews := heapAfterGC()

	// 4. The first view after an edit.
	edits, err := firstViewsAfterEdits(ctx, api, get, base, sp, o.readerFirstViews, one)
	if err != nil {
		return err
	}
	cacheEdits := readCacheMetrics(ctx, get, docsURL)
	heapEdits := heapAfterGC()

	// The report.
	c := o.readerConcurrency
	rows := readerRows(fmt.Sprintf("page view (%d KB)", len(single.bodies[0])/1024), c, views.docs, views.files, true)
	rows = append(rows, readerRows(fmt.Sprintf("mix of %d pages (%d KB on average)", len(mix.urls), mix.meanBytes()/1024), c, mixes.docs, mixes.files, false)...)
	rows = append(rows,
		row{what: "first view of the front page, right after the first publish", docsapi: fmtMs(firstFront)},
		row{what: fmt.Sprintf("first view of a page after its edit (updatePage), p50 of %d", len(edits.first)), docsapi: fmtMs(median(edits.first))},
		row{what: "first view of a page after its edit, max", docsapi: fmtMs(slices.Max(edits.first))},
		row{what: "first views after an edit not showing it (stale); longest wait", docsapi: edits.staleness()},
		row{what: fmt.Sprintf("updatePage in the space of %d pages, p50", len(sp.pages)), docsapi: fmtMs(median(edits.update))},
		row{what: "reader cache (/metrics) after the page views", docsapi: cacheViews},
		row{what: "reader cache (/metrics) after the edits", docsapi: cacheEdits},
		row{what: "Go heap after GC, this whole process, less the bench's copies of the pages: after the publish, the page views, the edits",
			docsapi: fmt.Sprintf("%d, %d, %d MB (the copies: %d MB)", heapPublished>>20, (heapViews-held)>>20, (heapEdits-held)>>20, held>>20)},
	)
	fmt.Fprintln(out)
	writeRows(out, "docsapi", "file server", rows)
	fmt.Fprintf(out, "\nratio = docsapi / file server (net/http.FileServer serving the bytes docsapi answered, from disk), the median of the rounds' ratios; figures are the median pass's (of median throughput). Both servers in this process, with the load clients, on %d CPUs (GOMAXPROCS %d), %s; %s; PostgreSQL %s (%s); load average at the end %s\n",
		runtime.NumCPU(), runtime.GOMAXPROCS(0), cpuModel(), runtime.Version(), pgVersion, dbWhere, loadAverage())
	return nil
}

// readerRows are the rows of one read measured against the file server:
// throughput (with the goal when goal is set), latency, CPU, the rounds.
func readerRows(what string, c int, docs, files []loadResult, goal bool) []row {
	ratios := make([]float64, len(docs))
	byRound := make([]string, len(docs))
	for i := range docs {
		ratios[i] = ratio(docs[i].rps(), files[i].rps())
		byRound[i] = fmtSmallRatio(ratios[i])
	}
	slices.Sort(ratios)
	r := ratios[(len(ratios)-1)/2]
	d, f := medianPass(docs), medianPass(files)
	throughput := row{what: fmt.Sprintf("%s  throughput, concurrency %d (median of %d)", what, c, len(docs)),
		docsapi: fmtRPS(d.rps()), baseline: fmtRPS(f.rps()), ratio: fmtSmallRatio(r)}
	if goal {
		throughput.target, throughput.result = ">= 0.5x", passMiss(r >= 0.5)
	}
	n := func(rs []loadResult) string {
		s := make([]string, len(rs))
		for i, x := range rs {
			s[i] = strconv.Itoa(x.n)
		}
		return strings.Join(s, " / ")
	}
	return []row{throughput,
		{what: fmt.Sprintf("%s  p50 latency, concurrency %d", what, c), docsapi: fmtMs(d.percentile(50)), baseline: fmtMs(f.percentile(50)),
			ratio: fmtRatio(ratio(ms(d.percentile(50)), ms(f.percentile(50))))},
		{what: fmt.Sprintf("%s  p99 latency, concurrency %d", what, c), docsapi: fmtMs(d.percentile(99)), baseline: fmtMs(f.percentile(99)),
			ratio: fmtRatio(ratio(ms(d.percentile(99)), ms(f.percentile(99))))},
		{what: what + "  CPU per request: process + PostgreSQL", docsapi: fmtCPU(d), baseline: fmtCPU(f),
			ratio: fmtRatio(ratio(float64(d.cpu()), float64(f.cpu())))},
		{what: what + "  throughput ratio by round", ratio: strings.Join(byRound, " ")},
		{what: what + "  requests measured, by round", docsapi: n(docs), baseline: n(files)},
	}
}

// fmtSmallRatio is fmtRatio with two significant digits below 0.1, where
// it would print 0.00x.
func fmtSmallRatio(r float64) string {
	if r >= 0.1 || r == 0 {
		return fmtRatio(r)
	}
	return fmt.Sprintf("%.2gx", r)
}

// readerSpace is the seeded space: its pages in the order they were made
// (breadth first: a page's parent comes before it).
type readerSpace struct {
	org, id, site string
	pages         []*readerPage
}

type readerPage struct {
	id, title, slug string
	// path is the page's path in the space (slugs joined by /), source
	// its markdown file in GitBook's layout, which relative links lead
	// from: path.md, or path/README.md for a page with pages under it.
	path, source string
	parent       int // -1 at the top
	markdown     string
	links        []int // the pages its markdown links to
}

func (s *readerSpace) markdownBytes() int {
	n := 0
	for _, p := range s.pages {
		n += len(p.markdown)
	}
	return n
}

// plannedReaderSpace lays out n pages as content.go's generated
// repositories are (page k's parent is page k/f-1, f the fan-out: a tree 4
// deep) and writes each page's markdown.
func plannedReaderSpace(n int) *readerSpace {
	rng := rand.New(rand.NewPCG(7, 8))
	words := contentWords()
	word := func() string { return words[rng.IntN(200)] } // the common ones
	f := fanOut(n)
	s := &readerSpace{pages: make([]*readerPage, n)}
	for k := range n {
		p := &readerPage{parent: k/f - 1}
		topic := word()
		p.title = readerTitles[k%len(readerTitles)] + " " + topic
		p.slug = fmt.Sprintf("%s-%s-%d", strings.ToLower(strings.Fields(readerTitles[k%len(readerTitles)])[0]), topic, k)
		p.path = p.slug
		if p.parent >= 0 {
			p.path = s.pages[p.parent].path + "/" + p.slug
		}
		p.source = p.path + ".md"
		if (k+1)*f < n {
			p.source = p.path + "/README.md"
		}
		s.pages[k] = p
	}
	for k, p := range s.pages {
		p.markdown = readerMarkdown(rng, word, s, k)
	}
	return s
}

// readerTitles start the pages' titles, as documentation's do.
var readerTitles = []string{"Configure", "Install", "Deploy", "Monitor", "Migrate", "Secure", "Troubleshoot", "Understand", "Scale", "Back up"}

// readerMarkdown writes page k's markdown: about 3 KB of what
// documentation holds, with relative links to the next page, its parent
// and a page elsewhere in the space.
func readerMarkdown(rng *rand.Rand, word func() string, s *readerSpace, k int) string {
	p := s.pages[k]
	link := func(to int) string {
		p.links = append(p.links, to)
		return fmt.Sprintf("[%s](%s)", s.pages[to].title, relativeLink(p.source, s.pages[to].source))
	}
	sentence := func() string {
		return fmt.Sprintf(readerSentences[rng.IntN(len(readerSentences))], word(), word())
	}
	paragraph := func(n int) string {
		out := make([]string, n)
		for i := range out {
			out[i] = sentence()
		}
		return strings.Join(out, " ")
	}
	var b strings.Builder
	fmt.Fprintf(&b, "This page explains how to %s. %s\n\n", strings.ToLower(p.title), paragraph(3))
	fmt.Fprintf(&b, "Next, read %s.", link((k+1)%len(s.pages)))
	if p.parent >= 0 {
		fmt.Fprintf(&b, " It belongs with %s.", link(p.parent))
	}
	fmt.Fprintf(&b, "\n\n## Overview\n\n%s\n\n%s\n\n", paragraph(5), paragraph(4))
	fmt.Fprintf(&b, "## Configuration\n\n%s\n\n", paragraph(3))
	fmt.Fprintf(&b, "```yaml\n%s:\n  enabled: true\n  replicas: %d\n  endpoint: https://%s.example.com/v1\n  timeout: %ds\n  labels:\n    team: %s\n    tier: %s\n```\n\n",
		word(), 1+rng.IntN(5), word(), 5+rng.IntN(55), word(), word())
	fmt.Fprintf(&b, "{%% hint style=\"info\" %%}\n%s If in doubt, see %s.\n{%% endhint %%}\n\n", sentence(), link(rng.IntN(len(s.pages))))
	fmt.Fprintf(&b, "### Options of %s\n\n", word())
	b.WriteString("| Option | Default | Meaning |\n|---|---|---|\n")
	for range 4 {
		fmt.Fprintf(&b, "| `%s` | `%d` | %s |\n", word(), rng.IntN(100), sentence())
	}
	fmt.Fprintf(&b, "\n## Steps\n\n1. %s\n2. %s\n3. %s\n\n```sh\ndocs %s --%s=%d\n```\n\n", sentence(), sentence(), sentence(), word(), word(), rng.IntN(10))
	fmt.Fprintf(&b, "## Troubleshooting\n\n%s\n\n- %s\n- %s\n- %s\n", paragraph(4), sentence(), sentence(), sentence())
	return b.String()
}

var readerSentences = []string{
	"The %s service reads its settings from the %s section when it starts.",
	"Set the %s option before you enable %s, or the change is ignored.",
	"Each %s keeps a copy of the %s it was last given, so a restart is safe.",
	"When the %s fails, the %s retries with a longer delay each time.",
	"Requests to %s are signed with the key of the %s that made them.",
	"You can run %s on its own machine, but most teams run it beside %s.",
	"Logs of the %s name the %s they concern, which makes them easy to search.",
	"A %s may hold up to a thousand %s entries; beyond that, split it.",
	"The dashboard shows the %s of every %s over the last day.",
	"Upgrading %s never changes the %s format: older clients keep working.",
}

// relativeLink is the link from markdown file from to file to, both
// slash-separated paths in the space, as a relative path.
func relativeLink(from, to string) string {
	fromDir := strings.Split(path.Dir(from), "/")
	if fromDir[0] == "." {
		fromDir = nil
	}
	target := strings.Split(to, "/")
	common := 0
	for common < len(fromDir) && common < len(target)-1 && fromDir[common] == target[common] {
		common++
	}
	return strings.Repeat("../", len(fromDir)-common) + strings.Join(target[common:], "/")
}

// seedReaderSpace creates an organization and a space of n pages through
// the API, one createPage after another (each makes a revision of the
// space), parents first.
func seedReaderSpace(ctx context.Context, api *apiClient, n int) (*readerSpace, error) {
	s := plannedReaderSpace(n)
	var err error
	if s.org, err = api.create(ctx, "/v1/orgs", map[string]any{"title": "Reader bench"}); err != nil {
		return nil, err
	}
	if s.id, err = api.create(ctx, "/v1/orgs/"+s.org+"/spaces", map[string]any{"title": "Handbook"}); err != nil {
		return nil, err
	}
	for _, p := range s.pages {
		in := map[string]any{"title": p.title, "slug": p.slug, "markdown": p.markdown}
		if p.parent >= 0 {
			in["parent"] = s.pages[p.parent].id
		}
		var data struct {
			CreatePage struct{ ID, Path string }
		}
		err := graphqlData(ctx, api, `mutation($s: ID!, $in: CreatePageInput!) { createPage(spaceId: $s, input: $in) { id path } }`,
			map[string]any{"s": s.id, "in": in}, &data)
		if err != nil {
			return nil, fmt.Errorf("createPage %s: %w", p.path, err)
		}
		if data.CreatePage.Path != p.path {
			return nil, fmt.Errorf("createPage: the page's path is %q, want %q", data.CreatePage.Path, p.path)
		}
		p.id = data.CreatePage.ID
	}
	return s, nil
}

// publishReaderSite makes a public site of the space, publishes it and
// returns its published address (urls.published).
func publishReaderSite(ctx context.Context, api *apiClient, s *readerSpace) (string, error) {
	var err error
	s.site, err = api.create(ctx, "/v1/orgs/"+s.org+"/sites", map[string]any{"title": "Reader bench docs", "visibility": "public", "spaces": []string{s.id}})
	if err != nil {
		return "", err
	}
	if err := api.do(ctx, "POST", "/v1/orgs/"+s.org+"/sites/"+s.site+"/publish", nil, http.StatusOK, nil); err != nil {
		return "", err
	}
	var data struct {
		Site struct {
			URLs struct{ Published string }
		}
	}
	err = graphqlData(ctx, api, `query($o: ID!, $s: ID!) { site(organizationId: $o, id: $s) { urls { published } } }`,
		map[string]any{"o": s.org, "s": s.site}, &data)
	if err != nil {
		return "", err
	}
	if data.Site.URLs.Published == "" {
		return "", fmt.Errorf("the published site has no urls.published")
	}
	return data.Site.URLs.Published, nil
}

// graphqlData runs a GraphQL operation and decodes its data into out,
// failing on any error in the answer (apiClient.graphql, seed.go, keeps no
// data).
func graphqlData(ctx context.Context, api *apiClient, query string, variables map[string]any, out any) error {
	var res struct {
		Data   json.RawMessage   `json:"data"`
		Errors []json.RawMessage `json:"errors"`
	}
	if err := api.do(ctx, "POST", "/graphql", map[string]any{"query": query, "variables": variables}, http.StatusOK, &res); err != nil {
		return err
	}
	if len(res.Errors) > 0 {
		return fmt.Errorf("GraphQL: %s", res.Errors[0])
	}
	return json.Unmarshal(res.Data, out)
}

// pageURL is page k's published address under the site's base.
func (s *readerSpace) pageURL(base string, k int) string { return base + "/" + s.pages[k].path }

// linksResolved counts the links of page k's markdown to other pages that
// its HTML holds at their published address.
func (s *readerSpace) linksResolved(base string, k int, html []byte) (resolved, linked int) {
	prefix := base
	if i := strings.Index(base, "://"); i >= 0 {
		if j := strings.IndexByte(base[i+3:], '/'); j >= 0 {
			prefix = base[i+3+j:] // the page links by path
		}
	}
	for _, to := range s.pages[k].links {
		linked++
		if strings.Contains(string(html), `href="`+prefix+"/"+s.pages[to].path+`"`) {
			resolved++
		}
	}
	return resolved, linked
}

// readerPageSet is pages of the site, each with the bytes docsapi answered
// for it, also written to disk for the file server.
type readerPageSet struct {
	urls   []string // on docsapi
	files  []string // their names on the file server
	bodies [][]byte
}

// fetchReaderPages GETs pages (indexes in s.pages) once, checks they are
// HTML pages, and writes each one's bytes to dir.
func fetchReaderPages(ctx context.Context, get func(context.Context, string) (int, http.Header, []byte, error),
	base, dir string, s *readerSpace, pages []int) (*readerPageSet, error) {
	set := &readerPageSet{}
	for _, k := range pages {
		url := s.pageURL(base, k)
		status, h, body, err := get(ctx, url)
		if err != nil {
			return nil, err
		}
		if status != http.StatusOK || !strings.HasPrefix(h.Get("Content-Type"), "text/html") {
			return nil, fmt.Errorf("GET %s: status %d, %s: %.300s", url, status, h.Get("Content-Type"), body)
		}
		name := fmt.Sprintf("page-%d.html", k)
		if err := os.WriteFile(filepath.Join(dir, name), body, 0o644); err != nil {
			return nil, err
		}
		set.urls, set.files, set.bodies = append(set.urls, url), append(set.files, name), append(set.bodies, body)
	}
	return set, nil
}

func (set *readerPageSet) meanBytes() int {
	n := 0
	for _, b := range set.bodies {
		n += len(b)
	}
	return n / len(set.bodies)
}

// requester requests the set's pages in turn: from docsapi when
// filesURL is empty, else their copies from the file server there. Every
// answer must be 200 with the bytes first fetched for its page.
func (set *readerPageSet) requester(client *http.Client, filesURL string) requester {
	url := func(i int) string { return set.urls[i%len(set.urls)] }
	if filesURL != "" {
		url = func(i int) string { return filesURL + "/" + set.files[i%len(set.files)] }
	}
	return func(ctx context.Context, buf *bytes.Buffer, i int) error {
		want := set.bodies[i%len(set.bodies)]
		return httpRequester(client, "GET", url, nil, "", func(status int, body []byte) error {
			if err := okStatus(status, body); err != nil {
				return err
			}
			if !bytes.Equal(body, want) {
				return fmt.Errorf("%s: not the page first fetched (%d bytes, want %d)", url(i), len(body), len(want))
			}
			return nil
		})(ctx, buf, i)
	}
}

// editViews are the first views after edits.
type editViews struct {
	first, update []time.Duration
	// stale is how many first views did not show the edit, wait the
	// longest it took until a view did.
	stale int
	wait  time.Duration
}

func (e editViews) staleness() string {
	if e.stale == 0 {
		return fmt.Sprintf("0 of %d", len(e.first))
	}
	return fmt.Sprintf("%d of %d; %s", e.stale, len(e.first), fmtMs(e.wait))
}

// firstViewsAfterEdits views a page, edits it (updatePage, on the live
// space) and times the first view after the edit, n times on pages spread
// over the space (not page skip, the page measured before). A view that
// does not show the edit is stale: it is repeated until the edit shows,
// for at most 10 s.
func firstViewsAfterEdits(ctx context.Context, api *apiClient, get func(context.Context, string) (int, http.Header, []byte, error),
	base string, s *readerSpace, n, skip int) (editViews, error) {
	var e editViews
	run := time.Now().UnixNano() % 1_000_000
	for i := range n {
		k := (i*len(s.pages)/n + 1) % len(s.pages)
		if k == skip {
			k = (k + 1) % len(s.pages)
		}
		url := s.pageURL(base, k)
		if status, _, body, err := get(ctx, url); err != nil || status != http.StatusOK {
			return e, fmt.Errorf("GET %s before its edit: status %d, %v: %.300s", url, status, err, body)
		}
		marker := fmt.Sprintf("Edited by docsbench run %d, edit %d.", run, i)
		t0 := time.Now()
		err := graphqlData(ctx, api, `mutation($s: ID!, $p: ID!, $m: String!) { updatePage(spaceId: $s, pageId: $p, input: {markdown: $m}) { id } }`,
			map[string]any{"s": s.id, "p": s.pages[k].id, "m": s.pages[k].markdown + "\n" + marker + "\n"}, &struct{}{})
		if err != nil {
			return e, fmt.Errorf("updatePage %s: %w", s.pages[k].path, err)
		}
		edited := time.Now()
		e.update = append(e.update, edited.Sub(t0))
		status, _, body, err := get(ctx, url)
		e.first = append(e.first, time.Since(edited))
		if err != nil || status != http.StatusOK {
			return e, fmt.Errorf("GET %s after its edit: status %d, %v: %.300s", url, status, err, body)
		}
		if bytes.Contains(body, []byte(marker)) {
			continue
		}
		e.stale++
		for !bytes.Contains(body, []byte(marker)) {
			if time.Since(edited) > 10*time.Second {
				return e, fmt.Errorf("GET %s: the edit made 10 s ago does not show", url)
			}
			time.Sleep(time.Millisecond)
			if status, _, body, err = get(ctx, url); err != nil || status != http.StatusOK {
				return e, fmt.Errorf("GET %s after its edit: status %d, %v", url, status, err)
			}
		}
		e.wait = max(e.wait, time.Since(edited))
	}
	return e, nil
}

// The reader cache's gauges in /metrics (the reader's cache of rendered
// pages, invalidated by PostgreSQL notifications).
const (
	cacheBytesMetric   = "docsapi_published_cache_bytes"
	cacheEntriesMetric = "docsapi_published_cache_entries"
)

// readCacheMetrics reads the reader cache's size from the server's
// /metrics: "n/a" when the gauges are not there.
func readCacheMetrics(ctx context.Context, get func(context.Context, string) (int, http.Header, []byte, error), docsURL string) string {
	status, _, body, err := get(ctx, docsURL+"/metrics")
	if err != nil || status != http.StatusOK {
		return fmt.Sprintf("n/a (/metrics: status %d, %v)", status, err)
	}
	bytesValue, okBytes := metricValue(body, cacheBytesMetric)
	entries, okEntries := metricValue(body, cacheEntriesMetric)
	if !okBytes && !okEntries {
		return "n/a"
	}
	text := func(v float64, ok bool, f func(float64) string) string {
		if !ok {
			return "n/a"
		}
		return f(v)
	}
	return text(bytesValue, okBytes, func(v float64) string { return fmt.Sprintf("%.1f MB", v/(1<<20)) }) + ", " +
		text(entries, okEntries, func(v float64) string { return fmt.Sprintf("%.0f entries", v) })
}

// metricValue is the sum of the samples of metric name in a Prometheus
// text exposition (every label set of it), and whether there was one.
func metricValue(exposition []byte, name string) (float64, bool) {
	var sum float64
	found := false
	for line := range strings.SplitSeq(string(exposition), "\n") {
		rest, ok := strings.CutPrefix(line, name)
		if !ok || rest == "" || (rest[0] != ' ' && rest[0] != '{') {
			continue // a comment, another metric, or one whose name starts with name
		}
		if rest[0] == '{' {
			end := strings.LastIndexByte(rest, '}')
			if end < 0 {
				continue
			}
			rest = rest[end+1:]
		}
		fields := strings.Fields(rest)
		if len(fields) == 0 {
			continue
		}
		v, err := strconv.ParseFloat(fields[0], 64)
		if err != nil {
			continue
		}
		sum += v
		found = true
	}
	return sum, found
}

// heapAfterGC is the Go heap in use after a collection.
func heapAfterGC() int64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}
