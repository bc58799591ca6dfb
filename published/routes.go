package published

import (
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/docsapi/docsapi/graph"
	"github.com/docsapi/docsapi/store"
)

// The published addresses, on the published URL's host under its path
// (prefix), or at the root of a site's custom hostname:
//
//	{prefix}/{organizationId}/{basename or site id}/...   a site (serveSite)
//	{prefix}/s/{spaceId}                                   a space's published address (serveSpace)
//	https://{site hostname}/...                            a site on its own hostname
//
// and within a site's base:
//
//	/~gitbook/static/{name}            the reader's styles and script (assets.go)
//	/~gitbook/files/{sha256}/{name}    a file of a revision the site shows (files.go)
//	/~gitbook/search?q=…&ss=…          the site's search, a page of results (search.go)
//	/~gitbook/mcp                      the site's MCP server, for assistants (mcp.go)
//	/sitemap.xml, /sitemap-{n}.xml     the pages for search engines (search_engines.go)
//	/robots.txt                        what search engines may crawl (search_engines.go)
//	/llms.txt, /llms-full.txt          the pages for machines, as Markdown (llms.go)
//	/{section}/{site space}/{page}     a page, the first two left out for the defaults (site.go)
//	/{section}/{site space}/{page}.md  the same page as Markdown (llms.go)

// gitbookDir is the first segment of the reader's own resources within a
// site: no section, site space or page path may hold a '~' there.
const gitbookDir = "~gitbook"

// address is the site a request names, and where the site's pages start.
type address struct {
	hostname     string
	organization string
	name         string
	// base is the site's path on this host, without a trailing slash ("" at
	// the root of a custom hostname).
	base string
}

// ServeHTTP serves a request under the published prefix.
func (rd *Reader) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rest, ok := strings.CutPrefix(r.URL.Path, rd.prefix+"/")
	if !ok {
		rd.notFound(w, r)
		return
	}
	segments := strings.Split(rest, "/")
	switch {
	case len(segments) >= 2 && segments[0] == "s":
		rd.serveSpace(w, r, segments[1])
	case len(segments) >= 2 && segments[0] != "" && segments[1] != "":
		a := address{organization: segments[0], name: segments[1],
			base: rd.prefix + "/" + url.PathEscape(segments[0]) + "/" + url.PathEscape(segments[1])}
		rd.serveSite(w, r, a, segments[2:])
	default:
		rd.notFound(w, r)
	}
}

// ServeHostname serves a request to a site's custom hostname, whatever its
// path, when host (lower case, no port) is one; it reports whether it was.
func (rd *Reader) ServeHostname(w http.ResponseWriter, r *http.Request, host string) bool {
	if !rd.res.SiteHostname(r.Context(), host) {
		return false
	}
	rd.serveSite(w, r, address{hostname: host}, strings.Split(strings.TrimPrefix(r.URL.Path, "/"), "/"))
	return true
}

// serveSite serves the address segments name under site a.
func (rd *Reader) serveSite(w http.ResponseWriter, r *http.Request, a address, segments []string) {
	// Empty segments (a trailing slash) name nothing.
	segments = slicesWithout(segments, "")
	if len(segments) == 2 && segments[0] == gitbookDir && segments[1] == mcpPath {
		rd.serveMCPRequest(w, r, a)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		rd.writeStatusPage(w, r, http.StatusMethodNotAllowed, "Method not allowed", "Published pages are read with GET.")
		return
	}
	if len(segments) >= 2 && segments[0] == gitbookDir && segments[1] == "static" {
		rd.assets.serve(w, r, strings.Join(segments[2:], "/"))
		return
	}
	// The number of changes heard before anything of the site is read: a
	// page made from what is read is kept as of it (cache.go).
	seq := rd.res.PublishedChanges.Seq()
	v, ok, err := rd.admit(w, r, a)
	var authRequired *graph.VisitorAuthRequired
	switch {
	case errors.As(err, &authRequired) && len(segments) == 1 && segments[0] == robotsFile:
		// SECURITY: a crawler has no token: a visitor-auth site tells it
		// to crawl nothing. The answer holds nothing of the site, and says
		// no more than the refusal of any other address (that a site
		// needing a sign-in is there).
		rd.writeClosedRobots(w, r, a)
		return
	case err != nil:
		rd.refuse(w, r, a, err)
		return
	case !ok:
		return
	}
	ctx := graph.WithVisitor(r.Context(), v)
	if rd.res.DB.Replicated() {
		// What is kept must be no older than the changes heard: the
		// primary's, never a replica's that may lag behind them.
		ctx = store.OnPrimary(ctx)
	}
	r = r.WithContext(ctx)
	if len(segments) >= 1 && segments[0] == gitbookDir {
		if len(segments) == 2 && segments[1] == "search" {
			rd.serveSearch(w, r, v, a)
			return
		}
		if len(segments) == 4 && segments[1] == "files" {
			rd.serveFile(w, r, segments[2])
			return
		}
		rd.notFound(w, r)
		return
	}
	if len(segments) == 1 {
		if makeFile := rd.siteFile(w, r, v, a, segments[0]); makeFile != nil {
			rd.serveKept(w, r, v, a, segments[0], seq, makeFile)
			return
		}
	}
	if n := len(segments); n > 0 && strings.HasSuffix(segments[n-1], markdownSuffix) {
		rd.serveKept(w, r, v, a, strings.Join(segments, "/"), seq, func() *rendered { return rd.makeMarkdownPage(w, r, v, a, segments) })
		return
	}
	rd.servePage(w, r, v, a, segments, seq)
}

// refuse answers a request admission refused: the same page for every
// address that leads to no site the visitor may read, whatever the reason
// (it never says whether a site is there), and for a visitor-auth site
// without a valid token, its login page or a page saying it needs one.
func (rd *Reader) refuse(w http.ResponseWriter, r *http.Request, a address, err error) {
	var auth *graph.VisitorAuthRequired
	switch {
	case errors.As(err, &auth) && auth.FallbackURL != "":
		// The site's login page, told where the visitor was going (as
		// GitBook does: ?location=), to send them back with a token.
		http.Redirect(w, r, auth.LoginURL(r.URL.Path), http.StatusFound)
	case errors.As(err, &auth):
		rd.writeStatusPage(w, r, http.StatusUnauthorized, "Sign-in required",
			"This documentation is for signed-in readers. Open it from the link your sign-in gives you.")
	case graph.IsNotFound(err):
		rd.notFound(w, r)
	default:
		rd.failed(w, r, err)
	}
}

func slicesWithout(s []string, drop string) []string {
	out := s[:0:0]
	for _, x := range s {
		if x != drop {
			out = append(out, x)
		}
	}
	return out
}

// serveMCPRequest admits an MCP request to site a and serves it: a
// visitor-auth site's token may come as a bearer header there (MCP clients
// send one), and a refusal is answered in JSON.
func (rd *Reader) serveMCPRequest(w http.ResponseWriter, r *http.Request, a address) {
	v, err := rd.admitRequest(r, a, true)
	var auth *graph.VisitorAuthRequired
	switch {
	case errors.As(err, &auth):
		mcpRefusal(w, http.StatusUnauthorized, "this site's MCP server needs a visitor token: ?jwt_token= or Authorization: Bearer")
		return
	case graph.IsNotFound(err):
		mcpRefusal(w, http.StatusNotFound, "no published site here")
		return
	case err != nil:
		rd.failed(w, r, err)
		return
	}
	ctx := graph.WithVisitor(r.Context(), v)
	if rd.res.DB.Replicated() {
		ctx = store.OnPrimary(ctx)
	}
	rd.serveMCP(w, r.WithContext(ctx), v, a)
}
