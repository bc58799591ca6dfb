package server

import (
	"context"
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
// (graph.Resolver.Authenticate) or, where visitorTokens is set (/graphql
// and /v1), into the visitor of a visitor API token
// (graph.Resolver.AdmitVisitorToken): a visitor, never a member, which
// reads what that visitor may read on its site and nothing else.
type authenticator struct {
	res *graph.Resolver
	log *slog.Logger
	// visitorTokens: visitor API tokens are recognised (by their prefix);
	// elsewhere they are a token that matches no one.
	visitorTokens bool
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

// identify is r's context with its caller (a member, or a visitor of a
// visitor API token), and whether there is one: r's own context without a
// token, an error for a token that matches no one or no longer works.
func (a authenticator) identify(r *http.Request) (context.Context, bool, error) {
	token, ok := bearer(r)
	if !ok {
		return r.Context(), false, nil
	}
	if a.visitorTokens && graph.IsVisitorToken(token) {
		// SECURITY: a visitor, never a member: CallerFrom answers
		// unauthenticated for it, and it asks the roots a visitor may.
		v, err := a.res.AdmitVisitorToken(r.Context(), token)
		if err != nil {
			return nil, false, err
		}
		return graph.WithVisitor(r.Context(), v), true, nil
	}
	caller, err := a.res.Authenticate(r.Context(), token)
	if err != nil {
		return nil, false, err
	}
	return graph.WithCaller(r.Context(), caller), true, nil
}

// require answers 401 unless the request carries a valid token. Looking
// the token up is a query: a database out of reach or too slow answers 503
// (graph.DatabaseError), as any other request would.
func (a authenticator) require(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, found, err := a.identify(r)
		switch {
		case err != nil && !errors.Is(err, graph.ErrUnauthenticated):
			rest.WriteGraphError(w, r, a.log, err)
		case !found:
			w.Header().Set("WWW-Authenticate", engine.BearerChallenge)
			rest.WriteError(w, http.StatusUnauthorized, graph.ErrUnauthenticated.Message)
		default:
			next.ServeHTTP(w, r.WithContext(ctx))
		}
	})
}

// optional lets requests without a token through (GraphiQL introspects the
// schema before the user pastes a token; every resolver still requires a
// caller) but rejects an invalid token with 401.
func (a authenticator) optional(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, found, err := a.identify(r)
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
		case !found:
			next.ServeHTTP(w, r)
		case graph.VisitorFrom(ctx) != nil && engine.IsWebsocket(r):
			// A websocket's operations authenticate with its connection's
			// token, an API token's (graph.Sessions); a visitor reads over
			// HTTP.
			engine.WriteHTTPError(w, r, http.StatusUnauthorized, graph.ErrUnauthenticated.Code,
				"a visitor API token reads over HTTP, not over a websocket")
		default:
			next.ServeHTTP(w, r.WithContext(ctx))
		}
	})
}
