package server

import (
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"

	"github.com/docsapi/docsapi/graph"
	"github.com/docsapi/docsapi/graph/engine"
	"github.com/docsapi/docsapi/rest"
)

// authenticator resolves the bearer token of a request into the caller
// (graph.Resolver.Authenticate).
type authenticator struct {
	res *graph.Resolver
	log *slog.Logger
}

// bearer returns the token of an "Authorization: Bearer <token>" header.
func bearer(r *http.Request) (string, bool) {
	h := r.Header.Get("Authorization")
	scheme, token, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(token) == "" {
		return "", false
	}
	return strings.TrimSpace(token), true
}

// resolve returns the caller of r, nil without a token, or an error for a
// token that matches no one.
func (a authenticator) resolve(r *http.Request) (*graph.Caller, error) {
	token, ok := bearer(r)
	if !ok {
		return nil, nil
	}
	return a.res.Authenticate(r.Context(), token)
}

// require answers 401 unless the request carries a valid token. Looking
// the token up is a query: a database out of reach or too slow answers 503
// (graph.DatabaseError), as any other request would.
func (a authenticator) require(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		caller, err := a.resolve(r)
		switch {
		case err != nil && !errors.Is(err, graph.ErrUnauthenticated):
			rest.WriteGraphError(w, r, a.log, err)
		case caller == nil:
			w.Header().Set("WWW-Authenticate", engine.BearerChallenge)
			rest.WriteError(w, http.StatusUnauthorized, graph.ErrUnauthenticated.Message)
		default:
			next.ServeHTTP(w, r.WithContext(graph.WithCaller(r.Context(), caller)))
		}
	})
}

// optional lets requests without a token through (GraphiQL introspects the
// schema before the user pastes a token; every resolver still requires a
// caller) but rejects an invalid token with 401.
func (a authenticator) optional(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		caller, err := a.resolve(r)
		switch {
		case errors.Is(err, graph.ErrUnauthenticated):
			engine.WriteHTTPError(w, r, http.StatusUnauthorized, graph.ErrUnauthenticated.Code, "the bearer token is not valid")
		case graph.DatabaseError(err) != nil:
			e := graph.DatabaseError(err)
			a.log.WarnContext(r.Context(), "the database failed the request", "code", e.Code, "err", err)
			w.Header().Set("Retry-After", strconv.Itoa(graph.RetryAfterSeconds))
			engine.WriteHTTPError(w, r, e.Status, e.Code, e.Message)
		case err != nil:
			a.log.ErrorContext(r.Context(), "authenticate", "err", err)
			engine.WriteHTTPError(w, r, http.StatusInternalServerError, "INTERNAL", "internal error")
		case caller == nil:
			next.ServeHTTP(w, r)
		default:
			next.ServeHTTP(w, r.WithContext(graph.WithCaller(r.Context(), caller)))
		}
	})
}
