package main

import (
	"fmt"
	"io"

	"github.com/docsapi/docsapi/graph"
	"github.com/docsapi/docsapi/rest"
)

// printRoutes writes the REST route table: as the markdown of
// docs/api-coverage.md with markdown, else one line per route.
func printRoutes(w io.Writer, markdown bool) error {
	schema := graph.Schema()
	rows, err := rest.Coverage(schema)
	if err != nil {
		return err
	}
	if markdown {
		_, err := io.WriteString(w, rest.CoverageMarkdown(rows))
		return err
	}
	for _, r := range rows {
		if r.Implemented {
			fmt.Fprintf(w, "%-6s %-90s %s\n", r.Method, r.Path, r.GraphQL)
		}
	}
	return nil
}

// printOpenAPI writes the OpenAPI document the server serves at
// /v1/openapi.json, for publicURL, so it can be generated without a running
// server (client generators, API gateways).
func printOpenAPI(w io.Writer, publicURL string) error {
	schema := graph.Schema()
	doc, err := rest.OpenAPI(schema, publicURL)
	if err != nil {
		return err
	}
	_, err = w.Write(doc)
	return err
}
