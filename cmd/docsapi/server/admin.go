package server

import (
	"crypto/subtle"
	"net/http"

	"github.com/docsapi/docsapi/graph"
	"github.com/docsapi/docsapi/rest"
)

// adminHandler serves instance administration, guarded by the admin token:
//
//	POST /admin/users {email, displayName}  → 201 {user, token}
//	POST /admin/users/{userId}/tokens {developer?} → 201 {token}
func adminHandler(res *graph.Resolver, adminToken string) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("POST /admin/users", labelled("POST /admin/users", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := rest.ReadObject(w, r)
		if !ok {
			return
		}
		email, _ := body["email"].(string)
		name, _ := body["displayName"].(string)
		created, err := res.CreateUser(r.Context(), email, name)
		if err != nil {
			rest.WriteGraphError(w, r, res.Log, err)
			return
		}
		userJSON := map[string]any{"object": "user", "id": created.User.ID, "email": created.User.Email,
			"displayName": created.User.DisplayName,
			"urls":        map[string]any{"location": res.URLs.API("/v1/users/" + created.User.ID)}}
		rest.WriteJSON(w, http.StatusCreated, map[string]any{"user": userJSON, "token": created.Token})
	})))
	mux.Handle("POST /admin/users/{userId}/tokens", labelled("POST /admin/users/{userId}/tokens", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := rest.ReadObject(w, r)
		if !ok {
			return
		}
		developer, isBool := body["developer"].(bool)
		if _, given := body["developer"]; given && !isBool {
			rest.WriteError(w, http.StatusBadRequest, "developer: must be true or false")
			return
		}
		token, err := res.CreateToken(r.Context(), r.PathValue("userId"), developer)
		if err != nil {
			rest.WriteGraphError(w, r, res.Log, err)
			return
		}
		rest.WriteJSON(w, http.StatusCreated, map[string]any{"token": token})
	})))
	return operatorToken(adminToken, "docsapi-admin", "the admin API needs Authorization: Bearer <DOCSAPI_ADMIN_TOKEN>",
		http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if _, pattern := mux.Handler(r); pattern == "" {
				rest.WriteError(w, http.StatusNotFound, "no such endpoint: "+r.URL.Path)
				return
			}
			mux.ServeHTTP(w, r)
		}))
}

// operatorToken lets through to next only requests bearing token, an
// operator's secret from the configuration (not a user's API token); others
// get 401 with message. An empty token lets every request through.
func operatorToken(token, realm, message string, next http.Handler) http.Handler {
	if token == "" {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, ok := bearer(r)
		// SECURITY: constant-time comparison of the operator's secret.
		if !ok || subtle.ConstantTimeCompare([]byte(got), []byte(token)) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="`+realm+`"`)
			rest.WriteError(w, http.StatusUnauthorized, message)
			return
		}
		next.ServeHTTP(w, r)
	})
}
