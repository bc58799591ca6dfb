package rest

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
)

//go:embed operations
var operationFiles embed.FS

// operation is a parsed and validated REST operation document.
type operation struct {
	Name string
	// Source is the operation followed by the fragments it uses: what is
	// sent to the executor (which caches the parsed form by this text).
	Source string
	Def    *ast.OperationDefinition
	// Variables by name.
	Variables map[string]*ast.VariableDefinition
}

var fragmentSpread = regexp.MustCompile(`\.\.\.\s*([_A-Za-z][_0-9A-Za-z]*)`)

// loadOperations reads every operation document and validates it against the
// schema, so a document that drifted from the schema stops the server at start-up.
func loadOperations(schema *ast.Schema) (map[string]*operation, error) {
	fragments := map[string]string{}
	entries, err := fs.ReadDir(operationFiles, "operations/fragments")
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		b, err := operationFiles.ReadFile("operations/fragments/" + e.Name())
		if err != nil {
			return nil, err
		}
		fragments[strings.TrimSuffix(e.Name(), ".graphql")] = string(b)
	}
	entries, err = fs.ReadDir(operationFiles, "operations")
	if err != nil {
		return nil, err
	}
	ops := map[string]*operation{}
	for _, e := range entries {
		if e.IsDir() || path.Ext(e.Name()) != ".graphql" {
			continue
		}
		name := strings.TrimSuffix(e.Name(), ".graphql")
		b, err := operationFiles.ReadFile("operations/" + e.Name())
		if err != nil {
			return nil, err
		}
		source, err := withFragments(string(b), fragments)
		if err != nil {
			return nil, fmt.Errorf("rest: operation %s: %w", name, err)
		}
		doc, gerr := gqlparser.LoadQueryWithRules(schema, source, nil)
		if gerr != nil {
			return nil, fmt.Errorf("rest: operation %s: %w", name, gerr)
		}
		def := doc.Operations.ForName(name)
		if def == nil || len(doc.Operations) != 1 {
			return nil, fmt.Errorf("rest: %s.graphql must hold exactly one operation, named %s", name, name)
		}
		op := &operation{Name: name, Source: source, Def: def, Variables: map[string]*ast.VariableDefinition{}}
		for _, v := range def.VariableDefinitions {
			op.Variables[v.Variable] = v
		}
		ops[name] = op
	}
	return ops, nil
}

// withFragments appends the fragments src uses, transitively.
func withFragments(src string, fragments map[string]string) (string, error) {
	var used []string
	var visit func(s string) error
	visit = func(s string) error {
		for _, m := range fragmentSpread.FindAllStringSubmatch(s, -1) {
			name := m[1]
			if name == "on" || slices.Contains(used, name) { // "... on Type" is an inline fragment

				continue
			}
			frag, ok := fragments[name]
			if !ok {
				return fmt.Errorf("unknown fragment %s (expected operations/fragments/%s.graphql)", name, name)
			}
			used = append(used, name)
			if err := visit(frag); err != nil {
				return err
			}
		}
		return nil
	}
	if err := visit(src); err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString(src)
	for _, name := range used {
		b.WriteString("\n")
		b.WriteString(fragments[name])
	}
	return b.String(), nil
}
