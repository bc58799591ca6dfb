package rest

import (
	"fmt"
	"net/http"
)

// Handler serves /v1: every route of the table, label wrapping each route's
// handler with its pattern (the server's metrics), and JSON answers for
// unknown paths and wrong methods, like every other error.
func (a *API) Handler(label func(pattern string, h http.Handler) http.Handler) http.Handler {
	mux := http.NewServeMux()
	for _, route := range Routes {
		pattern := route.Method + " " + route.Path
		mux.Handle(pattern, label(pattern, a.handler(route)))
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h, pattern := mux.Handler(r)
		if pattern != "" {
			mux.ServeHTTP(w, r) // ServeHTTP, not h: it sets the path values
			return
		}
		// Let the mux decide between 404 and 405 (it knows the Allow
		// header), then answer in JSON.
		rec := &statusProbe{header: http.Header{}}
		h.ServeHTTP(rec, r)
		if allow := rec.header.Get("Allow"); allow != "" {
			w.Header().Set("Allow", allow)
		}
		if rec.code == http.StatusMethodNotAllowed {
			WriteError(w, http.StatusMethodNotAllowed, fmt.Sprintf("method %s is not allowed on %s", r.Method, r.URL.Path))
			return
		}
		WriteError(w, http.StatusNotFound, "no such endpoint: "+r.URL.Path)
	})
}

// statusProbe is a ResponseWriter that only keeps the status and headers.
type statusProbe struct {
	header http.Header
	code   int
}

func (p *statusProbe) Header() http.Header         { return p.header }
func (p *statusProbe) Write(b []byte) (int, error) { return len(b), nil }
func (p *statusProbe) WriteHeader(code int)        { p.code = code }
