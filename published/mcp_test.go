package published_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/docsapi/docsapi/cmd/docsapi/server/servertest"
)

// mcpReport is what testdata/mcp/mcp.mjs saw of a site's MCP server through
// the official TypeScript SDK.
type mcpReport struct {
	Error  string
	Tools  []string
	Search struct {
		Text    string
		Results []struct{ Title, Path, URL string }
		IsError bool
	}
	Page, Hidden struct {
		Text    string
		IsError bool
	}
	HiddenResource, HiddenResourceError string
	Resources, Templates                []string
	Tree, PageResource                  string
}

// mcpClient runs the TypeScript client against the MCP server at url.
func mcpClient(t *testing.T, url, bearer, query, page, hidden string) mcpReport {
	t.Helper()
	node := servertest.NodeTool(t, "the MCP client test", "nodejs npm")
	dir, err := filepath.Abs("testdata/mcp")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk")); err != nil {
		t.Skipf("@modelcontextprotocol/sdk is not installed: run `npm ci` in %s", dir)
	}
	out := runNodeScript(t, node, dir, "mcp.mjs", 2*time.Minute, "MCP_URL="+url, "MCP_BEARER="+bearer,
		"MCP_QUERY="+query, "MCP_PAGE="+page, "MCP_HIDDEN="+hidden)
	var r mcpReport
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("report: %v\n%s", err, out)
	}
	return r
}

// A published site's MCP server, through the official TypeScript client:
// its tools and resources, a search, a page as Markdown; and what the
// visitor may not read, a page of a section hidden by a condition, found
// by no tool and no resource.
func TestPublishedSiteMCP(t *testing.T) {
	t.Parallel()
	f := newReaderFixture(t, "public")
	f.page(f.space, map[string]any{"title": "Ferries", "markdown": "## Timetable\n\nThe zanzibar ferry leaves at noon.\n"})
	beta := f.newSpace("Beta guides")
	f.page(beta, map[string]any{"title": "Beta ferries", "markdown": "The beta zanzibar route.\n"})
	section := f.admin.Do("POST", f.sitePath("/sections"), map[string]any{"spaceId": beta, "title": "Beta"}).Expect(201).String("id")
	f.admin.Do("PATCH", f.sitePath("/sections/"+section), map[string]any{"path": "beta", "condition": "visitor.claims.unsigned.beta === true"}).
		Expect(200)
	base := f.publish()

	r := mcpClient(t, base+"/~gitbook/mcp", "", "zanzibar", "ferries", "beta/beta-ferries")
	if r.Error != "" {
		t.Fatalf("the client failed: %s", r.Error)
	}
	if strings.Join(r.Tools, ",") != "get_page,search" && strings.Join(r.Tools, ",") != "search,get_page" {
		t.Errorf("tools %v", r.Tools)
	}
	if r.Search.IsError || len(r.Search.Results) != 1 || r.Search.Results[0].Title != "Ferries" ||
		r.Search.Results[0].URL != base+"/ferries" || strings.Contains(r.Search.Text, "Beta") {
		t.Errorf("search: %+v", r.Search)
	}
	if r.Page.IsError || !strings.HasPrefix(r.Page.Text, "# Ferries\n") || !strings.Contains(r.Page.Text, "leaves at noon") {
		t.Errorf("get_page: %+v", r.Page)
	}
	if !r.Hidden.IsError || strings.Contains(r.Hidden.Text, "beta zanzibar") {
		t.Errorf("a page of a hidden section: %+v", r.Hidden)
	}
	if r.HiddenResourceError == "" || strings.Contains(r.HiddenResource, "beta zanzibar") {
		t.Errorf("a hidden page as a resource: %q %q", r.HiddenResource, r.HiddenResourceError)
	}
	if len(r.Resources) != 1 || len(r.Templates) != 1 || !strings.Contains(r.Tree, "[Ferries]("+base+"/ferries)") ||
		strings.Contains(r.Tree, "Beta ferries") || !strings.Contains(r.PageResource, "leaves at noon") {
		t.Errorf("resources %v, templates %v, tree %q, page %q", r.Resources, r.Templates, r.Tree, r.PageResource)
	}
}

// On a visitor-auth site the MCP server opens to the site's visitor
// tokens (a bearer header, or ?jwt_token=), and answers 401 to others.
func TestVisitorAuthSiteMCP(t *testing.T) {
	t.Parallel()
	f := newReaderFixture(t, "visitor-auth")
	base := f.publish()
	key := f.admin.Do("GET", f.sitePath("/publishing/auth"), nil).Expect(200).String("privateKey")
	tok := token(t, jwt.SigningMethodHS256, []byte(key), jwt.MapClaims{"exp": f.env.Clock.Now().Add(time.Hour).Unix()})

	if r := mcpClient(t, base+"/~gitbook/mcp", "", "welcome", "setup", ""); !strings.Contains(r.Error, "401") {
		t.Errorf("without a token: %+v", r)
	}
	if r := mcpClient(t, base+"/~gitbook/mcp", f.admin.Token, "welcome", "setup", ""); !strings.Contains(r.Error, "401") {
		t.Errorf("with a member's API token: %+v", r)
	}
	for _, r := range []mcpReport{
		mcpClient(t, base+"/~gitbook/mcp", tok, "install", "setup", ""),
		mcpClient(t, base+"/~gitbook/mcp?jwt_token="+tok, "", "install", "setup", ""),
	} {
		if r.Error != "" || !strings.Contains(r.Page.Text, "Install") || len(r.Search.Results) == 0 {
			t.Errorf("with a token: %+v", r)
		}
	}
}
