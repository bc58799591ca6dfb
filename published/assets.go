package published

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"html/template"
	"net/http"
	"sync"
	"time"

	"github.com/docsapi/docsapi/published/render"
)

//go:embed static templates
var files embed.FS

// parseTemplates parses the page templates.
func parseTemplates() (*template.Template, error) {
	return template.New("").Funcs(template.FuncMap{
		"date": func(t time.Time) string { return t.UTC().Format("January 2, 2006") },
		"iso":  func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
	}).ParseFS(files, "templates/*.html")
}

// assets are the reader's stylesheet, script and icon, each named by its
// content's digest, so that a page names the version it was made with and
// browsers keep them for good.
type assets struct {
	// byName are the assets by name, each served as a page is: gzipped
	// when the client takes it, with an ETag.
	byName              map[string]*rendered
	style, script, icon string
}

// newAssets returns the assets, built at the first call: they are the
// same for every reader of the process, and compressing them at the best
// level is most of what starting a reader costs.
var newAssets = sync.OnceValue(func() assets {
	a := assets{byName: map[string]*rendered{}}
	read := func(name string) []byte {
		b, err := files.ReadFile("static/" + name)
		if err != nil {
			panic(err) // embedded: present at build
		}
		return b
	}
	a.style = a.add("reader", ".css", "text/css; charset=utf-8", append(read("reader.css"), render.CSS...))
	a.script = a.add("reader", ".js", "text/javascript; charset=utf-8", append(read("reader.js"), render.JS...))
	a.icon = a.add("icon", ".svg", "image/svg+xml", read("icon.svg"))
	return a
})

func (a assets) add(name, ext, contentType string, body []byte) string {
	sum := sha256.Sum256(body)
	full := name + "." + hex.EncodeToString(sum[:8]) + ext
	a.byName[full] = newRendered(http.StatusOK, http.Header{
		"Content-Type":           {contentType},
		"Cache-Control":          {"public, max-age=31536000, immutable"},
		"X-Content-Type-Options": {"nosniff"},
	}, body)
	return full
}

// serve writes asset name, kept by browsers for good: its name changes with
// its content.
func (a assets) serve(w http.ResponseWriter, r *http.Request, name string) {
	as, ok := a.byName[name]
	if !ok {
		http.NotFound(w, r)
		return
	}
	as.write(w, r)
}
