package published

import (
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"path"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/docsapi/docsapi/graph"
)

// The reader's GraphQL operations, one document each, named by its file:
// what a page of a published site shows is exactly what these select.
//
//go:embed operations/*.graphql
var operationFiles embed.FS

// operation is one of the reader's documents, validated against the
// schema at start-up.
type operation struct {
	source string
}

type operations map[string]*operation

// loadOperations reads and validates the reader's documents.
func loadOperations(schema *ast.Schema) (operations, error) {
	entries, err := fs.ReadDir(operationFiles, "operations")
	if err != nil {
		return nil, err
	}
	ops := operations{}
	for _, e := range entries {
		name := strings.TrimSuffix(e.Name(), path.Ext(e.Name()))
		b, err := operationFiles.ReadFile("operations/" + e.Name())
		if err != nil {
			return nil, err
		}
		doc, gerr := gqlparser.LoadQueryWithRules(schema, string(b), nil)
		if gerr != nil {
			return nil, fmt.Errorf("published: operation %s: %w", name, gerr)
		}
		if len(doc.Operations) != 1 || doc.Operations[0].Name != name {
			return nil, fmt.Errorf("published: %s.graphql must hold exactly one operation, named %s", name, name)
		}
		ops[name] = &operation{source: string(b)}
	}
	return ops, nil
}

// operationError is an operation's first error, with the status the API
// would answer it with.
type operationError struct {
	status  int
	message string
}

func (e *operationError) Error() string { return e.message }

// notFound tells whether err is an operation's not found.
func notFound(err error) bool {
	oe, ok := err.(*operationError)
	return ok && oe.status == http.StatusNotFound
}

// decodeResponse decodes resp's data into out, or answers its first error.
func decodeResponse(resp *graphql.Response, out any) error {
	if len(resp.Errors) > 0 {
		e := resp.Errors[0]
		return &operationError{status: graph.ErrorStatus(e), message: e.Message}
	}
	if err := json.Unmarshal(resp.Data, out); err != nil {
		return fmt.Errorf("published: decoding an operation's data: %w", err)
	}
	return nil
}
