package rest

import (
	_ "embed"
	"fmt"
	"sort"
	"strings"

	"github.com/vektah/gqlparser/v2/ast"
)

//go:embed spec_operations.txt
var specOperations string

// CoverageRow is one operation of the API and where it stands.
type CoverageRow struct {
	Operation string
	Method    string
	Path      string
	// GraphQL is the root field the REST operation runs, such as
	// "Query.organization.agentInstructions"; empty when not implemented.
	GraphQL string
	// InSpec is false for reference operations beyond the specification's 143.
	InSpec      bool
	Implemented bool
}

// Coverage lists every operation of the specification, and every extra route
// served, with its GraphQL field and whether it is implemented.
func Coverage(schema *ast.Schema) ([]CoverageRow, error) {
	surface, err := surfaceOf(schema)
	if err != nil {
		return nil, err
	}
	ops := surface.ops
	served := map[string]Route{}
	for _, r := range Routes {
		served[r.Method+" "+r.Path] = r
	}
	var rows []CoverageRow
	seen := map[string]bool{}
	add := func(method, path, opID string, inSpec bool) {
		row := CoverageRow{Operation: opID, Method: method, Path: path, InSpec: inSpec}
		if r, ok := served[method+" "+path]; ok {
			row.Operation, row.Implemented = r.Operation, true
			row.GraphQL = graphQLField(ops[r.Operation], r.Result)
		}
		seen[method+" "+path] = true
		rows = append(rows, row)
	}
	for _, line := range strings.Split(specOperations, "\n") {
		f := strings.Fields(line)
		if len(f) != 3 || strings.HasPrefix(line, "#") {
			continue
		}
		add(f[0], f[1], f[2], true)
	}
	var extra []Route
	for _, r := range Routes {
		if !seen[r.Method+" "+r.Path] {
			extra = append(extra, r)
		}
	}
	sort.Slice(extra, func(i, j int) bool { return extra[i].Path+extra[i].Method < extra[j].Path+extra[j].Method })
	for _, r := range extra {
		add(r.Method, r.Path, r.Operation, false)
	}
	return rows, nil
}

// graphQLField names the root field of op, plus the result path below it.
func graphQLField(op *operation, result string) string {
	root := "Query"
	if op.Def.Operation == ast.Mutation {
		root = "Mutation"
	}
	field := op.Def.SelectionSet[0].(*ast.Field).Name
	if result != "" {
		if _, rest, ok := strings.Cut(result, "."); ok {
			field += "." + rest
		}
	}
	return root + "." + field
}

// CoverageMarkdown renders rows as docs/api-coverage.md.
func CoverageMarkdown(rows []CoverageRow) string {
	var b strings.Builder
	done, specDone, spec := 0, 0, 0
	for _, r := range rows {
		if r.Implemented {
			done++
		}
		if r.InSpec {
			spec++
			if r.Implemented {
				specDone++
			}
		}
	}
	b.WriteString("# API coverage\n\n")
	b.WriteString("Generated from the route table by `docsapi routes --markdown`; a test fails when it is stale.\n")
	b.WriteString("Every REST operation runs the GraphQL field named beside it.\n\n")
	fmt.Fprintf(&b, "Specification operations implemented: **%d of %d**. Routes served in all: %d.\n\n", specDone, spec, done)
	b.WriteString("| Operation | Method | REST path | GraphQL field | Implemented |\n|---|---|---|---|---|\n")
	for _, r := range rows {
		state := "no"
		if r.Implemented {
			state = "yes"
		}
		op := r.Operation
		if !r.InSpec {
			op += " (reference)"
		}
		gql := r.GraphQL
		if gql != "" {
			gql = "`" + gql + "`"
		}
		fmt.Fprintf(&b, "| %s | %s | `%s` | %s | %s |\n", op, r.Method, r.Path, gql, state)
	}
	b.WriteString(RefusedAlternativesMarkdown())
	return b.String()
}
