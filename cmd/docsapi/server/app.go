package server

import (
	"bytes"
	"html/template"
	"net/http"
	"net/url"
	"strings"
)

// The API returns `urls.app` addresses (/app/...) for its objects, as
// GitBook's does for its editor. This server has no editing application:
// with DOCSAPI_APP_URL set, those addresses lead to the operator's own,
// path kept; without it, to a page that says what the address names and
// how to read it, in the playground (a query to paste) or over REST.

// appHandler serves /app/... addresses.
func appHandler(appURL, publicURL string) http.Handler {
	appURL = strings.TrimRight(appURL, "/")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rest := strings.TrimPrefix(r.URL.Path, "/app")
		if appURL != "" {
			target := appURL + rest
			if r.URL.RawQuery != "" {
				target += "?" + r.URL.RawQuery
			}
			http.Redirect(w, r, target, http.StatusFound)
			return
		}
		view := appObject(strings.Split(strings.Trim(rest, "/"), "/"))
		view.Address = r.URL.Path
		view.Playground = strings.TrimRight(publicURL, "/") + "/graphql"
		if view.REST != "" {
			view.REST = strings.TrimRight(publicURL, "/") + view.REST
		}
		var b bytes.Buffer
		if err := appPage.Execute(&b, view); err != nil {
			http.Error(w, "internal error", http.StatusInternalServerError)
			return
		}
		h := w.Header()
		h.Set("Content-Type", "text/html; charset=utf-8")
		h.Set("Content-Security-Policy", "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Cache-Control", "no-store")
		status := http.StatusOK
		if view.Kind == "" {
			status = http.StatusNotFound
		}
		w.WriteHeader(status)
		_, _ = w.Write(b.Bytes())
	})
}

// appView is what an /app/ address names, and how to read it.
type appView struct {
	Address    string
	Kind       string
	REST       string
	Query      string
	Playground string
}

// appObject reads the forms of urls.app the resolvers make (graph/*.go's
// URLs.App calls) into the object they name.
func appObject(seg []string) appView {
	esc := url.PathEscape
	q := func(s string) string { return strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), `"`, `\"`) }
	switch {
	case len(seg) == 2 && seg[0] == "o":
		return appView{Kind: "organization " + seg[1], REST: "/v1/orgs/" + esc(seg[1]),
			Query: `{ organization(id: "` + q(seg[1]) + `") { id title urls { location } } }`}
	case len(seg) == 4 && seg[0] == "o" && seg[2] == "c":
		return appView{Kind: "collection " + seg[3], REST: "/v1/collections/" + esc(seg[3]),
			Query: `{ collection(id: "` + q(seg[3]) + `") { id title description } }`}
	case len(seg) == 4 && seg[0] == "o" && seg[2] == "sites":
		return appView{Kind: "site " + seg[3], REST: "/v1/orgs/" + esc(seg[1]) + "/sites/" + esc(seg[3]),
			Query: `{ site(organizationId: "` + q(seg[1]) + `", id: "` + q(seg[3]) + `") { id title published urls { published } } }`}
	case len(seg) == 4 && seg[0] == "o" && seg[2] == "openapi":
		return appView{Kind: "OpenAPI specification " + seg[3], REST: "/v1/orgs/" + esc(seg[1]) + "/openapi/" + esc(seg[3])}
	case len(seg) == 5 && seg[0] == "o" && seg[2] == "insights" && seg[3] == "clusters":
		return appView{Kind: "conversation issues cluster " + seg[4], REST: "/v1/orgs/" + esc(seg[1]) + "/conversations-clusters"}
	case len(seg) >= 4 && seg[0] == "o" && seg[2] == "integrations":
		return appView{Kind: "installation of integration " + seg[3], REST: "/v1/integrations/" + esc(seg[3]) + "/installations"}
	case len(seg) >= 2 && seg[0] == "integrations":
		return appView{Kind: "integration " + seg[1], REST: "/v1/integrations/" + esc(seg[1])}
	case len(seg) == 2 && seg[0] == "s":
		return appView{Kind: "space " + seg[1], REST: "/v1/spaces/" + esc(seg[1]),
			Query: `{ space(id: "` + q(seg[1]) + `") { id title content { pages { id title path } } } }`}
	case len(seg) == 5 && seg[0] == "s" && seg[2] == "~" && seg[3] == "changes":
		return appView{Kind: "change request #" + seg[4] + " of space " + seg[1],
			REST:  "/v1/spaces/" + esc(seg[1]) + "/change-requests/" + esc(seg[4]),
			Query: `{ space(id: "` + q(seg[1]) + `") { changeRequest(id: "` + q(seg[4]) + `") { id number subject status } } }`}
	case len(seg) == 5 && seg[0] == "s" && seg[2] == "~" && seg[3] == "revisions":
		return appView{Kind: "revision " + seg[4] + " of space " + seg[1],
			REST: "/v1/spaces/" + esc(seg[1]) + "/revisions/" + esc(seg[4])}
	case len(seg) > 2 && seg[0] == "s":
		p := strings.Join(seg[2:], "/")
		return appView{Kind: "page " + p + " of space " + seg[1], REST: "/v1/spaces/" + esc(seg[1]) + "/content/path/" + p,
			Query: `{ space(id: "` + q(seg[1]) + `") { content { pageByPath(path: "` + q(p) + `") { id title markdown } } } }`}
	}
	return appView{}
}

var appPage = template.Must(template.New("app").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>{{if .Kind}}The {{.Kind}}{{else}}Not an address of this server{{end}}</title>
</head>
<body>
<main>
{{- if .Kind}}
<h1>The {{.Kind}}</h1>
<p><code>{{.Address}}</code> is an address of the editing application, which this server does not include
(its operator can send these addresses to one with <code>DOCSAPI_APP_URL</code>). Read the object through the API:</p>
<ul>
{{- if .Query}}
<li>in the <a href="{{.Playground}}">GraphQL playground</a>, with your API token, by this query:
<pre>{{.Query}}</pre></li>
{{- end}}
<li>over REST: <code>curl -H "Authorization: Bearer $TOKEN" {{.REST}}</code></li>
</ul>
{{- else}}
<h1>Not an address of this server</h1>
<p><code>{{.Address}}</code> names nothing this server knows. The API is at <a href="{{.Playground}}">{{.Playground}}</a>.</p>
{{- end}}
</main>
</body>
</html>
`))
