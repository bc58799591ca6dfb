package server

import (
	"encoding/json"
	"html/template"
	"log/slog"
	"net/http"
	"strings"

	"github.com/docsapi/docsapi/graph"
	"github.com/docsapi/docsapi/rest"
)

// SAML single sign-on, served outside /v1 because the person signing in has
// no token yet (graph/sso_login.go and graph/sso_link.go hold the rules):
//
//	GET  /sso/saml/{providerId}               this service's metadata
//	GET  /sso/saml/{providerId}/start         redirect to the provider with a new AuthnRequest
//	POST /sso/saml/{providerId}/acs           the provider's answer: a sign-in, or a link's code
//	POST /sso/saml/{providerId}/link          (with a token) start linking the provider to one's account
//	POST /sso/saml/{providerId}/link/confirm  (with a token) {"code"}: confirm the link
func mountSAML(mux *http.ServeMux, res *graph.Resolver, auth authenticator, log *slog.Logger) {
	for _, h := range []struct {
		pattern string
		serve   http.Handler
	}{
		{"GET " + graph.SAMLPath + "{providerId}", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			md, err := res.SAMLMetadata(r.Context(), r.PathValue("providerId"))
			if err != nil {
				rest.WriteGraphError(w, r, log, err)
				return
			}
			w.Header().Set("Content-Type", "application/samlmetadata+xml")
			_, _ = w.Write(md)
		})},
		{"GET " + graph.SAMLPath + "{providerId}/start", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			to, err := res.StartSAMLSignIn(r.Context(), r.PathValue("providerId"))
			if err != nil {
				rest.WriteGraphError(w, r, log, err)
				return
			}
			http.Redirect(w, r, to, http.StatusFound)
		})},
		{"POST " + graph.SAMLPath + "{providerId}/acs", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			login, link, err := res.AnswerSAML(r.Context(), r.PathValue("providerId"), r.PostFormValue("SAMLResponse"))
			if err != nil {
				rest.WriteGraphError(w, r, log, err)
				return
			}
			// A browser gets a small page; a client asking for JSON, the
			// answer itself.
			var answer any = login
			page := ssoLoginPage
			if link != nil {
				answer, page = link, ssoLinkPage
			}
			if strings.Contains(r.Header.Get("Accept"), "application/json") {
				writeSecret(w, answer)
				return
			}
			w.Header().Set("Cache-Control", "no-store")
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_ = page.Execute(w, answer)
		})},
		{"POST " + graph.SAMLPath + "{providerId}/link", auth.require(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			start, err := res.StartSAMLLink(r.Context(), r.PathValue("providerId"))
			if err != nil {
				rest.WriteGraphError(w, r, log, err)
				return
			}
			writeSecret(w, start)
		}))},
		{"POST " + graph.SAMLPath + "{providerId}/link/confirm", auth.require(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var body struct {
				Code string `json:"code"`
			}
			// A body that is no such object is a missing code (the
			// resolver says so).
			_ = json.NewDecoder(http.MaxBytesReader(w, r.Body, 4096)).Decode(&body)
			linked, err := res.ConfirmSAMLLink(r.Context(), r.PathValue("providerId"), body.Code)
			if err != nil {
				rest.WriteGraphError(w, r, log, err)
				return
			}
			writeSecret(w, linked)
		}))},
	} {
		mux.Handle(h.pattern, labelled(h.pattern, h.serve))
	}
}

// writeSecret answers v as JSON, never cached: it holds secrets (a token, a
// link's code) or what they unlocked.
func writeSecret(w http.ResponseWriter, v any) {
	w.Header().Set("Cache-Control", "no-store")
	rest.WriteJSON(w, http.StatusOK, v)
}

// ssoLoginPage shows the token to the person who signed in; the token is
// also in a meta element, for a client driving the browser.
var ssoLoginPage = template.Must(template.New("sso").Parse(`<!doctype html>
<html><head><meta charset="utf-8"><meta name="docsapi-token" content="{{.Token}}"><title>Signed in</title></head>
<body><h1>Signed in as {{.Email}}</h1>
<p>Your API token (shown once): <code id="token">{{.Token}}</code></p>
<p>Use it as <code>Authorization: Bearer &lt;token&gt;</code>, until {{.ExpiresAt.UTC.Format "2006-01-02 15:04 MST"}}.</p></body></html>
`))

// ssoLinkPage shows the browser that signed in at the identity provider the
// code that confirms the link; the code is also in a meta element, for a
// client driving the browser.
var ssoLinkPage = template.Must(template.New("sso-link").Parse(`<!doctype html>
<html><head><meta charset="utf-8"><meta name="docsapi-link-code" content="{{.LinkCode}}"><title>Confirm the link</title></head>
<body><h1>Identity verified</h1>
<p>To link it to your account, confirm this code with the token of the session that started the link: <code id="link-code">{{.LinkCode}}</code></p>
<p>It works once, until {{.ExpiresAt.UTC.Format "2006-01-02 15:04 MST"}}. If you did not start this link yourself, ignore it and give the code to nobody.</p></body></html>
`))
