package server

import (
	"context"
	"log/slog"
	"net/http"
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
			rest.WriteDocument(w, r, doc)
		})))
	}
}
