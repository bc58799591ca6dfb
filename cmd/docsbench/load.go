package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// requester sends request number i of a run and checks the answer; buf is
// the worker's body buffer.
type requester func(ctx context.Context, buf *bytes.Buffer, i int) error

// httpRequester builds a requester that sends method to url(i) with body
// (nil: none) and token (empty: none), reads the whole body and passes it to
// check.
func httpRequester(client *http.Client, method string, url func(i int) string, body []byte, token string,
	check func(status int, body []byte) error) requester {
	return httpRequesterEach(client, method, url, func(int) []byte { return body }, token, check)
}

// httpRequesterEach is httpRequester with a body of its own for each
// request (body(i), nil: none).
func httpRequesterEach(client *http.Client, method string, url func(i int) string, body func(i int) []byte, token string,
	check func(status int, body []byte) error) requester {
	return func(ctx context.Context, buf *bytes.Buffer, i int) error {
		var r io.Reader
		b := body(i)
		if b != nil {
			r = bytes.NewReader(b)
		}
		req, err := http.NewRequestWithContext(ctx, method, url(i), r)
		if err != nil {
			return err
		}
		if b != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		buf.Reset()
		_, err = buf.ReadFrom(resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
		return check(resp.StatusCode, buf.Bytes())
	}
}

// loadResult is one measurement: how many requests completed in how long,
// and the latency of each.
type loadResult struct {
	n       int
	elapsed time.Duration
	lat     []time.Duration // sorted
	// cpuSelf and cpuPostgres are the CPU time per request of this process
	// and of PostgreSQL (cpu.go), when cpuOK.
	cpuSelf, cpuPostgres time.Duration
	cpuOK                bool
}

func (r loadResult) rps() float64 { return float64(r.n) / r.elapsed.Seconds() }

// cpu is the CPU time per request, this process's and PostgreSQL's.
func (r loadResult) cpu() time.Duration { return r.cpuSelf + r.cpuPostgres }

// percentile is the nearest-rank percentile p (0 < p ≤ 100) of the latencies.
func (r loadResult) percentile(p float64) time.Duration {
	if len(r.lat) == 0 {
		return 0
	}
	i := int(math.Ceil(p/100*float64(len(r.lat)))) - 1
	return r.lat[min(max(i, 0), len(r.lat)-1)]
}

// load runs send from concurrency workers until duration has passed or
// maxRequests (0: no limit) have been started, whichever comes first. Request
// numbers run from 0 in the order requests start. The first failure stops
// the run and is returned.
func load(ctx context.Context, concurrency int, duration time.Duration, maxRequests int, send requester) (loadResult, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var next atomic.Int64
	lats := make([][]time.Duration, concurrency)
	var wg sync.WaitGroup
	start := time.Now()
	deadline := start.Add(duration)
	for w := range concurrency {
		wg.Go(func() {
			var buf bytes.Buffer
			lat := make([]time.Duration, 0, 4096)
			for ctx.Err() == nil {
				t0 := time.Now()
				if t0.After(deadline) {
					break
				}
				i := int(next.Add(1) - 1)
				if maxRequests > 0 && i >= maxRequests {
					break
				}
				if err := send(ctx, &buf, i); err != nil {
					cancel(fmt.Errorf("request %d: %w", i, err))
					break
				}
				lat = append(lat, time.Since(t0))
			}
			lats[w] = lat
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	if err := context.Cause(ctx); err != nil {
		return loadResult{}, err
	}
	res := loadResult{elapsed: elapsed, lat: slices.Concat(lats...)}
	res.n = len(res.lat)
	slices.Sort(res.lat)
	return res, nil
}
