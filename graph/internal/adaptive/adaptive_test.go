package adaptive

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func parse(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

const visitorSchema = `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","additionalProperties":false,"properties":{
	"isBetaUser":{"type":"boolean","description":"Whether the visitor is a Beta user."},
	"language":{"type":"string","enum":["en","fr"],"description":"Language"},
	"account":{"type":"object","description":"Account","additionalProperties":false,"properties":{"isAdmin":{"type":"boolean","description":"Account admin"}}},
	"unsigned":{"type":"object","description":"Unsigned claims of the site visitor.","additionalProperties":false,"properties":{
		"wantsDarkMode":{"type":"boolean","description":"Prefers dark mode"},"beta-tester":{"type":"boolean","description":"Tests betas"}}}}}`

func TestCheckVisitorSchema(t *testing.T) {
	if err := CheckVisitorSchema(parse(t, visitorSchema)); err != nil {
		t.Errorf("valid schema rejected: %v", err)
	}
	for schema, want := range map[string]string{
		`{"type":5}`: "is not a valid JSON Schema (draft-07): ",
		`{"type":"array","properties":{},"additionalProperties":false}`:                        "is not a visitor schema: at /type: ",
		`{"type":"object","properties":{}}`:                                                    "is not a visitor schema: at /: ",
		`{"type":"object","properties":{"x":{"type":"boolean"}},"additionalProperties":false}`: "is not a visitor schema: at /properties/x: ",
		`{"$ref":"https://example.test/s.json"}`:                                               "is not a valid JSON Schema (draft-07): ",
	} {
		err := CheckVisitorSchema(parse(t, schema))
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s: error %v, want one starting %q", schema, err, want)
		}
	}
}

func TestTemplateConditions(t *testing.T) {
	got := TemplateConditions(parse(t, visitorSchema))
	want := `[{Account admin visitor.claims.account.isAdmin == true} ` +
		`{Whether the visitor is a Beta user. visitor.claims.isBetaUser == true} ` +
		`{Tests betas visitor.claims.unsigned["beta-tester"] == true} ` +
		`{Prefers dark mode visitor.claims.unsigned.wantsDarkMode == true}]`
	if fmt.Sprint(got) != want {
		t.Errorf("conditions\n%v\nwant\n%v", got, want)
	}
	if got := TemplateConditions(parse(t, `{"type":"object","properties":{}}`)); got != nil {
		t.Errorf("conditions of a schema without claims: %v", got)
	}
}

func TestUnsignedClaims(t *testing.T) {
	schema := map[string]any{"type": "object", "properties": map[string]any{
		"isBetaUser": map[string]any{"type": "boolean"},
		"unsigned": map[string]any{"type": "object", "properties": map[string]any{
			"beta":     map[string]any{"type": "boolean"},
			"language": map[string]any{"type": "string"},
			"seats":    map[string]any{"type": "number"},
		}},
	}}
	got := UnsignedClaims(schema, map[string]any{
		"beta":       "true",
		"language":   "fr",
		"seats":      "12",
		"isBetaUser": true,                     // signed claims are not taken unsigned
		"undeclared": "x",                      // not in the schema
		"extra":      map[string]any{"a": "b"}, // not in the schema
	})
	want := map[string]any{"beta": true, "language": "fr", "seats": float64(12)}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("UnsignedClaims = %v, want %v", got, want)
	}
	for name, value := range map[string]any{"beta": "yes", "seats": "NaN", "language": strings.Repeat("x", 1025)} {
		if got := UnsignedClaims(schema, map[string]any{name: value}); len(got) != 0 {
			t.Errorf("%s=%v kept: %v", name, value, got)
		}
	}
}
