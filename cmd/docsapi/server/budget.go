package server

import (
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/docsapi/docsapi/graph"
	"github.com/docsapi/docsapi/graph/budget"
	"github.com/docsapi/docsapi/graph/engine"
)

// client tells the engine who a request's operations run for, once its
// token is known: whether a developer (trusted documents), and whose rate
// budget they draw on, the token's or, without one, the client address's.
// With a budget, every answer carries GitBook's X-RateLimit-Limit,
// -Remaining and -Reset (unix seconds), and an answer refused for a spent
// budget is a 429 with Retry-After whatever its protocol's transport chose.
// A websocket's operations are the connection's (graph.Sessions).
func client(b *budget.Budget, clock func() time.Time, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		caller, _ := graph.CallerFrom(r.Context())
		ctx := engine.WithDeveloper(r.Context(), caller.Developer())
		if b == nil || engine.IsWebsocket(r) {
			next.ServeHTTP(w, r.WithContext(ctx))
			return
		}
		m := &budget.Meter{Key: budgetKey(caller, graph.VisitorFrom(r.Context()), r)}
		w = &rateHeaders{ResponseWriter: w, b: b, m: m, clock: clock}
		next.ServeHTTP(w, r.WithContext(budget.WithMeter(ctx, m)))
	})
}

// budgetKey is whose budget r draws on: its token's (an API token's, or a
// visitor API token's), or its address's.
func budgetKey(caller *graph.Caller, visitor *graph.Visitor, r *http.Request) string {
	if caller != nil {
		return caller.BudgetKey()
	}
	if visitor != nil && visitor.BudgetKey() != "" {
		return visitor.BudgetKey()
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	return "address:" + host
}

// rateHeaders sets the rate headers when the response starts: from what the
// request's operations were charged, or, when none was (a request refused
// before it ran), the budget as this instance knows it.
type rateHeaders struct {
	http.ResponseWriter
	b     *budget.Budget
	m     *budget.Meter
	clock func() time.Time
	done  bool
}

func (h *rateHeaders) WriteHeader(code int) {
	if !h.done {
		h.done = true
		u, refused, charged := h.m.Last()
		if !charged {
			u = h.b.Peek(h.m.Key)
		}
		hd := h.Header()
		hd.Set("X-RateLimit-Limit", strconv.FormatInt(u.Limit, 10))
		hd.Set("X-RateLimit-Remaining", strconv.FormatInt(u.Remaining(), 10))
		hd.Set("X-RateLimit-Reset", strconv.FormatInt(u.Reset.Unix(), 10))
		if refused {
			hd.Set("Retry-After", strconv.FormatInt(u.RetryAfter(h.clock()), 10))
			code = http.StatusTooManyRequests
		}
	}
	h.ResponseWriter.WriteHeader(code)
}

func (h *rateHeaders) Write(p []byte) (int, error) {
	if !h.done {
		h.WriteHeader(http.StatusOK)
	}
	return h.ResponseWriter.Write(p)
}

func (h *rateHeaders) Unwrap() http.ResponseWriter { return h.ResponseWriter }
