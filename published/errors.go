package published

import (
	"bytes"
	"net/http"
)

// Pages of the reader's answers that are not a site's page: the same not
// found for every address that leads to nothing a visitor may read.

type statusView struct {
	Title, Message string
	StyleURL       string
}

// notFound answers 404 with the reader's one not-found page: it says
// nothing of what the address might have named.
func (rd *Reader) notFound(w http.ResponseWriter, r *http.Request) {
	rd.writeStatusPage(w, r, http.StatusNotFound, "Page not found", "There is no published page at this address.")
}

// failed answers an error the visitor is not the cause of: logged, and a
// 503 when the database is unavailable or slow, else a 500.
func (rd *Reader) failed(w http.ResponseWriter, r *http.Request, err error) {
	status := http.StatusInternalServerError
	if oe, ok := err.(*operationError); ok {
		switch {
		case oe.status == http.StatusNotFound:
			rd.notFound(w, r)
			return
		case oe.status == http.StatusServiceUnavailable || oe.status == http.StatusGatewayTimeout:
			status = oe.status
		}
	}
	if status == http.StatusInternalServerError {
		rd.log.ErrorContext(r.Context(), "published: serving a page failed", "path", r.URL.Path, "err", err)
	}
	rd.writeStatusPage(w, r, status, "Something went wrong", "This page cannot be shown right now. Try again in a moment.")
}

// writeStatusPage writes a small page of its own with status.
func (rd *Reader) writeStatusPage(w http.ResponseWriter, r *http.Request, status int, title, message string) {
	var b bytes.Buffer
	_ = rd.pages.ExecuteTemplate(&b, "status.html", statusView{Title: title, Message: message})
	h := w.Header()
	setPageHeaders(h, "")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Robots-Tag", "noindex")
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		_, _ = w.Write(b.Bytes())
	}
}
