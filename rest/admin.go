package rest

import (
	"crypto/subtle"
	"errors"
	"net/http"

	"github.com/docsapi/docsapi/graph"
)

// adminHandler serves instance administration, guarded by the admin token:
//
//	POST /admin/users {email, displayName}  → 201 {user, token}
//	POST /admin/users/{userId}/tokens       → 201 {token}
func adminHandler(res *graph.Resolver, adminToken string) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("POST /admin/users", labelled("POST /admin/users", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, rerr := decodeBody(r)
		if rerr != nil {
			writeError(w, rerr.status, rerr.message)
			return
		}
		email, _ := body["email"].(string)
		name, _ := body["displayName"].(string)
		created, err := res.CreateUser(r.Context(), email, name)
		if err != nil {
			writeGraphError(w, res, r, err)
			return
		}
		userJSON := map[string]any{"object": "user", "id": created.User.ID, "email": created.User.Email,
			"displayName": created.User.DisplayName,
			"urls":        map[string]any{"location": res.URLs.API("/v1/users/" + created.User.ID)}}
		writeJSON(w, http.StatusCreated, map[string]any{"user": userJSON, "token": created.Token})
	})))
	mux.Handle("POST /admin/users/{userId}/tokens", labelled("POST /admin/users/{userId}/tokens", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token, err := res.CreateToken(r.Context(), r.PathValue("userId"))
		if err != nil {
			writeGraphError(w, res, r, err)
			return
		}
		writeJSON(w, http.StatusCreated, map[string]any{"token": token})
	})))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token, ok := bearer(r)
		// SECURITY: constant-time comparison of the instance admin token.
		if !ok || subtle.ConstantTimeCompare([]byte(token), []byte(adminToken)) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="docsapi-admin"`)
			writeError(w, http.StatusUnauthorized, "the admin API needs Authorization: Bearer <DOCSAPI_ADMIN_TOKEN>")
			return
		}
		if _, pattern := mux.Handler(r); pattern == "" {
			writeError(w, http.StatusNotFound, "no such endpoint: "+r.URL.Path)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// writeGraphError writes an error returned by a graph function outside
// GraphQL execution, with the same mapping the presenter applies.
func writeGraphError(w http.ResponseWriter, res *graph.Resolver, r *http.Request, err error) {
	var e *graph.Error
	if errors.As(err, &e) {
		writeError(w, e.Status, e.Message)
		return
	}
	res.Log.ErrorContext(r.Context(), "admin request failed", "err", err)
	writeError(w, http.StatusInternalServerError, "internal error")
}
