package rest

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"strconv"

	"github.com/docsapi/docsapi/graph"
	"github.com/docsapi/docsapi/graph/engine"
)

// The one way every HTTP edge of the server answers in JSON outside GraphQL:
// the REST adapter, and the server's own handlers (downloads, SAML, admin,
// health). Errors have the reference's shape, {"error": {"code", "message"}}.
// Documents the resolvers decide on (files, PDFs, a published site's
// files) are written by WriteDocument, for the server and the reader alike.

// WriteJSON writes v with status. HTML escaping is off: the API returns
// data, not markup, and escaped "<" would only confuse clients comparing
// strings.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		buf.Reset()
		buf.WriteString(`{"error":{"code":500,"message":"internal error"}}` + "\n")
		status = http.StatusInternalServerError
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// WriteError writes the reference's error body with status.
func WriteError(w http.ResponseWriter, status int, message string) {
	WriteJSON(w, status, map[string]any{"error": map[string]any{"code": status, "message": message}})
}

// WriteGraphError writes an error a graph function returned outside GraphQL
// execution, as the error presenter maps it: a graph.Error with its status
// and message, the database failing the request (a statement cut by the
// timeout, the database out of reach: graph.DatabaseError) as 503 with
// Retry-After, and anything else as a logged internal error.
func WriteGraphError(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) {
	var e *graph.Error
	switch {
	case errors.As(err, &e):
		writeGraphError(w, e)
	case graph.DatabaseError(err) != nil:
		e = graph.DatabaseError(err)
		log.WarnContext(r.Context(), "the database failed the request", "code", e.Code, "err", err)
		writeGraphError(w, e)
	default:
		log.ErrorContext(r.Context(), "request failed", "err", err)
		WriteError(w, http.StatusInternalServerError, "internal error")
	}
}

// writeGraphError writes e with its status; a 503 (graph.ErrTimeout,
// graph.ErrUnavailable) says when to try again.
func writeGraphError(w http.ResponseWriter, e *graph.Error) {
	if e.Status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", strconv.Itoa(graph.RetryAfterSeconds))
	}
	WriteError(w, e.Status, e.Message)
}

// ReadObject reads a request's JSON object body as the REST adapter reads
// one (size limit, strict JSON, UTF-8, an empty body is {}, no text the
// database cannot store); on failure it answers the request itself (400 or
// 413) and returns false.
func ReadObject(w http.ResponseWriter, r *http.Request) (map[string]any, bool) {
	body, rerr := decodeBody(r)
	if rerr != nil {
		WriteError(w, rerr.status, rerr.message)
		return nil, false
	}
	if at, problem := engine.BadText(body, nil); problem != "" {
		WriteError(w, http.StatusBadRequest, fieldPath(at)+": "+problem)
		return nil, false
	}
	return body, true
}

// WriteDocument writes doc, a document a resolver decided on (graph.Served): its headers, then its body, through
// http.ServeContent when it can seek and has an ETag (conditional requests
// get 304).
func WriteDocument(w http.ResponseWriter, r *http.Request, doc *graph.Served) {
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
