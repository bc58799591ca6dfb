package rest

import (
	"testing"

	"github.com/docsapi/docsapi/graph"
)

// The reference is embedded as published, and each route whose operation
// takes an input has the reference's body schema of it, but the one route
// the reference does not have; what this server documents otherwise names
// such routes and their members.
func TestReferenceBodySchemas(t *testing.T) {
	bodies, err := bodySchemas()
	if err != nil {
		t.Fatal(err)
	}
	schema := graph.Schema()
	ops, err := loadOperations(schema)
	if err != nil {
		t.Fatal(err)
	}
	notInReference := map[string]bool{"createOrganization": true}
	withInput := map[string]bool{}
	for _, route := range Routes {
		_, input := ops[route.Operation].Variables["input"]
		withInput[route.Operation] = input
		switch _, has := bodies[route.Operation]; {
		case input && !has && !notInReference[route.Operation]:
			t.Errorf("%s %s: no reference body schema", route.Method, route.Path)
		case !input && has:
			t.Errorf("%s %s: a body schema, and no input", route.Method, route.Path)
		}
	}
	for op, members := range bodyExtensions {
		if !withInput[op] {
			t.Errorf("bodyExtensions: %s: no such route with a body", op)
			continue
		}
		input := schema.Types[ops[op].Variables["input"].Type.Name()]
		for name := range members {
			if input.Fields.ForName(name) == nil {
				t.Errorf("bodyExtensions: %s.%s: not a member of %s", op, name, input.Name)
			}
		}
	}
	for op := range bodyForms {
		if !withInput[op] {
			t.Errorf("bodyForms: %s: no such route with a body", op)
		}
	}
	for op := range bodyAliases {
		if !withInput[op] {
			t.Errorf("bodyAliases: %s: no such route with a body", op)
		}
	}
}
