package server

import (
	"net/http"

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
	registry = func() *prometheus.Registry {
		reg := prometheus.NewRegistry()
		reg.MustRegister(requestsTotal, requestDuration,
			collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
		return reg
	}()
)

func metricsHandler() http.Handler {
	return promhttp.HandlerFor(registry, promhttp.HandlerOpts{})
}
