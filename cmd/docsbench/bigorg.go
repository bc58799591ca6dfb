package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/docsapi/docsapi/store"
	"github.com/docsapi/docsapi/store/atsize"
)

// A big organization (issue 29): is a page of a list, the site tree and a
// list's total as fast in an organization of 100,000 spaces as in one of
// 1,000? After the at-size pass, the organization of the site the bench
// seeded first (-big-org spaces in all, 100,000 by default) is filled by SQL
// with the rest of its spaces and what busy tenants hold beside them
// (store/atsize, othersPlan's proportions: change requests, comments,
// replies, searchable pages, and a member for every 20 spaces), and
// analyzed. The site seeded for the at-size pass, in an organization of its
// own 1,000 spaces, is the small one. Then, at concurrency 1, passes over
// the two organizations alternate (bigOrgRounds of each, the median of
// their p50s reported):
//   - the site tree (GraphQL), the big organization's site against the small
//     one's (the same shape);
//   - a page of 100 of the organization's spaces, REST (GET
//     /v1/orgs/{id}/spaces?limit=100, the reference's whole space) and
//     GraphQL (the fields a list shows, spacesPageQuery), page 1 and page
//     1,000 of the big one (its 99,901st to 100,000th spaces, reached by
//     the cursors of the pages before; with a smaller -big-org, its last
//     full page) against page 1 of the small one;
//   - the totalCount of the big organization's spaces (GraphQL, a page of one
//     beside it), as its admin and as a member with the read role, and the
//     same request without totalCount.
//
// Goals: every ratio at most 1.3x, and the admin's totalCount request at
// most 2 ms at p50.
const (
	bigOrgPage   = 100
	bigOrgDepth  = 1000
	bigOrgRounds = 3
)

// spacesPageQuery is the GraphQL page of an organization's spaces, the
// fields REST answers of each (rest/operations/fragments/SpaceRest.graphql
// holds them all; these are those a list shows).
const spacesPageQuery = `query($org: ID!, $after: String) { organization(id: $org) { spaces(first: 100, after: $after) {
  count next { page } items { id title emoji visibility createdAt updatedAt organization parent urls { location app } } } } }`

const totalCountQuery = `query($org: ID!) { organization(id: $org) { spaces(first: 1) { totalCount items { id } } } }`
const noTotalCountQuery = `query($org: ID!) { organization(id: $org) { spaces(first: 1) { items { id } } } }`

// bigOrgBench grows big's organization to o.bigOrg spaces and measures it
// against small's, as the bench's user (its admin) and a reader.
func bigOrgBench(ctx context.Context, o options, db *store.DB, api, reader *apiClient, readerID string, big, small *seededSite) ([]row, string, error) {
	start := time.Now()
	have := len(big.spaces)
	plan := othersPlan(o.bigOrg - have)
	plan.Organization, plan.Organizations = big.org, 0
	plan.Prefix = fmt.Sprintf("big%x-", time.Now().UnixNano()&0xffffffff)
	plan.SiteSpaces = 0 // the site stays the seeded one
	plan.Members = o.bigOrg / 20
	if err := atsize.Fill(ctx, db.Pool, plan); err != nil {
		return nil, "", fmt.Errorf("big organization: %w", err)
	}
	filled := fmt.Sprintf("the site's organization grown to %d spaces by SQL, then analyzed, in %s (%d change requests, %d comments, %d replies, %d searchable pages, %d members)",
		o.bigOrg, time.Since(start).Round(time.Millisecond), plan.ChangeRequests, plan.Comments, plan.Replies, plan.Pages, plan.Members)

	// The reader: a member of both organizations with the read role.
	role := store.RoleRead
	for _, org := range []string{big.org, small.org} {
		if err := store.AddMember(ctx, db, org, readerID, &role, time.Now()); err != nil {
			return nil, "", err
		}
	}

	// The cursors of page 1,000 of the big organization, by REST and by
	// GraphQL (the same cursors; each walk checks its own).
	depth := min(bigOrgDepth, o.bigOrg/bigOrgPage)
	restDeep, err := deepPage(ctx, depth, func(page string) (string, int, error) {
		var list struct {
			Items []json.RawMessage
			Next  *struct{ Page string }
		}
		err := api.do(ctx, http.MethodGet, spacesPagePath(big.org, bigOrgPage, page), nil, http.StatusOK, &list)
		if err != nil || list.Next == nil {
			return "", len(list.Items), err
		}
		return list.Next.Page, len(list.Items), nil
	})
	if err != nil {
		return nil, "", err
	}
	gqlDeep, err := deepPage(ctx, depth, func(page string) (string, int, error) {
		var res struct {
			Data struct {
				Organization struct {
					Spaces struct {
						Items []json.RawMessage
						Next  *struct{ Page string }
					}
				}
			}
			Errors []json.RawMessage
		}
		err := api.do(ctx, http.MethodPost, "/graphql", gqlBody(spacesPageQuery, big.org, page), http.StatusOK, &res)
		if err == nil && len(res.Errors) > 0 {
			err = fmt.Errorf("GraphQL: %s", res.Errors[0])
		}
		l := res.Data.Organization.Spaces
		if err != nil || l.Next == nil {
			return "", len(l.Items), err
		}
		return l.Next.Page, len(l.Items), nil
	})
	if err != nil {
		return nil, "", err
	}

	get := func(a *apiClient, path string) requester {
		return httpRequester(a.client, http.MethodGet, func(int) string { return a.base + path }, nil, a.token, okStatus)
	}
	post := func(a *apiClient, body []byte) requester {
		return httpRequester(a.client, http.MethodPost, func(int) string { return a.base + "/graphql" }, body, a.token, gqlOK)
	}
	tree := func(s *seededSite) requester {
		body, _ := json.Marshal(map[string]any{"query": treeQuery, "variables": map[string]string{"organizationId": s.org, "siteId": s.id}})
		return post(api, body)
	}
	raw := func(query, org, page string) []byte {
		b, _ := json.Marshal(gqlBody(query, org, page))
		return b
	}
	// Each measurement: its requester in the big organization, the one it
	// is compared with, and its goal (ratio: at most 1.3x the small one's;
	// ms: at most that p50).
	type pass struct {
		what       string
		big, small requester
		ratio      bool
		ms         float64
	}
	passes := []pass{
		{"site tree (GraphQL)", tree(big), tree(small), true, 0},
		{"GET /v1/orgs/{id}/spaces?limit=100, page 1", get(api, spacesPagePath(big.org, bigOrgPage, "")), get(api, spacesPagePath(small.org, bigOrgPage, "")), true, 0},
		{fmt.Sprintf("GET /v1/orgs/{id}/spaces?limit=100, page %d", depth), get(api, spacesPagePath(big.org, bigOrgPage, restDeep)), get(api, spacesPagePath(small.org, bigOrgPage, "")), true, 0},
		{"GraphQL spaces(first: 100), page 1", post(api, raw(spacesPageQuery, big.org, "")), post(api, raw(spacesPageQuery, small.org, "")), true, 0},
		{fmt.Sprintf("GraphQL spaces(first: 100), page %d", depth), post(api, raw(spacesPageQuery, big.org, gqlDeep)), post(api, raw(spacesPageQuery, small.org, "")), true, 0},
		{"GraphQL spaces(first: 1) { totalCount }, admin", post(api, raw(totalCountQuery, big.org, "")), post(api, raw(totalCountQuery, small.org, "")), false, 2},
		{"GraphQL spaces(first: 1) { totalCount }, a reader", post(reader, raw(totalCountQuery, big.org, "")), post(reader, raw(totalCountQuery, small.org, "")), false, 0},
		{"GraphQL spaces(first: 1) without totalCount, admin", post(api, raw(noTotalCountQuery, big.org, "")), post(api, raw(noTotalCountQuery, small.org, "")), false, 0},
	}
	p50 := func(send requester) (time.Duration, error) {
		if _, err := load(ctx, 1, o.warmup, o.warmupRequests, send); err != nil {
			return 0, err
		}
		res, err := load(ctx, 1, o.duration, 0, send)
		return res.percentile(50), err
	}
	var rows []row
	for _, p := range passes {
		var bigs, smalls []time.Duration
		for range bigOrgRounds {
			b, err := p50(p.big)
			if err != nil {
				return nil, "", fmt.Errorf("%s, %d spaces: %w", p.what, o.bigOrg, err)
			}
			s, err := p50(p.small)
			if err != nil {
				return nil, "", fmt.Errorf("%s, %d spaces: %w", p.what, len(small.spaces), err)
			}
			bigs, smalls = append(bigs, b), append(smalls, s)
		}
		b, s := median(bigs), median(smalls)
		r := ratio(ms(b), ms(s))
		target, result := "", ""
		switch {
		case p.ratio:
			target, result = "<= 1.3x", passMiss(r <= 1.3)
		case p.ms > 0:
			target, result = fmt.Sprintf("<= %g ms", p.ms), passMiss(ms(b) <= p.ms)
		}
		rows = append(rows, row{what: fmt.Sprintf("%s, p50 at c=1: %dk spaces vs %d", p.what, o.bigOrg/1000, len(small.spaces)),
			docsapi: fmtMs(b), baseline: fmtMs(s) + " (small)", ratio: fmtRatio(r), target: target, result: result})
	}
	return rows, filled, nil
}

// median of durations (the middle one; the lower middle of an even count).
func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[(len(s)-1)/2]
}

// gqlBody is a GraphQL request of query with the variables org and after.
func gqlBody(query, org, after string) map[string]any {
	vars := map[string]any{"org": org}
	if after != "" {
		vars["after"] = after
	}
	return map[string]any{"query": query, "variables": vars}
}

// deepPage walks a list by its cursors to page depth and returns its
// cursor: next reads the page after a cursor ("" the first) and returns the
// cursor of the page after it, and how many items it held.
func deepPage(ctx context.Context, depth int, next func(page string) (string, int, error)) (string, error) {
	cursor := ""
	for i := 1; i < depth; i++ {
		c, n, err := next(cursor)
		if err != nil {
			return "", err
		}
		if c == "" || n != bigOrgPage {
			return "", fmt.Errorf("page %d of the big organization: %d items, next %q", i, n, c)
		}
		cursor = c
	}
	return cursor, ctx.Err()
}
