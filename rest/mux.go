package rest

import (
	"fmt"
	"net/http"
)

// mux routes /v1 requests to the adapter, answering unknown paths and wrong
// methods in JSON like every other error.
func (a *adapter) mux(routes []Route) (http.Handler, error) {
	mux := http.NewServeMux()
	for _, route := range routes {
		if _, ok := a.ops[route.Operation]; !ok {
			return nil, fmt.Errorf("rest: route %s %s: no operation document %s.graphql", route.Method, route.Path, route.Operation)
		}
		pattern := route.Method + " " + route.Path
		mux.Handle(pattern, labelled(pattern, a.handler(route)))
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
			writeError(w, http.StatusMethodNotAllowed, fmt.Sprintf("method %s is not allowed on %s", r.Method, r.URL.Path))
			return
		}
		writeError(w, http.StatusNotFound, "no such endpoint: "+r.URL.Path)
	}), nil
}

// statusProbe is a ResponseWriter that only keeps the status and headers.
type statusProbe struct {
	header http.Header
	code   int
}

func (p *statusProbe) Header() http.Header         { return p.header }
func (p *statusProbe) Write(b []byte) (int, error) { return len(b), nil }
func (p *statusProbe) WriteHeader(code int)        { p.code = code }
