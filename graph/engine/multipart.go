package engine

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/99designs/gqlgen/graphql"
)

// The form of a GraphQL multipart request (an upload) is checked here
// before gqlgen's transport reads it: gqlgen decodes the operations and
// map fields with decoders that take data after the value (a request with
// more than its client meant), and places each file at its map path with
// type assertions and indexes it does not check (a path below a string, or
// past the end of a list, panics). The check reads the two fields through
// DecodeJSON and refuses a map whose paths do not each name a null
// placeholder of the operations' variables, then hands gqlgen the body as
// it was.

const (
	// multipartFormRoom is what a multipart request may carry besides its
	// files, and the most each of its operations and map fields may hold.
	multipartFormRoom = 1 << 20
	// MaxUploadFiles bounds the paths a multipart request's map may name
	// (and so its files): uploadFile takes one, and gqlgen holds a file
	// handle open per path until the request ends.
	MaxUploadFiles = 10
)

// formError is a multipart form refused: its status and message.
type formError struct {
	status  int
	message string
}

func (e *formError) Error() string { return e.message }

func badForm(format string, args ...any) *formError {
	return &formError{status: http.StatusBadRequest, message: fmt.Sprintf(format, args...)}
}

// checkMultipartForm checks the operations and map fields of r's
// multipart form, and leaves r.Body as it found it (what it read is read
// again first).
func checkMultipartForm(r *http.Request) *formError {
	_, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || params["boundary"] == "" {
		return badForm("the Content-Type of a multipart request must name its boundary (multipart/form-data; boundary=...)")
	}
	var read bytes.Buffer
	body := r.Body
	defer func() {
		r.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(read.Bytes()), body), body}
	}()
	form := multipart.NewReader(io.TeeReader(body, &read), params["boundary"])
	operations, ferr := formField(form, "operations", "first")
	if ferr != nil {
		return ferr
	}
	var request graphql.RawParams
	if err := DecodeJSON(operations, &request); err != nil {
		return badForm(`the operations field is not a JSON GraphQL request {"query": "...", "variables": {...}}: %v`, err)
	}
	rawMap, ferr := formField(form, "map", "second")
	if ferr != nil {
		return ferr
	}
	var files map[string][]string
	if err := DecodeJSON(rawMap, &files); err != nil || files == nil {
		return badForm(`the map field is not a JSON object of file fields to lists of paths {"0": ["variables.file"]}`)
	}
	named := map[string]bool{}
	for field, paths := range files {
		if len(paths) == 0 {
			return badForm("the map names no path for file field %q", field)
		}
		for _, path := range paths {
			if named[path] {
				return badForm("the map names path %q twice", path)
			}
			if named[path] = true; len(named) > MaxUploadFiles {
				return badForm("the map names more than %d paths", MaxUploadFiles)
			}
			if err := placeholder(request.Variables, path); err != "" {
				return badForm("the map's path %q %s", path, err)
			}
		}
	}
	return nil
}

// formField reads the next part of form, which must be the field name
// (which: the part's place, for the message) of at most multipartFormRoom
// bytes of UTF-8 (decoding would replace other bytes with U+FFFD,
// textCheck).
func formField(form *multipart.Reader, name, which string) ([]byte, *formError) {
	part, err := form.NextPart()
	if err != nil {
		if tooLarge := (*http.MaxBytesError)(nil); errors.As(err, &tooLarge) {
			return nil, &formError{http.StatusRequestEntityTooLarge, "the request body is too large"}
		}
		return nil, badForm("the multipart form is malformed: %v", err)
	}
	if part.FormName() != name || part.FileName() != "" {
		return nil, badForm("the %s part of the form must be the %s field (the GraphQL multipart request specification)", which, name)
	}
	value, err := io.ReadAll(io.LimitReader(part, multipartFormRoom+1))
	switch tooLarge := (*http.MaxBytesError)(nil); {
	case errors.As(err, &tooLarge) || len(value) > multipartFormRoom:
		return nil, &formError{http.StatusRequestEntityTooLarge, fmt.Sprintf("the %s field is larger than %d bytes", name, multipartFormRoom)}
	case err != nil:
		return nil, badForm("the multipart form is malformed: %v", err)
	case !utf8.Valid(value):
		return nil, badForm("the %s field is not valid UTF-8", name)
	}
	return value, nil
}

// placeholder tells what is wrong with path as the place of a file in
// variables ("" if nothing): it must be "variables." and then the members
// and list indexes of a null. Segments are read as gqlgen's
// RawParams.AddUpload reads them: a number indexes a list, anything else
// names a member of an object.
func placeholder(variables map[string]any, path string) string {
	segments := strings.Split(path, ".")
	if segments[0] != "variables" || len(segments) < 2 {
		return `does not start with "variables."`
	}
	var at any = variables
	for _, segment := range segments[1:] {
		if index, err := strconv.Atoi(segment); err == nil {
			list, ok := at.([]any)
			if !ok || index < 0 || index >= len(list) {
				return "indexes past a list, or something that is not one"
			}
			at = list[index]
			continue
		}
		object, ok := at.(map[string]any)
		if !ok {
			return "names a member of something that is not an object"
		}
		if at, ok = object[segment]; !ok {
			return "names a variable or member the operations do not have"
		}
	}
	if at != nil {
		return "does not name a null (the placeholder of a file) in the operations' variables"
	}
	return ""
}
