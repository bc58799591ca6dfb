package server

import (
	"net/http"

	"github.com/docsapi/docsapi/graph"
	"github.com/docsapi/docsapi/published"
	"github.com/docsapi/docsapi/store"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Request metrics, labelled by route pattern (not raw path, which would make
// one series per id).
var (
	requestsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "docsapi_http_requests_total",
		Help: "HTTP requests by method, route pattern and status.",
	}, []string{"method", "route", "status"})
	requestDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "docsapi_http_request_duration_seconds",
		Help:    "HTTP request latency by method and route pattern.",
		Buckets: prometheus.ExponentialBuckets(0.0005, 2, 14),
	}, []string{"method", "route"})
)

// metricsHandler serves the metrics of this process: requests, the Go
// runtime, the subscriptions live holds and has refused, the responses it
// made to their events and the messages carrying them, the reader's cache of
// published pages, and, with
// replicas or on a Citus cluster, the routing of db's reads (replicas.go,
// citus.go).
func metricsHandler(live *graph.LiveHub, db *store.DB, reader *published.Reader, changes *graph.PublishedChanges) http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(requestsTotal, requestDuration,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "docsapi_subscriptions",
			Help: "GraphQL subscriptions this process serves now.",
		}, func() float64 { return float64(live.Subscribers()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "docsapi_subscriptions_refused_total",
			Help: "GraphQL subscriptions refused by the limits per token and in total (DOCSAPI_SUBSCRIPTIONS_PER_TOKEN, DOCSAPI_SUBSCRIPTIONS_MAX).",
		}, func() float64 { return float64(live.Refused()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "docsapi_subscription_responses_total",
			Help: "Responses made to GraphQL subscriptions' events: one per event for all the subscribers of one selection and visibility.",
		}, func() float64 { return float64(live.Responses()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "docsapi_subscription_messages_total",
			Help: "Messages carrying subscriptions' events written to subscribers.",
		}, func() float64 { return float64(live.Sent()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "docsapi_published_cache_bytes",
			Help: "Bytes of the published pages this process keeps (DOCSAPI_PUBLISHED_CACHE_BYTES bounds them).",
		}, func() float64 { return float64(reader.CacheStats().Bytes) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "docsapi_published_cache_entries",
			Help: "Published pages this process keeps.",
		}, func() float64 { return float64(reader.CacheStats().Entries) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "docsapi_published_cache_hits_total",
			Help: "Published page views answered from the pages kept.",
		}, func() float64 { return float64(reader.CacheStats().Hits) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "docsapi_published_cache_misses_total",
			Help: "Published page views that made their page.",
		}, func() float64 { return float64(reader.CacheStats().Misses) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "docsapi_published_changes_heard_total",
			Help: "Changes to published sites and the spaces they show that this process heard (its own at commit, the others' as PostgreSQL delivers them).",
		}, func() float64 { return float64(changes.Heard()) }))
	if db.Replicated() {
		reg.MustRegister(replicaMetrics{db})
	}
	if db.ReadsOnWorkers() {
		reg.MustRegister(workerMetrics{db})
	}
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
}
