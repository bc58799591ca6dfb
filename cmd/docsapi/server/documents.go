package server

import (
	"context"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/docsapi/docsapi/graph"
	"github.com/docsapi/docsapi/rest"
)

// Documents at the server's own addresses, which need no token: files and
// PDFs at signed addresses, OpenAPI documents (signed, or published), and
// integrations' assets. The resolvers decide what an address names
// (graph.Served); the handlers here only write it.
func mountDocuments(mux *http.ServeMux, res *graph.Resolver, log *slog.Logger) {
	for _, d := range []struct {
		path  string
		serve func(ctx context.Context, rest string, r *http.Request) (*graph.Served, error)
	}{
		{graph.DownloadPath, func(ctx context.Context, path string, r *http.Request) (*graph.Served, error) {
			revisionID, fileID, _ := strings.Cut(path, "/")
			return res.Download(ctx, revisionID, fileID, r.URL.Query())
		}},
		{graph.PDFPath, func(ctx context.Context, revisionID string, r *http.Request) (*graph.Served, error) {
			return res.PDF(ctx, revisionID, r.URL.Query())
		}},
		{graph.RawOpenAPIPath, func(ctx context.Context, versionID string, r *http.Request) (*graph.Served, error) {
			return res.RawOpenAPI(ctx, versionID, r.URL.Query())
		}},
		{graph.PublishedOpenAPIPath, func(ctx context.Context, specID string, _ *http.Request) (*graph.Served, error) {
			return res.PublishedOpenAPI(ctx, specID)
		}},
		{graph.IntegrationAssetPath, func(ctx context.Context, path string, _ *http.Request) (*graph.Served, error) {
			name, digest, _ := strings.Cut(path, "/")
			return res.IntegrationAsset(ctx, name, digest)
		}},
	} {
		pattern := "GET " + d.path
		mux.Handle(pattern, labelled(pattern, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			doc, err := d.serve(r.Context(), strings.TrimPrefix(r.URL.Path, d.path), r)
			if err != nil {
				rest.WriteGraphError(w, r, log, err)
				return
			}
			writeDocument(w, r, doc)
		})))
	}
}

// writeDocument writes doc: its headers, then its body, through
// http.ServeContent when it can seek and has an ETag (conditional requests
// get 304).
func writeDocument(w http.ResponseWriter, r *http.Request, doc *graph.Served) {
	if c, ok := doc.Body.(io.Closer); ok {
		defer c.Close()
	}
	h := w.Header()
	h.Set("Content-Type", doc.ContentType)
	if doc.Filename != "" {
		h.Set("Content-Disposition", mime.FormatMediaType("inline", map[string]string{"filename": doc.Filename}))
	}
	if doc.Untrusted {
		// Uploaded HTML or SVG must not run as this server's pages.
		h.Set("Content-Security-Policy", "sandbox")
	}
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", doc.Cache)
	if seeker, ok := doc.Body.(io.ReadSeeker); ok && doc.ETag != "" {
		h.Set("ETag", doc.ETag)
		http.ServeContent(w, r, "", doc.Modified, seeker)
		return
	}
	if doc.Size > 0 {
		h.Set("Content-Length", strconv.FormatInt(doc.Size, 10))
	}
	_, _ = io.Copy(w, doc.Body)
}
