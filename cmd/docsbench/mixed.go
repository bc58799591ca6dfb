package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/docsapi/docsapi/store"
	"github.com/docsapi/docsapi/store/atsize"
)

// The mixed scenario (-scenario mixed): is latency flat while the data
// grows? For -mixed-duration (10 minutes by default), concurrent clients do
// what front ends and integrations do, through real HTTP on loopback,
// against one organization (the measured one) on a database that also holds
// -others spaces of other organizations with their data (others.go):
//
//   - readers, at a steady -mixed-read-rate, take the read operations in
//     turn: the site tree (GraphQL), GET a space, list the organization's
//     spaces, list a busy space's change requests, list its comments (20
//     a page), a nested GraphQL query (a busy space with its first 20
//     change requests and comments) and an organization search;
//   - writers, at the steady rate that doubles the measured organization's
//     data over the run, create spaces, change requests, comments (on
//     content and on change requests) and replies, each kind as many as the
//     organization had at the start, and edit pages in change requests
//     (as many edits as change requests created; edits make revisions, not
//     items, and are not counted in the data).
//
// "The data" is the measured organization's spaces + change requests +
// comments + replies: N at the start (a site published through the API,
// then rows added by SQL as for other organizations, store/atsize, the
// change requests, comments and pages on a hundredth of the spaces, the
// busy ones), 2N when the writers kept up. Latency is reported per operation and per tenth of
// the run (p50, p99) with the ratio of the last tenth's p50 to the first's:
// the goal (issue 18) is within ±20 %. Errors are counted, not fatal: 0 is
// expected. Memory: the bench process's Go heap and RSS (server and clients
// share it) and the database's size, at the start and at the end.

// mixedWindows is how many windows the run is cut into.
const mixedWindows = 10

// mixedSite is the shape of the measured organization's site, published
// through the API: 4 groups × 5 sections × 5 site spaces.
var mixedSite = struct{ groups, sections, siteSpaces int }{4, 5, 5}

// The operations, reads then writes, in the order of the table.
const (
	opTree = iota
	opGetSpace
	opListSpaces
	opListChangeRequests
	opListComments
	opNestedSpace
	opSearch
	opCreateSpace
	opCreateChangeRequest
	opCommentContent
	opCommentChangeRequest
	opReply
	opEdit
	opCount
)

var opNames = [opCount]string{
	"read: site tree (GraphQL)", "read: GET space", "read: list spaces", "read: list change requests",
	"read: list comments", "read: space, its change requests and comments (GraphQL)", "read: organization search",
	"write: create space", "write: create change request", "write: comment on content",
	"write: comment on change request", "write: reply to comment", "write: edit page in change request (GraphQL)",
}

const readOps = opCreateSpace // ops below are reads

// nestedSpaceQuery is what a front end's space view asks for.
const nestedSpaceQuery = `query Space($id: ID!) {
  space(id: $id) {
    id title changeRequestsOpen comments
    changeRequestList(first: 20) { items { id number subject status comments createdBy { id } } }
    commentList(first: 20) { items { id status replies postedBy { id } body { markdown } } }
  }
}`

const editPageMutation = `mutation Edit($s: ID!, $c: ID!, $p: ID!, $m: String!) {
  updatePage(spaceId: $s, changeRequestId: $c, pageId: $p, input: {markdown: $m}) { id }
}`

// mixedState is what the clients know of the measured organization: the
// ids they read and write, growing as the writers create.
type mixedState struct {
	mu        sync.Mutex
	org, site string
	spaces    []string // every space
	busy      []string // the spaces with change requests, comments and pages
	pages     map[string][]string
	crs       []mixedCR // open and draft change requests
	comments  []mixedComment
	editing   map[string]bool // change requests with an edit in flight
}

type mixedCR struct{ space, id string }

// mixedComment is a comment; cr is "" for a comment on content.
type mixedComment struct{ space, cr, id string }

// mixedClient is one client goroutine's view: its generator and body
// buffer.
type mixedClient struct {
	m   *mixedRun
	rng *rand.Rand
	buf bytes.Buffer
}

// mixedRun is a run in progress.
type mixedRun struct {
	api     *apiClient
	state   *mixedState
	words   []string
	start   time.Time
	window  time.Duration
	mu      sync.Mutex
	lat     [opCount][mixedWindows][]time.Duration
	errs    [opCount]atomic.Int64
	errMu   sync.Mutex
	firstEr []string
}

// record keeps the latency of an operation begun at t0 in its window.
func (m *mixedRun) record(op int, t0 time.Time, err error) {
	d := time.Since(t0)
	if err != nil {
		m.errs[op].Add(1)
		m.errMu.Lock()
		if len(m.firstEr) < 5 {
			m.firstEr = append(m.firstEr, opNames[op]+": "+err.Error())
		}
		m.errMu.Unlock()
		return
	}
	w := int(t0.Sub(m.start) / m.window)
	if w < 0 || w >= mixedWindows {
		return // the warm-up, or a write scheduled in the run that began after it
	}
	m.mu.Lock()
	m.lat[op][w] = append(m.lat[op][w], d)
	m.mu.Unlock()
}

// send sends one request and checks its status (and, for GraphQL, that the
// answer holds no error); out, when not nil, receives the JSON body.
func (c *mixedClient) send(ctx context.Context, method, path string, body any, want int, out any) error {
	if err := c.m.api.send(ctx, &c.buf, method, path, body, want, out); err != nil {
		return err
	}
	if path == "/graphql" && !bytes.HasPrefix(c.buf.Bytes(), []byte(`{"data":`)) {
		return fmt.Errorf("GraphQL: %.300s", c.buf.Bytes())
	}
	return nil
}

func (c *mixedClient) graphql(ctx context.Context, query string, vars map[string]any) error {
	return c.send(ctx, "POST", "/graphql", map[string]any{"query": query, "variables": vars}, http.StatusOK, nil)
}

// words is a query or a text of n words of the content's vocabulary,
// skewed towards its common words as the generated pages are.
func (c *mixedClient) words(n int) string {
	w := make([]string, n)
	for i := range w {
		f := c.rng.Float64()
		w[i] = c.m.words[int(float64(len(c.m.words))*f*f*f)]
	}
	return strings.Join(w, " ")
}

// do runs operation op once.
func (c *mixedClient) do(ctx context.Context, op int) error {
	s := c.m.state
	s.mu.Lock()
	org, site := s.org, s.site
	space := s.spaces[c.rng.IntN(len(s.spaces))]
	busy := s.busy[c.rng.IntN(len(s.busy))]
	s.mu.Unlock()
	var id struct {
		ID string `json:"id"`
	}
	switch op {
	case opTree:
		return c.graphql(ctx, treeQuery, map[string]any{"organizationId": org, "siteId": site})
	case opGetSpace:
		return c.send(ctx, "GET", "/v1/spaces/"+space, nil, http.StatusOK, nil)
	case opListSpaces:
		return c.send(ctx, "GET", "/v1/orgs/"+org+"/spaces?limit=20", nil, http.StatusOK, nil)
	case opListChangeRequests:
		return c.send(ctx, "GET", "/v1/spaces/"+busy+"/change-requests?limit=20", nil, http.StatusOK, nil)
	case opListComments:
		return c.send(ctx, "GET", "/v1/spaces/"+busy+"/comments?limit=20", nil, http.StatusOK, nil)
	case opNestedSpace:
		return c.graphql(ctx, nestedSpaceQuery, map[string]any{"id": busy})
	case opSearch:
		return c.send(ctx, "GET", "/v1/orgs/"+org+"/search?query="+url.QueryEscape(c.words(1+c.rng.IntN(2))), nil, http.StatusOK, nil)
	case opCreateSpace:
		if err := c.send(ctx, "POST", "/v1/orgs/"+org+"/spaces", map[string]any{"title": "Mixed " + c.words(2)}, http.StatusCreated, &id); err != nil {
			return err
		}
		s.mu.Lock()
		s.spaces = append(s.spaces, id.ID)
		s.mu.Unlock()
	case opCreateChangeRequest:
		if err := c.send(ctx, "POST", "/v1/spaces/"+busy+"/change-requests", map[string]any{"subject": "Mixed " + c.words(3)}, http.StatusCreated, &id); err != nil {
			return err
		}
		s.mu.Lock()
		s.crs = append(s.crs, mixedCR{busy, id.ID})
		s.mu.Unlock()
	case opCommentContent:
		body := map[string]any{"body": map[string]any{"markdown": c.words(12)}}
		if err := c.send(ctx, "POST", "/v1/spaces/"+busy+"/comments", body, http.StatusOK, &id); err != nil {
			return err
		}
		s.mu.Lock()
		s.comments = append(s.comments, mixedComment{busy, "", id.ID})
		s.mu.Unlock()
	case opCommentChangeRequest:
		s.mu.Lock()
		cr := s.crs[c.rng.IntN(len(s.crs))]
		s.mu.Unlock()
		body := map[string]any{"body": map[string]any{"markdown": c.words(12)}}
		if err := c.send(ctx, "POST", "/v1/spaces/"+cr.space+"/change-requests/"+cr.id+"/comments", body, http.StatusOK, &id); err != nil {
			return err
		}
		s.mu.Lock()
		s.comments = append(s.comments, mixedComment{cr.space, cr.id, id.ID})
		s.mu.Unlock()
	case opReply:
		s.mu.Lock()
		cm := s.comments[c.rng.IntN(len(s.comments))]
		s.mu.Unlock()
		path := "/v1/spaces/" + cm.space + "/comments/" + cm.id + "/replies"
		if cm.cr != "" {
			path = "/v1/spaces/" + cm.space + "/change-requests/" + cm.cr + "/comments/" + cm.id + "/replies"
		}
		return c.send(ctx, "POST", path, map[string]any{"body": map[string]any{"markdown": c.words(8)}}, http.StatusOK, nil)
	case opEdit:
		// One edit at a time per change request, as one author types:
		// two edits of the same page at once are a conflict by design.
		s.mu.Lock()
		var cr mixedCR
		for range 20 {
			cr = s.crs[c.rng.IntN(len(s.crs))]
			if !s.editing[cr.id] {
				break
			}
		}
		s.editing[cr.id] = true
		pages := s.pages[cr.space]
		s.mu.Unlock()
		defer func() {
			s.mu.Lock()
			delete(s.editing, cr.id)
			s.mu.Unlock()
		}()
		page := pages[c.rng.IntN(len(pages))]
		markdown := "# " + c.words(3) + "\n\n" + c.words(60) + "\n"
		return c.graphql(ctx, editPageMutation, map[string]any{"s": cr.space, "c": cr.id, "p": page, "m": markdown})
	}
	return nil
}

// mixedCounts are the measured organization's items, and its revisions
// and their pages (not items: each edit makes a revision that holds a copy
// of every page of its space).
type mixedCounts struct{ spaces, crs, comments, replies, revisions, revisionPages int }

func (c mixedCounts) total() int { return c.spaces + c.crs + c.comments + c.replies }

func countMixed(ctx context.Context, db *store.DB, org string) (mixedCounts, error) {
	var c mixedCounts
	err := db.Pool.QueryRow(ctx, `SELECT
		(SELECT count(*) FROM spaces WHERE organization_id = $1 AND deleted_at IS NULL),
		(SELECT count(*) FROM change_requests WHERE organization_id = $1),
		(SELECT count(*) FROM comments WHERE organization_id = $1),
		(SELECT count(*) FROM comment_replies WHERE organization_id = $1),
		(SELECT count(*) FROM revisions WHERE organization_id = $1),
		(SELECT count(*) FROM revision_pages WHERE organization_id = $1)`, org).
		Scan(&c.spaces, &c.crs, &c.comments, &c.replies, &c.revisions, &c.revisionPages)
	return c, err
}

// memory is the process's Go heap and RSS, and the database's size.
func memory(ctx context.Context, db *store.DB) string {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	rss := "?"
	if raw, err := os.ReadFile("/proc/self/status"); err == nil {
		for line := range strings.SplitSeq(string(raw), "\n") {
			if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
				rss = strings.TrimSpace(v)
			}
		}
	}
	var dbSize string
	if err := db.Pool.QueryRow(ctx, "SELECT pg_size_pretty(pg_database_size(current_database()))").Scan(&dbSize); err != nil {
		dbSize = "?"
	}
	return fmt.Sprintf("Go heap %d MB (after GC), process RSS %s, database %s", ms.HeapAlloc>>20, rss, dbSize)
}

// mixedBench runs the mixed scenario and prints its tables.
func mixedBench(ctx context.Context, o options, db *store.DB, api *apiClient, userID string, out io.Writer) error {
	if o.others > 0 {
		added, err := seedOthers(ctx, db, o.others)
		if err != nil {
			return err
		}
		fmt.Fprintln(out, added)
	}

	// The measured organization: a site through the API, then its data at
	// size by SQL, in the proportions of other organizations' busy spaces.
	t0 := time.Now()
	so := o
	so.groups, so.sections, so.siteSpaces, so.outside = mixedSite.groups, mixedSite.sections, mixedSite.siteSpaces, 0
	site, err := seed(ctx, api, so)
	if err != nil {
		return fmt.Errorf("seed: %w", err)
	}
	n := o.mixedSpaces
	if n == 0 {
		n = max(100, o.others/100)
	}
	// A hundredth of the spaces are busy, each with some hundred change
	// requests (25 open), a hundred comments on its content and a hundred
	// pages: the lists read (20 items a page, as a front end shows them)
	// are full from the start, so what changes over the run is the size of
	// the tables, not the length of the answers.
	plan := atsize.Plan{Prefix: fmt.Sprintf("m%x-", time.Now().UnixNano()&0xffffffff), Organization: site.org, Author: userID,
		Spaces: n, Busy: max(1, n/100), ChangeRequests: n, Comments: 2 * n, Replies: n, Pages: n, Words: contentWords()}
	if err := atsize.Fill(ctx, db.Pool, plan); err != nil {
		return err
	}
	st := &mixedState{org: site.org, site: site.id, spaces: slices.Clone(site.spaces),
		pages: map[string][]string{}, editing: map[string]bool{}}
	for g := 1; g <= plan.Spaces; g++ {
		st.spaces = append(st.spaces, plan.SpaceID(g))
	}
	for k := 1; k <= plan.Pages; k++ {
		sp := plan.SpaceID(plan.PageSpace(k))
		if st.pages[sp] == nil {
			st.busy = append(st.busy, sp)
		}
		st.pages[sp] = append(st.pages[sp], plan.PageID(k))
	}
	for i := 1; i <= plan.ChangeRequests; i++ {
		if s := plan.ChangeRequestStatus(i); s == "open" || s == "draft" {
			st.crs = append(st.crs, mixedCR{plan.SpaceID(plan.ChangeRequestSpace(i)), plan.ChangeRequestID(i)})
		}
	}
	for i := 1; i <= plan.ContentComments(); i++ {
		st.comments = append(st.comments, mixedComment{plan.SpaceID(plan.ContentCommentSpace(i)), "", plan.ContentCommentID(i)})
	}
	for j := 1; j <= plan.ChangeRequestComments(); j++ {
		i := plan.ChangeRequestCommentTarget(j)
		st.comments = append(st.comments, mixedComment{plan.SpaceID(plan.ChangeRequestSpace(i)), plan.ChangeRequestID(i), plan.ChangeRequestCommentID(j)})
	}
	before, err := countMixed(ctx, db, site.org)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "mixed: the measured organization, in %s: a site of %d spaces through the API, then by SQL %d spaces (%d busy), "+
		"%d change requests, %d comments, %d replies, %d searchable pages\n",
		time.Since(t0).Round(time.Millisecond), len(site.spaces), plan.Spaces, len(st.busy), plan.ChangeRequests, plan.Comments, plan.Replies, plan.Pages)

	// The writes: as many of each kind as the organization holds, plus an
	// edit per change request created, in a shuffled (seeded) order, sent
	// at a steady pace.
	var schedule []int
	add := func(op, k int) {
		for range k {
			schedule = append(schedule, op)
		}
	}
	add(opCreateSpace, before.spaces)
	add(opCreateChangeRequest, before.crs)
	add(opCommentContent, before.comments-plan.ChangeRequestComments())
	add(opCommentChangeRequest, plan.ChangeRequestComments())
	add(opReply, before.replies)
	add(opEdit, before.crs)
	rand.New(rand.NewPCG(7, 8)).Shuffle(len(schedule), func(i, j int) { schedule[i], schedule[j] = schedule[j], schedule[i] })
	writeEvery := o.mixedDuration / time.Duration(len(schedule))

	m := &mixedRun{api: api, state: st, words: contentWords(), window: o.mixedDuration / mixedWindows}
	newClient := func(seed uint64) *mixedClient {
		return &mixedClient{m: m, rng: rand.New(rand.NewPCG(seed, 99))}
	}
	// Warm-up: every read a few times (caches, prepared statements,
	// connections), recorded nowhere.
	warm := newClient(1)
	for range 10 {
		for op := range readOps {
			if err := warm.do(ctx, op); err != nil {
				return fmt.Errorf("warm-up: %s: %w", opNames[op], err)
			}
		}
	}
	startMem := memory(ctx, db)
	fmt.Fprintf(out, "mixed: %s; %d readers at %d reads/s in all, the read operations in turn; %d writes (one every %s) by %d writers; starting at %s, load average %s\n",
		o.mixedDuration, o.mixedReaders, o.mixedReadRate, len(schedule), writeEvery.Round(time.Microsecond), o.mixedWriters,
		time.Now().Format(time.TimeOnly), loadAverage())

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	m.start = time.Now()
	end := m.start.Add(o.mixedDuration)
	var wg sync.WaitGroup
	// Readers: each paces itself at its share of the read rate; a reader
	// late for its slot (the server slow) sends at once rather than
	// making up the missed ones.
	every := time.Duration(float64(time.Second) * float64(o.mixedReaders) / float64(o.mixedReadRate))
	var reads atomic.Int64
	for r := range o.mixedReaders {
		wg.Go(func() {
			c := newClient(uint64(100 + r))
			next := m.start.Add(every * time.Duration(r) / time.Duration(o.mixedReaders))
			for {
				if d := time.Until(next); d > 0 {
					select {
					case <-time.After(d):
					case <-runCtx.Done():
						return
					}
				}
				t0 := time.Now()
				if !t0.Before(end) {
					return
				}
				op := int(reads.Add(1)-1) % readOps
				m.record(op, t0, c.do(runCtx, op))
				if next = next.Add(every); next.Before(time.Now().Add(-every)) {
					next = time.Now()
				}
			}
		})
	}
	// Writers: the dispatcher hands out the schedule at its pace; a write
	// waits for a free writer when all are busy (the lag is reported).
	jobs := make(chan int)
	var lateWrites atomic.Int64
	for w := range o.mixedWriters {
		wg.Go(func() {
			c := newClient(uint64(200 + w))
			for op := range jobs {
				t0 := time.Now()
				m.record(op, t0, c.do(runCtx, op))
			}
		})
	}
	written := 0
	for i, op := range schedule {
		due := m.start.Add(writeEvery * time.Duration(i))
		if d := time.Until(due); d > 0 {
			select {
			case <-time.After(d):
			case <-ctx.Done():
			}
		}
		if ctx.Err() != nil || !time.Now().Before(end) {
			break
		}
		if time.Since(due) > time.Second {
			lateWrites.Add(1)
		}
		jobs <- op
		written++
	}
	close(jobs)
	wg.Wait()
	elapsed := time.Since(m.start)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	after, err := countMixed(ctx, db, site.org)
	if err != nil {
		return err
	}
	endMem := memory(ctx, db)

	// The tables.
	fmt.Fprintf(out, "\nmixed: %s on 127.0.0.1 (clients, server and PostgreSQL share the CPUs; load average %s at the end)\n", elapsed.Round(time.Second), loadAverage())
	fmt.Fprintf(out, "the data: the measured organization's spaces + change requests + comments + replies: %d + %d + %d + %d = %d at the start, "+
		"%d + %d + %d + %d = %d at the end (×%.2f); %d of %d writes sent (%d more than 1 s late)\n",
		before.spaces, before.crs, before.comments, before.replies, before.total(),
		after.spaces, after.crs, after.comments, after.replies, after.total(), float64(after.total())/float64(before.total()),
		written, len(schedule), lateWrites.Load())
	fmt.Fprintf(out, "also grown (not items): revisions %d → %d, revision pages %d → %d\n",
		before.revisions, after.revisions, before.revisionPages, after.revisionPages)
	fmt.Fprintf(out, "memory at the start: %s\nmemory at the end:   %s\n", startMem, endMem)
	totalErrs := int64(0)
	for op := range opCount {
		totalErrs += m.errs[op].Load()
	}
	fmt.Fprintf(out, "errors: %d (0 expected)\n", totalErrs)
	for _, e := range m.firstEr {
		fmt.Fprintln(out, "  ", e)
	}
	fmt.Fprintln(out)
	printMixedTable(out, m, 50)
	fmt.Fprintln(out)
	printMixedTable(out, m, 99)
	fmt.Fprintf(out, "\nwindows: tenths of the run (%s each); last/first: p50 of the last tenth over the first's; target within ±20%% (issue 18)\n", m.window.Round(time.Second))
	return nil
}

// printMixedTable prints percentile p of every operation per window; for
// p50, the ratio of the last window to the first and PASS/MISS.
func printMixedTable(w io.Writer, m *mixedRun, p float64) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := fmt.Sprintf("p%.0f (ms)\tn\t", p)
	for i := range mixedWindows {
		head += fmt.Sprintf("%d\t", i+1)
	}
	if p == 50 {
		head += "last/first\tresult\terrors\t"
	}
	fmt.Fprintln(tw, head)
	for op := range opCount {
		line := opNames[op] + "\t"
		n := 0
		var vals [mixedWindows]time.Duration
		for i := range mixedWindows {
			lat := slices.Clone(m.lat[op][i])
			n += len(lat)
			slices.Sort(lat)
			vals[i] = loadResult{lat: lat}.percentile(p)
		}
		line += strconv.Itoa(n) + "\t"
		for _, v := range vals {
			if v == 0 {
				line += "-\t"
			} else {
				line += fmt.Sprintf("%.1f\t", ms(v))
			}
		}
		if p == 50 {
			first, last := vals[0], vals[mixedWindows-1]
			if first > 0 && last > 0 {
				r := float64(last) / float64(first)
				line += fmt.Sprintf("%.2f\t%s\t", r, passMiss(r >= 0.8 && r <= 1.2))
			} else {
				line += "-\t-\t"
			}
			line += strconv.FormatInt(m.errs[op].Load(), 10) + "\t"
		}
		fmt.Fprintln(tw, line)
	}
	tw.Flush()
}

// loadAverage is the first field of /proc/loadavg (other jobs share the
// CPUs).
func loadAverage() string {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Join(strings.Fields(string(raw))[:3], " ")
}
