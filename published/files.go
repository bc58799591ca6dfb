package published

import (
	"net/http"

	"github.com/docsapi/docsapi/rest"
)

// serveFile serves the file of digest sha256 of a revision the visitor of
// r's context reads (graph.Resolver.PublishedFile decides), at an address
// made of its content: cached for good.
func (rd *Reader) serveFile(w http.ResponseWriter, r *http.Request, sha256 string) {
	doc, err := rd.res.PublishedFile(r.Context(), sha256)
	if err != nil {
		rd.refuse(w, r, address{}, err)
		return
	}
	rest.WriteDocument(w, r, doc)
}
