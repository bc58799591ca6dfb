package main

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/docsapi/docsapi/store"
	"github.com/docsapi/docsapi/store/atsize"
)

// Deep pages (issue 18: page 1,000 of a list at most 1.2× its page 1). An
// organization of pagingSpaces spaces, inserted by SQL; its space list
// (GET /v1/orgs/{id}/spaces, 20 a page) is walked by its next.page cursors
// to page 1,000, then page 1 and page 1,000 are requested in turn,
// pagingRequests times each, one at a time. Lists are paged by keyset
// cursors, so a deep page should cost what the first does.
const (
	pagingSize     = 20
	pagingDepth    = 1000
	pagingSpaces   = pagingSize*pagingDepth + pagingSize
	pagingRequests = 300
)

func pagingBench(ctx context.Context, db *store.DB, api *apiClient) ([]row, error) {
	org, err := api.create(ctx, "/v1/orgs", map[string]any{"title": "Paging"})
	if err != nil {
		return nil, err
	}
	plan := atsize.Plan{Prefix: fmt.Sprintf("pg%x-", time.Now().UnixNano()&0xffffffff), Organization: org, Spaces: pagingSpaces}
	if err := atsize.Fill(ctx, db.Pool, plan); err != nil {
		return nil, fmt.Errorf("paging: %w", err)
	}
	if _, err := db.Pool.Exec(ctx, "ANALYZE spaces"); err != nil {
		return nil, err
	}
	var list struct {
		Items []struct{ ID string }
		Next  *struct{ Page string }
	}
	get := func(page string) (time.Duration, error) {
		t0 := time.Now()
		list.Items, list.Next = nil, nil
		err := api.do(ctx, http.MethodGet, spacesPagePath(org, pagingSize, page), nil, http.StatusOK, &list)
		if err == nil && (len(list.Items) != pagingSize || list.Next == nil) {
			err = fmt.Errorf("paging: a page of %d items, next %v", len(list.Items), list.Next)
		}
		return time.Since(t0), err
	}
	deep := ""
	for range pagingDepth - 1 {
		if _, err := get(deep); err != nil {
			return nil, err
		}
		deep = list.Next.Page
	}
	var first, last []time.Duration
	for range pagingRequests {
		d, err := get("")
		if err != nil {
			return nil, err
		}
		first = append(first, d)
		if d, err = get(deep); err != nil {
			return nil, err
		}
		last = append(last, d)
	}
	slices.Sort(first)
	slices.Sort(last)
	p1, pN := loadResult{n: len(first), lat: first}.percentile(50), loadResult{n: len(last), lat: last}.percentile(50)
	ratio := float64(pN) / float64(p1)
	what := fmt.Sprintf("GET /v1/orgs/{id}/spaces (%d spaces, %d a page): page %d p50 vs page 1", pagingSpaces, pagingSize, pagingDepth)
	return []row{{what, fmtMs(pN), fmtMs(p1) + " (page 1)", fmt.Sprintf("%.2fx", ratio), "<= 1.2x", passMiss(ratio <= 1.2)}}, nil
}

// spacesPagePath is the REST path of a page of limit of org's spaces, the
// one after cursor page ("" the first).
func spacesPagePath(org string, limit int, page string) string {
	p := fmt.Sprintf("/v1/orgs/%s/spaces?limit=%d", org, limit)
	if page != "" {
		p += "&page=" + url.QueryEscape(page)
	}
	return p
}
