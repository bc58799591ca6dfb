package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// treeQuery reads a site's whole structure: the groups with their child
// sections, the sections outside groups (and, for a site without sections,
// the site spaces at its root), each section's site spaces and their spaces.
const treeQuery = `query SiteTree($organizationId: ID!, $siteId: ID!) {
  site(organizationId: $organizationId, id: $siteId) {
    id
    title
    structure {
      type
      structure {
        __typename
        ... on SiteSectionGroup { id title children { __typename ... on SiteSection { id title siteSpaces { id path space { id title } } } } }
        ... on SiteSection { id title siteSpaces { id path space { id title } } }
        ... on SiteSpace { id path space { id title } }
      }
    }
  }
}`

// bench holds what the measurements share.
type bench struct {
	o                            options
	client                       *http.Client
	site                         *seededSite
	token                        string
	plainURL, debugURL, baseURL  string
	treeBody                     []byte // the GraphQL request
	treeBaseBody                 []byte // the baseline's answer
	treeMatch                    string
	treeGraphQLBytes             int
	spaceBytes, spaceBaseBytes   int
	treeQueries, treeBaseQueries string
	spaceQueries, spaceBaseQs    string
}

// graphQLResponse is the envelope of a GraphQL answer.
type graphQLResponse struct {
	Data       json.RawMessage `json:"data"`
	Errors     []any           `json:"errors"`
	Extensions struct {
		Stats *struct {
			SQLQueries int `json:"sqlQueries"`
		} `json:"stats"`
	} `json:"extensions"`
}

// send sends one request and returns the status, headers and body.
func (b *bench) send(ctx context.Context, method, url string, body []byte, token string) (int, http.Header, []byte, error) {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, r)
	if err != nil {
		return 0, nil, nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := b.client.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, raw, err
}

// prepare checks that docsapi and the baselines answer the same thing, and
// counts the SQL queries of each read.
func (b *bench) prepare(ctx context.Context) error {
	var err error
	b.treeBody, err = json.Marshal(map[string]any{
		"query":     treeQuery,
		"variables": map[string]string{"organizationId": b.site.org, "siteId": b.site.id},
	})
	if err != nil {
		return err
	}

	// The tree, from docsapi (without Debug) and from the baseline.
	status, _, raw, err := b.send(ctx, "POST", b.plainURL+"/graphql", b.treeBody, b.token)
	if err != nil {
		return err
	}
	var gql graphQLResponse
	if err := json.Unmarshal(raw, &gql); err != nil || status != http.StatusOK || len(gql.Errors) > 0 {
		return fmt.Errorf("site tree over GraphQL: status %d, %v: %.500s", status, err, raw)
	}
	b.treeGraphQLBytes = len(raw)
	status, _, b.treeBaseBody, err = b.send(ctx, "GET", b.baseURL+"/tree/"+b.site.org+"/"+b.site.id, nil, "")
	if err != nil {
		return err
	}
	if status != http.StatusOK {
		return fmt.Errorf("baseline site tree: status %d: %.500s", status, b.treeBaseBody)
	}
	switch {
	case bytes.Equal(gql.Data, b.treeBaseBody):
		b.treeMatch = "byte-identical"
	case jsonEqual(gql.Data, b.treeBaseBody):
		b.treeMatch = "JSON-equal (after normalising key order)"
	default:
		i := firstDifference(gql.Data, b.treeBaseBody)
		return fmt.Errorf("the baseline's site tree differs from the GraphQL data at byte %d:\n  graphql:  %s\n  baseline: %s",
			i, excerpt(gql.Data, i), excerpt(b.treeBaseBody, i))
	}
	if n, want := countSiteSpaces(gql.Data), len(b.site.spaces); n != want {
		return fmt.Errorf("the site tree holds %d site spaces, want %d", n, want)
	}

	// Query counts: docsapi with Debug, the baselines' own count.
	const samples = 20
	counts := map[int]int{}
	for range samples {
		status, _, raw, err := b.send(ctx, "POST", b.debugURL+"/graphql", b.treeBody, b.token)
		if err != nil {
			return err
		}
		var res graphQLResponse
		if err := json.Unmarshal(raw, &res); err != nil || status != http.StatusOK || len(res.Errors) > 0 || res.Extensions.Stats == nil {
			return fmt.Errorf("site tree with Debug: status %d, %v: %.500s", status, err, raw)
		}
		counts[res.Extensions.Stats.SQLQueries]++
	}
	b.treeQueries = describeCounts(counts)
	_, h, _, err := b.send(ctx, "GET", b.baseURL+"/tree/"+b.site.org+"/"+b.site.id, nil, "")
	if err != nil {
		return err
	}
	b.treeBaseQueries = h.Get("X-SQL-Queries")

	// GET /v1/spaces/{id}.
	counts = map[int]int{}
	for i := range samples {
		id := b.site.spaces[i%len(b.site.spaces)]
		status, h, raw, err := b.send(ctx, "GET", b.debugURL+"/v1/spaces/"+id, nil, b.token)
		if err != nil {
			return err
		}
		n, err := strconv.Atoi(h.Get("X-SQL-Queries"))
		if status != http.StatusOK || err != nil {
			return fmt.Errorf("GET /v1/spaces/%s with Debug: status %d, X-SQL-Queries %q: %.500s", id, status, h.Get("X-SQL-Queries"), raw)
		}
		counts[n]++
	}
	b.spaceQueries = describeCounts(counts)
	id := b.site.spaces[0]
	status, _, raw, err = b.send(ctx, "GET", b.plainURL+"/v1/spaces/"+id, nil, b.token)
	if err != nil {
		return err
	}
	if status != http.StatusOK {
		return fmt.Errorf("GET /v1/spaces/%s: status %d: %.500s", id, status, raw)
	}
	b.spaceBytes = len(raw)
	status, h, raw, err = b.send(ctx, "GET", b.baseURL+"/v1/spaces/"+id, nil, "")
	if err != nil {
		return err
	}
	if status != http.StatusOK {
		return fmt.Errorf("bare GET /v1/spaces/%s: status %d: %.500s", id, status, raw)
	}
	b.spaceBaseBytes = len(raw)
	b.spaceBaseQs = h.Get("X-SQL-Queries")
	return nil
}

// row is a line of the result table.
type row struct {
	what, docsapi, baseline, ratio, target, result string
}

// measure runs every timed pass: for each, the baseline, then docsapi, each
// after its warm-up.
func (b *bench) measure(ctx context.Context) ([]row, error) {
	o := b.o
	treeGQL := httpRequester(b.client, "POST", func(int) string { return b.plainURL + "/graphql" }, b.treeBody, b.token, gqlOK)
	treeBase := httpRequester(b.client, "GET", func(int) string { return b.baseURL + "/tree/" + b.site.org + "/" + b.site.id }, nil, "", okStatus)
	spaceURL := func(base string) func(i int) string {
		return func(i int) string { return base + "/v1/spaces/" + b.site.spaces[i%len(b.site.spaces)] }
	}
	spaceREST := httpRequester(b.client, "GET", spaceURL(b.plainURL), nil, b.token, okStatus)
	spaceBase := httpRequester(b.client, "GET", spaceURL(b.baseURL), nil, "", okStatus)

	pair := func(name string, concurrency int, docsapi, baseline requester) (d, base loadResult, err error) {
		if base, err = timedPass(ctx, o, name+" (baseline)", concurrency, baseline, nil); err != nil {
			return
		}
		d, err = timedPass(ctx, o, name+" (docsapi)", concurrency, docsapi, nil)
		return
	}

	c := o.concurrency
	tree1, tree1Base, err := pair("site tree, concurrency 1", 1, treeGQL, treeBase)
	if err != nil {
		return nil, err
	}
	treeC, treeCBase, err := pair(fmt.Sprintf("site tree, concurrency %d", c), c, treeGQL, treeBase)
	if err != nil {
		return nil, err
	}
	spaceC, spaceCBase, err := pair(fmt.Sprintf("GET /v1/spaces/{id}, concurrency %d", c), c, spaceREST, spaceBase)
	if err != nil {
		return nil, err
	}

	p50 := ratio(ms(tree1.percentile(50)), ms(tree1Base.percentile(50)))
	rps := ratio(spaceC.rps(), spaceCBase.rps())
	treeRPS := ratio(treeC.rps(), treeCBase.rps())
	rows := []row{
		{"site tree (GraphQL)  p50 latency, concurrency 1", fmtMs(tree1.percentile(50)), fmtMs(tree1Base.percentile(50)),
			fmtRatio(p50), "<= 1.2x", passMiss(p50 <= 1.2)},
		{"site tree (GraphQL)  p99 latency, concurrency 1", fmtMs(tree1.percentile(99)), fmtMs(tree1Base.percentile(99)),
			fmtRatio(ratio(ms(tree1.percentile(99)), ms(tree1Base.percentile(99)))), "", ""},
		{fmt.Sprintf("site tree (GraphQL)  throughput, concurrency %d", c), fmtRPS(treeC.rps()), fmtRPS(treeCBase.rps()),
			fmtRatio(treeRPS), ">= 0.9x", passMiss(treeRPS >= 0.9)},
		{fmt.Sprintf("site tree (GraphQL)  p99 latency, concurrency %d", c), fmtMs(treeC.percentile(99)), fmtMs(treeCBase.percentile(99)),
			fmtRatio(ratio(ms(treeC.percentile(99)), ms(treeCBase.percentile(99)))), "", ""},
		{fmt.Sprintf("site tree (GraphQL)  CPU per request, concurrency %d: process + PostgreSQL", c), fmtCPU(treeC), fmtCPU(treeCBase),
			fmtRatio(ratio(float64(treeC.cpu()), float64(treeCBase.cpu()))), "", ""},
		{"site tree (GraphQL)  SQL queries per request", b.treeQueries, b.treeBaseQueries, "", "", ""},
		{fmt.Sprintf("GET /v1/spaces/{id}  throughput, concurrency %d", c), fmtRPS(spaceC.rps()), fmtRPS(spaceCBase.rps()),
			fmtRatio(rps), ">= 0.8x", passMiss(rps >= 0.8)},
		{fmt.Sprintf("GET /v1/spaces/{id}  p99 latency, concurrency %d", c), fmtMs(spaceC.percentile(99)), fmtMs(spaceCBase.percentile(99)),
			fmtRatio(ratio(ms(spaceC.percentile(99)), ms(spaceCBase.percentile(99)))), "", ""},
		{fmt.Sprintf("GET /v1/spaces/{id}  CPU per request, concurrency %d: process + PostgreSQL", c), fmtCPU(spaceC), fmtCPU(spaceCBase),
			fmtRatio(ratio(float64(spaceC.cpu()), float64(spaceCBase.cpu()))), "", ""},
		{"GET /v1/spaces/{id}  SQL queries per request", b.spaceQueries, b.spaceBaseQs, "", "", ""},
		{"requests measured (tree c=1 / tree c=" + strconv.Itoa(c) + " / spaces c=" + strconv.Itoa(c) + ")",
			fmt.Sprintf("%d / %d / %d", tree1.n, treeC.n, spaceC.n),
			fmt.Sprintf("%d / %d / %d", tree1Base.n, treeCBase.n, spaceCBase.n), "", "", ""},
	}
	return rows, nil
}

// timedPass is one measurement: send from concurrency clients for
// o.duration, after a warm-up (o.warmup or o.warmupRequests, whichever
// comes first), with the CPU each request cost this process and
// PostgreSQL (cpu.go: the servers of postmasters, or every postgres
// process when it is nil). The tree scenario's and the reader's
// (reader.go).
func timedPass(ctx context.Context, o options, name string, concurrency int, send requester, postmasters []int) (loadResult, error) {
	if _, err := load(ctx, concurrency, o.warmup, o.warmupRequests, send); err != nil {
		return loadResult{}, fmt.Errorf("%s (warm-up): %w", name, err)
	}
	before := readCPUOf(postmasters)
	res, err := load(ctx, concurrency, o.duration, 0, send)
	if err != nil {
		return loadResult{}, fmt.Errorf("%s: %w", name, err)
	}
	res.cpuSelf, res.cpuPostgres, res.cpuOK = cpuPerRequest(before, readCPUOf(postmasters), res.n)
	return res, nil
}

func printTable(w io.Writer, rows []row) {
	writeRows(w, "docsapi", "baseline", rows)
	fmt.Fprintln(w)
	fmt.Fprintln(w, "ratio = docsapi / baseline; baselines authenticate nothing (docsapi checks the bearer token on every request, from its caller cache).")
}

// writeRows writes rows as a table whose two measured columns are named a
// and b (docsapi and its baseline, one PostgreSQL and a cluster...).
func writeRows(w io.Writer, a, b string, rows []row) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "measurement\t%s\t%s\tratio\ttarget\tresult\n", a, b)
	fmt.Fprintf(tw, "-----------\t%s\t%s\t-----\t------\t------\n", strings.Repeat("-", len(a)), strings.Repeat("-", len(b)))
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.what, r.docsapi, r.baseline, r.ratio, r.target, r.result)
	}
	tw.Flush()
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

func fmtMs(d time.Duration) string { return fmt.Sprintf("%.2f ms", ms(d)) }
func fmtRPS(r float64) string      { return fmt.Sprintf("%.0f req/s", r) }
func fmtRatio(r float64) string    { return fmt.Sprintf("%.2fx", r) }

// fmtCPU is a pass's CPU per request, this process's + PostgreSQL's, in
// microseconds; "n/a" where it could not be read.
func fmtCPU(r loadResult) string {
	if !r.cpuOK {
		return "n/a"
	}
	return fmt.Sprintf("%d + %d µs", r.cpuSelf.Microseconds(), r.cpuPostgres.Microseconds())
}

func passMiss(ok bool) string {
	if ok {
		return "PASS"
	}
	return "MISS"
}

// describeCounts renders the query counts seen: "6", or "6-7" when they varied.
func describeCounts(counts map[int]int) string {
	lo, hi := -1, -1
	for n := range counts {
		if lo < 0 || n < lo {
			lo = n
		}
		hi = max(hi, n)
	}
	if lo == hi {
		return strconv.Itoa(lo)
	}
	return fmt.Sprintf("%d-%d", lo, hi)
}

func jsonEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

func firstDifference(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

func excerpt(b []byte, i int) string {
	from, to := max(0, i-80), min(len(b), i+80)
	return string(b[from:to])
}

// countSiteSpaces counts the site spaces in the tree's data.
func countSiteSpaces(data []byte) int {
	var d struct {
		Site struct {
			Structure struct {
				Structure []struct {
					Typename   string            `json:"__typename"`
					SiteSpaces []json.RawMessage `json:"siteSpaces"`
					Children   []struct {
						SiteSpaces []json.RawMessage `json:"siteSpaces"`
					} `json:"children"`
				} `json:"structure"`
			} `json:"structure"`
		} `json:"site"`
	}
	if json.Unmarshal(data, &d) != nil {
		return -1
	}
	n := 0
	for _, item := range d.Site.Structure.Structure {
		if item.Typename == "SiteSpace" {
			n++
		}
		n += len(item.SiteSpaces)
		for _, c := range item.Children {
			n += len(c.SiteSpaces)
		}
	}
	return n
}

// okStatus accepts an answer of 200.
func okStatus(status int, body []byte) error {
	if status != http.StatusOK {
		return fmt.Errorf("status %d: %.300s", status, body)
	}
	return nil
}

// gqlOK accepts a GraphQL answer of 200 without errors: one with errors
// starts with them, a clean one with data.
func gqlOK(status int, body []byte) error {
	if status != http.StatusOK || !bytes.HasPrefix(body, []byte(`{"data":`)) {
		return fmt.Errorf("status %d: %.300s", status, body)
	}
	return nil
}
