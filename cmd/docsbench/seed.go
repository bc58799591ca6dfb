package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
)

// apiClient calls the docsapi REST API as one user.
type apiClient struct {
	client *http.Client
	base   string
	token  string
}

// do sends a JSON request and decodes a JSON response into out, failing
// unless the status is want.
func (a *apiClient) do(ctx context.Context, method, path string, body any, want int, out any) error {
	var buf bytes.Buffer
	return a.send(ctx, &buf, method, path, body, want, out)
}

// send is do reading the response into buf (reset first), which callers
// sending many requests reuse.
func (a *apiClient) send(ctx context.Context, buf *bytes.Buffer, method, path string, body any, want int, out any) error {
	var r io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return err
		}
		r = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, a.base+path, r)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+a.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := a.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	buf.Reset()
	if _, err := buf.ReadFrom(resp.Body); err != nil {
		return err
	}
	if resp.StatusCode != want {
		return fmt.Errorf("%s %s: status %d, want %d: %.300s", method, path, resp.StatusCode, want, buf.Bytes())
	}
	if out != nil {
		return json.Unmarshal(buf.Bytes(), out)
	}
	return nil
}

// graphql runs a GraphQL operation, failing on any error in the answer.
func (a *apiClient) graphql(ctx context.Context, query string, variables map[string]any) error {
	var res struct {
		Errors []json.RawMessage `json:"errors"`
	}
	if err := a.do(ctx, "POST", "/graphql", map[string]any{"query": query, "variables": variables}, http.StatusOK, &res); err != nil {
		return err
	}
	if len(res.Errors) > 0 {
		return fmt.Errorf("GraphQL: %s", res.Errors[0])
	}
	return nil
}

// create POSTs body to path and returns the new resource's id.
func (a *apiClient) create(ctx context.Context, path string, body any) (string, error) {
	var res struct {
		ID string `json:"id"`
	}
	if err := a.do(ctx, "POST", path, body, http.StatusCreated, &res); err != nil {
		return "", err
	}
	if res.ID == "" {
		return "", fmt.Errorf("POST %s: no id in the response", path)
	}
	return res.ID, nil
}

// seededSite is what the benchmark reads.
type seededSite struct {
	org, id string
	// spaces are the ids of every space the site publishes.
	spaces []string
}

// seed creates an organization and a site of o.groups groups of o.sections
// sections, plus o.outside sections outside groups, each section with
// o.siteSpaces site spaces that each publish their own space. Independent
// requests run o.seedConcurrency at a time; groups are created in order.
func seed(ctx context.Context, api *apiClient, o options) (*seededSite, error) {
	org, err := api.create(ctx, "/v1/orgs", map[string]any{"title": "Bench"})
	if err != nil {
		return nil, err
	}
	site, err := api.create(ctx, "/v1/orgs/"+org+"/sites", map[string]any{"title": "Benchmark site"})
	if err != nil {
		return nil, err
	}
	base := "/v1/orgs/" + org + "/sites/" + site
	nSections := o.groups*o.sections + o.outside
	sectionTitle := func(i int) string {
		if i < o.groups*o.sections {
			return fmt.Sprintf("Group %d section %d", i/o.sections, i%o.sections)
		}
		return fmt.Sprintf("Outside section %d", i-o.groups*o.sections)
	}

	// Spaces: one per site space, space i*siteSpaces+k for section i.
	spaces := make([]string, nSections*o.siteSpaces)
	err = parallel(ctx, o.seedConcurrency, len(spaces), func(ctx context.Context, i int) error {
		id, err := api.create(ctx, "/v1/orgs/"+org+"/spaces",
			map[string]any{"title": fmt.Sprintf("Space %d.%d", i/o.siteSpaces, i%o.siteSpaces)})
		spaces[i] = id
		return err
	})
	if err != nil {
		return nil, err
	}

	// Sections, each with its first site space, then the other site spaces.
	sections := make([]string, nSections)
	err = parallel(ctx, o.seedConcurrency, nSections, func(ctx context.Context, i int) error {
		id, err := api.create(ctx, base+"/sections",
			map[string]any{"spaceId": spaces[i*o.siteSpaces], "title": sectionTitle(i)})
		sections[i] = id
		return err
	})
	if err != nil {
		return nil, err
	}
	err = parallel(ctx, o.seedConcurrency, nSections*(o.siteSpaces-1), func(ctx context.Context, j int) error {
		i, k := j/(o.siteSpaces-1), 1+j%(o.siteSpaces-1)
		_, err := api.create(ctx, base+"/site-spaces",
			map[string]any{"spaceId": spaces[i*o.siteSpaces+k], "sectionId": sections[i]})
		return err
	})
	if err != nil {
		return nil, err
	}

	// Groups, in order, each taking its sections.
	for g := range o.groups {
		_, err := api.create(ctx, base+"/section-groups", map[string]any{
			"title":    fmt.Sprintf("Group %d", g),
			"sections": sections[g*o.sections : (g+1)*o.sections],
		})
		if err != nil {
			return nil, err
		}
	}
	// The sections outside groups go after the groups.
	for i := o.groups * o.sections; i < nSections; i++ {
		err := api.do(ctx, "POST", base+"/sections/"+sections[i]+"/move", map[string]any{}, http.StatusOK, nil)
		if err != nil {
			return nil, err
		}
	}
	return &seededSite{org: org, id: site, spaces: spaces}, nil
}

// parallel runs fn for 0..n-1, at most workers at a time, and returns the
// first error (after which no new calls start).
func parallel(ctx context.Context, workers, n int, fn func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(workers, n) {
		wg.Go(func() {
			for i := range next {
				if err := fn(ctx, i); err != nil {
					cancel(err)
				}
			}
		})
	}
feed:
	for i := range n {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	return context.Cause(ctx)
}
