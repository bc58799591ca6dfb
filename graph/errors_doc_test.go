package graph

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql/errcode"
)

// Every error code a GraphQL client can meet is in the API guide's list of
// codes (docs/api-guide.md, Errors), with its status: those the server's Go code raises (graph.Error's
// codes, codes set on errors by the engine, the transports and the server),
// and those of gqlgen's it presents (protocolStatus).
func TestErrorCodesDocumented(t *testing.T) {
	guide, err := os.ReadFile(filepath.Join("..", "docs", "api-guide.md"))
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]int{}
	for _, m := range regexp.MustCompile("(?m)^\\| `([A-Z_]+)` \\| (\\d{3}) \\|").FindAllSubmatch(guide, -1) {
		documented[string(m[1])], _ = strconv.Atoi(string(m[2]))
	}

	// Codes as the code writes them, with their status where it is beside.
	raised := map[string]int{}
	patterns := []*regexp.Regexp{
		regexp.MustCompile(`Status: http\.(\w+), Code: "([A-Z_]+)"`),
		regexp.MustCompile(`"code": "([A-Z_]+)", "status": http\.(\w+)`),
		regexp.MustCompile(`WriteHTTPError\(w, r, http\.(\w+), "([A-Z_]+)"`),
		regexp.MustCompile(`(code\w+) = "([A-Z_]+)"`),
		regexp.MustCompile(`setCode\(\w+, "([A-Z_]+)", http\.(\w+)\)`),
		regexp.MustCompile(`"code": "([A-Z_]+)"`),
		regexp.MustCompile(`code, status = "([A-Z_]+)", http\.(\w+)`),
	}
	isCode := regexp.MustCompile(`^[A-Z_]+$`)
	statuses := map[string]int{
		"StatusBadRequest": 400, "StatusUnauthorized": 401, "StatusForbidden": 403, "StatusNotFound": 404,
		"StatusMethodNotAllowed": 405, "StatusConflict": 409, "StatusPreconditionFailed": 412,
		"StatusRequestEntityTooLarge": 413, "StatusUnprocessableEntity": 422, "StatusTooManyRequests": 429,
		"StatusInternalServerError": 500, "StatusServiceUnavailable": 503,
	}
	for _, dir := range []string{".", "engine", filepath.Join("..", "cmd", "docsapi", "server")} {
		files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, re := range patterns {
				for _, m := range re.FindAllStringSubmatch(string(src), -1) {
					code, status := "", 0
					for _, g := range m[1:] {
						if isCode.MatchString(g) {
							code = g
						} else if strings.HasPrefix(g, "Status") {
							if status = statuses[g]; status == 0 {
								t.Errorf("http.%s: add it to the test's statuses", g)
							}
						}
					}
					if _, seen := raised[code]; !seen || status != 0 {
						raised[code] = status
					}
				}
			}
		}
	}
	for code, status := range protocolStatus {
		raised[code] = status
	}
	for _, code := range []string{errcode.ParseFailed, errcode.ValidationFailed, "UNAUTHENTICATED", "TIMEOUT", "UNAVAILABLE"} {
		if _, ok := raised[code]; !ok {
			t.Errorf("the scan of the sources missed %s: its patterns are out of date", code)
		}
	}
	for code, status := range raised {
		doc, ok := documented[code]
		switch {
		case !ok:
			t.Errorf("%s is not in docs/api-guide.md's list of codes", code)
		case status != 0 && doc != status:
			t.Errorf("%s: docs/api-guide.md says %d, the code %d", code, doc, status)
		}
	}
}
