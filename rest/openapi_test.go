package rest_test

import (
	"bytes"
	"encoding/json"
	"sort"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/docsapi/docsapi/graph"
	"github.com/docsapi/docsapi/rest"
)

// The OpenAPI document as rest.OpenAPI builds it, without a server; how the
// server serves it and whether its answers match it is
// wholeserver/openapi_test.go's.

type jsonObj = map[string]any

func asList(v any) []any { l, _ := v.([]any); return l }

// Every schema in the document is a valid JSON Schema 2020-12 (the OpenAPI
// specification's own schema does not look into Schema Objects) whose $refs
// resolve.
func TestOpenAPISchemasAreJSONSchema(t *testing.T) {
	t.Parallel()
	schema := graph.Schema()
	raw, err := rest.OpenAPI(schema, "http://localhost")
	if err != nil {
		t.Fatal(err)
	}
	raw = bytes.ReplaceAll(raw, []byte(`"#/components/schemas/`), []byte(`"#/$defs/`))
	var doc jsonObj
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	defs := doc["components"].(jsonObj)["schemas"].(jsonObj)
	for p, item := range doc["paths"].(jsonObj) {
		for method, op := range item.(jsonObj) {
			op := op.(jsonObj)
			at := method + " " + p
			for _, param := range asList(op["parameters"]) {
				defs[at+" "+param.(jsonObj)["name"].(string)] = param.(jsonObj)["schema"]
			}
			if rb, ok := op["requestBody"].(jsonObj); ok {
				defs[at+" body"] = rb["content"].(jsonObj)["application/json"].(jsonObj)["schema"]
			}
			for code, resp := range op["responses"].(jsonObj) {
				if c, ok := resp.(jsonObj)["content"].(jsonObj); ok {
					defs[at+" "+code] = c["application/json"].(jsonObj)["schema"]
				}
			}
		}
	}
	root := jsonObj{"$schema": "https://json-schema.org/draft/2020-12/schema", "$defs": defs}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("openapi.json", root); err != nil {
		t.Fatal(err)
	}
	names := make([]string, 0, len(defs))
	for name := range defs {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		ptr := strings.ReplaceAll(strings.ReplaceAll(name, "~", "~0"), "/", "~1")
		if _, err := c.Compile("openapi.json#/$defs/" + ptr); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}
