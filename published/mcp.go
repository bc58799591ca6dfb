package published

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/docsapi/docsapi/graph"
)

// Every published site has an MCP server at {site}/~gitbook/mcp (streamable
// HTTP, stateless), for AI assistants that read documentation: a tool to
// search the site, a tool to read a page as Markdown, and the page tree as
// a resource with each page a resource of its own. It is built on the
// official Go SDK (modelcontextprotocol/go-sdk), and answers as the site's
// pages do: each request is admitted as a visitor first (a visitor-auth
// site's token comes as ?jwt_token= or an Authorization bearer header:
// there, a visitor's token, never an API token), and every answer comes
// from the reader's GraphQL documents run as that visitor. A page the
// visitor may not read is found by no tool and no resource.

// mcpPath is the MCP endpoint's segment after /~gitbook/.
const mcpPath = "mcp"

// mcpSearchLimit bounds the spaces of a search's results an assistant is
// given; mcpMaxPage the Markdown of one page (a larger one is cut, saying so).
const (
	mcpSearchLimit = 10
	mcpMaxPage     = 1 << 20
)

// serveMCP answers an MCP request to site a, admitted as visitor v.
func (rd *Reader) serveMCP(w http.ResponseWriter, r *http.Request, v *graph.Visitor, a address) {
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server {
		return rd.mcpServer(r, v, a)
	}, &mcp.StreamableHTTPOptions{
		Stateless:    true,
		JSONResponse: true,
		// The SDK refuses requests to a loopback address that name another
		// host, which protects MCP servers run on a developer's machine;
		// this one serves public sites, whose hostnames reach it through
		// proxies as well as directly.
		DisableLocalhostProtection: true,
		MaxRequestBodyBytes:        1 << 20,
	})
	handler.ServeHTTP(w, r)
}

// mcpServer is the MCP server of one request: its tools and resources read
// the site as visitor v, with the request's context (its loaders).
func (rd *Reader) mcpServer(r *http.Request, v *graph.Visitor, a address) *mcp.Server {
	asVisitor := func(ctx context.Context) context.Context {
		// The call's own context, as the visitor, with loaders of its own
		// (a stateless server answers one call a request).
		return graph.WithVisitor(graph.WithLoaders(ctx, graph.NewLoaders(rd.res.DB)), v)
	}
	site := v.Site()
	server := mcp.NewServer(&mcp.Implementation{Name: "docsapi-published-site", Title: site.Title, Version: "1"}, &mcp.ServerOptions{
		Instructions: "The documentation of " + site.Title + ". Search it with search, read a page with get_page (by the path or address a search gives).",
	})
	mcp.AddTool(server, &mcp.Tool{
		Name:        "search",
		Description: "Search the documentation of " + site.Title + ": the pages matching the query, best first, with their addresses and matching sections.",
	}, func(ctx context.Context, _ *mcp.CallToolRequest, in mcpSearchInput) (*mcp.CallToolResult, mcpSearchOutput, error) {
		out, err := rd.mcpSearch(asVisitor(ctx), v, a, in.Query)
		if err != nil {
			return nil, mcpSearchOutput{}, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: out.markdown()}}}, out, nil
	})
	mcp.AddTool(server, &mcp.Tool{
		Name:        "get_page",
		Description: "Read a page of the documentation of " + site.Title + " as Markdown, by its path in the site (as search gives it) or its address.",
	}, func(ctx context.Context, _ *mcp.CallToolRequest, in mcpPageInput) (*mcp.CallToolResult, any, error) {
		md, err := rd.mcpPage(asVisitor(ctx), v, a, in.Path)
		if err != nil {
			return nil, nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: md}}}, nil, nil
	})
	server.AddResource(&mcp.Resource{Name: "pages", Title: "The pages of " + site.Title, MIMEType: "text/markdown",
		URI: mcpPagesURI, Description: "Every page of the site, by section and variant, as a tree of links."},
		func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			md, err := rd.mcpTree(asVisitor(ctx), v, a)
			if err != nil {
				return nil, err
			}
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: mcpPagesURI, MIMEType: "text/markdown", Text: md}}}, nil
		})
	server.AddResourceTemplate(&mcp.ResourceTemplate{Name: "page", Title: "A page of " + site.Title, MIMEType: "text/markdown",
		URITemplate: mcpPageURI + "{+path}", Description: "A page of the site as Markdown, by its path in the site."},
		func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			path := strings.TrimPrefix(req.Params.URI, mcpPageURI)
			md, err := rd.mcpPage(asVisitor(ctx), v, a, path)
			if err != nil {
				return nil, mcp.ResourceNotFoundError(req.Params.URI)
			}
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/markdown", Text: md}}}, nil
		})
	return server
}

// The resources' addresses: the tree, and each page by its path.
const (
	mcpPagesURI = "docs://site/pages"
	mcpPageURI  = "docs://site/pages/"
)

type mcpSearchInput struct {
	Query string `json:"query" jsonschema:"what to look for: words, \"quoted phrases\", -excluded words"`
}

type mcpPageInput struct {
	Path string `json:"path" jsonschema:"the page's path in the site, as search gives it (such as guides/install), or its address"`
}

// mcpSearchOutput is what the search tool finds.
type mcpSearchOutput struct {
	Results []mcpSearchResult `json:"results"`
}

type mcpSearchResult struct {
	Title    string   `json:"title"`
	Path     string   `json:"path"`
	URL      string   `json:"url"`
	Where    string   `json:"where,omitempty"`
	Sections []string `json:"sections,omitempty"`
}

func (o mcpSearchOutput) markdown() string {
	if len(o.Results) == 0 {
		return "No page matches."
	}
	var b strings.Builder
	for _, r := range o.Results {
		fmt.Fprintf(&b, "- [%s](%s) (path: %s)", r.Title, r.URL, r.Path)
		if r.Where != "" {
			fmt.Fprintf(&b, " in %s", r.Where)
		}
		b.WriteByte('\n')
		for _, s := range r.Sections {
			fmt.Fprintf(&b, "  - %s\n", s)
		}
	}
	return b.String()
}

// mcpSearch searches the site as visitor v (all the site spaces it reads).
func (rd *Reader) mcpSearch(ctx context.Context, v *graph.Visitor, a address, query string) (mcpSearchOutput, error) {
	if strings.TrimSpace(query) == "" || len(query) > maxSearchQuery {
		return mcpSearchOutput{}, fmt.Errorf("the query must be 1 to %d characters", maxSearchQuery)
	}
	s, err := rd.loadSite(ctx, v, a)
	if err != nil {
		return mcpSearchOutput{}, err
	}
	var d searchData
	err = rd.run(ctx, "PublishedSearch", map[string]any{"organizationId": v.Site().OrganizationID, "siteId": v.Site().ID,
		"input": map[string]any{"query": query, "scope": map[string]any{"mode": "all"}}, "limit": mcpSearchLimit}, &d)
	if err != nil {
		return mcpSearchOutput{}, err
	}
	var out mcpSearchOutput
	for _, res := range rd.searchResults(s, &d) {
		r := mcpSearchResult{Title: res.Title, URL: rd.absolute(s, res.URL), Where: res.Where,
			Path: strings.TrimPrefix(strings.TrimPrefix(res.URL, s.base), "/")}
		r.Path, _ = url.PathUnescape(r.Path)
		for _, sec := range res.Sections {
			r.Sections = append(r.Sections, sec.Title+": "+sec.Snippet)
		}
		out.Results = append(out.Results, r)
	}
	return out, nil
}

// mcpPage is the Markdown of the page at path (in the site, or an address
// of it), as visitor v may read it.
func (rd *Reader) mcpPage(ctx context.Context, v *graph.Visitor, a address, path string) (string, error) {
	s, err := rd.loadSite(ctx, v, a)
	if err != nil {
		return "", err
	}
	if u, err := url.Parse(path); err == nil && u.Path != "" {
		path = u.Path
	}
	path = strings.TrimPrefix(strings.TrimPrefix(path, s.base), "/")
	ss, pagePath, ok := s.route(slicesWithout(strings.Split(path, "/"), ""))
	if !ok {
		return "", errNoPage
	}
	c, err := rd.loadContent(ctx, ss.space.ID)
	if err != nil {
		return "", err
	}
	p := c.frontPage()
	if pagePath != "" {
		p = c.byPath[pagePath]
	}
	if p != nil && p.Type != pageDocument {
		p = c.firstDocumentUnder(p)
	}
	if p == nil {
		return "", errNoPage
	}
	body, err := rd.loadPage(ctx, c, p)
	if err != nil {
		return "", err
	}
	md := "# " + p.Title + "\n\n"
	if d := deref(p.Description); d != "" {
		md += "> " + d + "\n\n"
	}
	md += deref(body.Markdown)
	if len(md) > mcpMaxPage {
		md = md[:mcpMaxPage] + "\n\n(The page is longer: its address has the rest.)\n"
	}
	return md, nil
}

// errNoPage: no page the visitor may read is at that path.
var errNoPage = fmt.Errorf("no page of this site is at that path")

// mcpTree is the site's pages as a Markdown tree of links, by section and
// site space, as visitor v sees them.
func (rd *Reader) mcpTree(ctx context.Context, v *graph.Visitor, a address) (string, error) {
	s, err := rd.loadSite(ctx, v, a)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n", s.title)
	for _, sec := range s.sectionsShown() {
		for _, ss := range sec.siteSpaces {
			heading := ss.title
			if !sec.isRoot {
				heading = sec.title + " › " + ss.title
			}
			fmt.Fprintf(&b, "\n## %s\n\n", heading)
			c, err := rd.loadContent(ctx, ss.space.ID)
			if err != nil {
				return "", err
			}
			for _, p := range c.ordered {
				if p.Type != pageDocument || c.hidden(p) {
					continue
				}
				depth := len(c.ancestors(p))
				u := rd.absolute(s, rd.pageURL(s, ss, p))
				path := strings.TrimPrefix(strings.TrimPrefix(rd.pageURL(s, ss, p), s.base), "/")
				fmt.Fprintf(&b, "%s- [%s](%s) (resource %s%s)\n", strings.Repeat("  ", depth), p.Title, u, mcpPageURI, path)
			}
		}
	}
	return b.String(), nil
}

// mcpRefusal answers an MCP request admission refused, in JSON: an
// assistant reads it, not a person.
func mcpRefusal(w http.ResponseWriter, status int, message string) {
	w.Header().Set("Content-Type", "application/json")
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="site", error="invalid_token"`)
	}
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"code": status, "message": message}})
}
