package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net/http"
	"path"
	"regexp"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/docsapi/docsapi/graph"
	"github.com/docsapi/docsapi/graph/engine"
	"github.com/docsapi/docsapi/rest"
	"github.com/docsapi/docsapi/store"
)

type requestIDKey struct{}

var validRequestID = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// observe gives every request an id (the caller's X-Request-Id when it is
// sane) and, with tracing on (tracer not nil), a span (tracing.go); logs it,
// records its metrics and turns a panic into a 500. The request's line is
// at info level, at error level for a 5xx answer.
func observe(log *slog.Logger, tracer trace.Tracer, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := r.Header.Get("X-Request-Id")
		if !validRequestID.MatchString(id) {
			b := make([]byte, 8)
			_, _ = rand.Read(b)
			id = hex.EncodeToString(b)
		}
		label := &routeLabel{name: "unmatched"}
		ctx := context.WithValue(r.Context(), requestIDKey{}, id)
		ctx = context.WithValue(ctx, routeLabelKey{}, label)
		var span trace.Span
		if tracer != nil && !engine.IsWebsocket(r) {
			ctx, span = startRequestSpan(ctx, tracer, r, id)
		}
		r = r.WithContext(ctx)
		w.Header().Set("X-Request-Id", id)
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		defer func() {
			if p := recover(); p != nil {
				log.ErrorContext(ctx, "panic serving request", "panic", p)
				if !rec.wrote {
					rest.WriteError(rec, http.StatusInternalServerError, "internal error")
				}
			}
			elapsed := time.Since(start)
			requestsTotal.WithLabelValues(r.Method, label.name, strconv.Itoa(rec.status)).Inc()
			requestDuration.WithLabelValues(r.Method, label.name).Observe(elapsed.Seconds())
			level := slog.LevelInfo
			if rec.status >= http.StatusInternalServerError {
				level = slog.LevelError
			}
			log.LogAttrs(ctx, level, "request",
				slog.String("method", r.Method), slog.String("path", r.URL.Path),
				slog.Int("status", rec.status), slog.Duration("duration", elapsed))
			if span != nil {
				endRequestSpan(span, r.Method, label.name, rec.status)
			}
		}()
		next.ServeHTTP(rec, r)
	})
}

// routeLabel is the route a request matched, for metrics: the pattern, not
// the raw path, which would make one series per id.
type routeLabel struct{ name string }

type routeLabelKey struct{}

// labelled records that requests reaching h matched route.
func labelled(route string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if l, ok := r.Context().Value(routeLabelKey{}).(*routeLabel); ok {
			l.name = route
		}
		h.ServeHTTP(w, r)
	})
}

type statusRecorder struct {
	http.ResponseWriter
	status int
	wrote  bool
}

func (s *statusRecorder) WriteHeader(code int) {
	if !s.wrote {
		s.status, s.wrote = code, true
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	s.wrote = true
	return s.ResponseWriter.Write(b)
}

func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// limitBody bounds request bodies; the REST adapter answers 413 past it.
// GraphQL multipart requests (file uploads) may carry up to maxUpload.
func limitBody(max, maxUpload int64, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		limit := max
		if r.URL.Path == "/graphql" && strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/form-data") {
			limit = maxUpload
		}
		r.Body = http.MaxBytesReader(w, r.Body, limit)
		next.ServeHTTP(w, r)
	})
}

// canonicalPaths answers 404 to a path with dot segments or doubled
// slashes, which http.ServeMux would redirect to its cleaned form with a
// 307: a redirect that keeps the method and body, so a client deleting
// comment ".." of a space (DELETE /v1/spaces/S/comments/..) and following
// it would delete the space. No route names a path that is not clean. The
// path is compared as the mux compares it: escaped, cleaned the same way.
func canonicalPaths(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := r.URL.EscapedPath(); r.Method != http.MethodConnect && cleanPath(p) != p {
			rest.WriteError(w, http.StatusNotFound, "no such path: it has dot segments or empty segments")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// cleanPath is http.ServeMux's canonical form of a path: rooted, with
// path.Clean's rules, keeping a trailing slash.
func cleanPath(p string) string {
	if p == "" {
		return "/"
	}
	if p[0] != '/' {
		p = "/" + p
	}
	np := path.Clean(p)
	if p[len(p)-1] == '/' && np != "/" {
		np += "/"
	}
	return np
}

// perRequest gives each request its loaders and its query counter; in debug
// mode REST responses report the count in X-SQL-Queries. A websocket gets
// no loaders: they would live as long as it does, and each of its
// operations gets its own (graph/subscription.go).
func perRequest(db *store.DB, debug bool, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, counter := store.WithQueryCounter(r.Context())
		if !engine.IsWebsocket(r) {
			ctx = graph.WithLoaders(ctx, graph.NewLoaders(db))
		}
		if debug {
			w = &queryCountHeader{ResponseWriter: w, counter: counter}
		}
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// queryCountHeader sets X-SQL-Queries when the response starts.
type queryCountHeader struct {
	http.ResponseWriter
	counter *store.QueryCounter
	done    bool
}

func (q *queryCountHeader) WriteHeader(code int) {
	if !q.done {
		q.done = true
		q.Header().Set("X-SQL-Queries", strconv.FormatInt(q.counter.Count(), 10))
	}
	q.ResponseWriter.WriteHeader(code)
}

func (q *queryCountHeader) Write(b []byte) (int, error) {
	if !q.done {
		q.WriteHeader(http.StatusOK)
	}
	return q.ResponseWriter.Write(b)
}

func (q *queryCountHeader) Unwrap() http.ResponseWriter { return q.ResponseWriter }
