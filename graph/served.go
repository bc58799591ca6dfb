package graph

import (
	"io"
	"net/http"
	"time"
)

// Served is a document the server answers at an address of its own, outside
// GraphQL and REST: a file or a PDF at a signed address, an OpenAPI
// document, an integration's asset. The resolvers decide whether it exists
// and what it is (Download, PDF, RawOpenAPI, PublishedOpenAPI,
// IntegrationAsset); the HTTP server writes it.
type Served struct {
	ContentType string
	// Size is the body's length when known (0: not known).
	Size int64
	// Filename, when set, is offered with Content-Disposition: inline.
	Filename string
	// ETag and Modified let a client that has the document get 304 (with a
	// body that can seek).
	ETag     string
	Modified time.Time
	// Cache is the Cache-Control.
	Cache string
	// Untrusted content (what users uploaded) is sandboxed and never
	// sniffed: uploaded HTML or SVG must not run as this server's pages.
	Untrusted bool
	// Body is the document; the server closes it when it is an io.Closer.
	Body io.Reader
}

// errNoDocument is what an address that names no document answers.
var errNoDocument = &Error{Status: http.StatusNotFound, Code: "NOT_FOUND", Message: "not found"}
