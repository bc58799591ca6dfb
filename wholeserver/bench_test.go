package wholeserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime/pprof"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/docsapi/docsapi/cmd/docsapi/server"
	"github.com/docsapi/docsapi/cmd/docsapi/server/servertest"
)

// The server's own cost of its two hottest reads, without the network:
// requests go straight to the handler. cmd/docsbench measures the same reads
// over HTTP against hand-written baselines.
//
//	go test ./wholeserver -run '^$' -bench . -benchmem -cpuprofile cpu.out
//	go tool pprof -tagfocus bench=measured wholeserver.test cpu.out

//
// Each runs without a rate budget and with the docsapi command's default
// one (budget=on): what counting every request costs; and with the budget
// and every request traced (traces=on; the spans go to the SDK's batch
// processor and an exporter that drops them, so the export's encoding and
// sending are left out: cmd/docsbench -traces measures those too).

// budgets are the servers each benchmark runs on.
var budgets = []benchServer{
	{"budget=off", servertest.Options{}, false},
	{"budget=on", servertest.Options{RateLimit: server.DefaultRateLimit, RateWindow: server.DefaultRateWindow}, false},
	{"budget=on,traces=on", servertest.Options{RateLimit: server.DefaultRateLimit, RateWindow: server.DefaultRateWindow}, true},
}

type benchServer struct {
	name   string
	opts   servertest.Options
	traced bool
}

// options are the server's options, with a TracerProvider of its own when
// it is traced.
func (s benchServer) options(b *testing.B) servertest.Options {
	o := s.opts
	if s.traced {
		provider := sdktrace.NewTracerProvider(sdktrace.WithBatcher(tracetest.NewNoopExporter()))
		b.Cleanup(func() { _ = provider.Shutdown(context.Background()) })
		o.Tracing = provider
	}
	return o
}

func BenchmarkGetSpace(b *testing.B) {
	for _, budget := range budgets {
		b.Run(budget.name, func(b *testing.B) {
			env := servertest.New(b, budget.options(b))
			alice := env.NewUser("Alice")
			org := alice.NewOrg("Acme")
			space := alice.Do("POST", "/v1/orgs/"+org+"/spaces", map[string]any{"title": "Docs"}).Expect(http.StatusCreated).String("id")
			benchmarkRequest(b, env, func() *http.Request {
				r := httptest.NewRequest("GET", "/v1/spaces/"+space, nil)
				r.Header.Set("Authorization", "Bearer "+alice.Token)
				return r
			})
		})
	}
}

// BenchmarkSiteTree reads a whole site in one GraphQL query: 100 site spaces
// (4 groups × 5 sections × 5) and 1000 (20 × 10 × 5, docsbench's default).
func BenchmarkSiteTree(b *testing.B) {
	for _, size := range []struct{ groups, sections, siteSpaces int }{{4, 5, 5}, {20, 10, 5}} {
		for _, budget := range budgets {
			benchmarkSiteTree(b, size.groups, size.sections, size.siteSpaces, budget)
		}
	}
}

func benchmarkSiteTree(b *testing.B, groups, sections, siteSpaces int, srv benchServer) {
	b.Run(fmt.Sprintf("%dx%dx%d/%s", groups, sections, siteSpaces, srv.name), func(b *testing.B) {
		env := servertest.New(b, srv.options(b))
		alice := env.NewUser("Alice")
		org := alice.NewOrg("Acme")
		site := buildSiteTree(b, env, alice, org, groups, sections, siteSpaces, 0)
		// Statistics as autovacuum would gather them (see cmd/docsbench).
		if _, err := env.DB.Pool.Exec(context.Background(), "ANALYZE"); err != nil {
			b.Fatal(err)
		}
		body := `{"query":` + quoteJSON(siteTreeQuery) + `,"variables":{"o":"` + org + `","s":"` + site + `"}}`
		newRequest := func() *http.Request {
			r := httptest.NewRequest("POST", "/graphql", strings.NewReader(body))
			r.Header.Set("Authorization", "Bearer "+alice.Token)
			r.Header.Set("Content-Type", "application/json")
			return r
		}
		// One request at a time (ns/op is the latency without HTTP),
		// then many (ns/op is the inverse of throughput).
		b.Run("serial", func(b *testing.B) { benchmarkSerial(b, env, newRequest) })
		b.Run("parallel", func(b *testing.B) { benchmarkRequest(b, env, newRequest) })
	})
}

// benchmarkSerial serves newRequest's requests one at a time.
func benchmarkSerial(b *testing.B, env *servertest.Env, newRequest func() *http.Request) {
	b.ReportAllocs()
	pprof.Do(context.Background(), pprof.Labels("bench", "measured"), func(ctx context.Context) {
		for b.Loop() {
			w := httptest.NewRecorder()
			env.Server.ServeHTTP(w, newRequest().WithContext(ctx))
			if w.Code != http.StatusOK || strings.Contains(w.Body.String(), `"errors"`) {
				b.Fatalf("status %d: %s", w.Code, w.Body)
			}
		}
	})
}

// benchmarkRequest serves newRequest's requests from 8 goroutines per CPU,
// so ns/op reads as the inverse of throughput.
func benchmarkRequest(b *testing.B, env *servertest.Env, newRequest func() *http.Request) {
	b.ReportAllocs()
	b.SetParallelism(8)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		// The label marks the measured requests (and the goroutines they
		// start) in a CPU profile: pprof -tagfocus bench=measured leaves the
		// setup out.
		pprof.Do(context.Background(), pprof.Labels("bench", "measured"), func(ctx context.Context) {
			for pb.Next() {
				w := httptest.NewRecorder()
				env.Server.ServeHTTP(w, newRequest().WithContext(ctx))
				if w.Code != http.StatusOK || strings.Contains(w.Body.String(), `"errors"`) {
					b.Errorf("status %d: %s", w.Code, w.Body)
					return
				}
			}
		})
	})
}

func quoteJSON(s string) string {
	raw, _ := json.Marshal(s)
	return string(raw)
}
