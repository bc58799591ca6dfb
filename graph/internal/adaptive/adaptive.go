// Package adaptive checks a site's visitor schema, which describes the
// claims adaptive content receives about a visitor, and derives template
// conditions from it. A visitor schema must be a valid JSON Schema
// (draft-07) and have the shape GitBook's API describes: an object of
// boolean, string, number, array or object claims, with an optional
// "unsigned" object, and no other properties. Both checks run with a real
// JSON Schema implementation (santhosh-tekuri/jsonschema): the shape is
// itself a JSON Schema, adaptive_schema.json, the SiteAdaptiveJSONSchema
// component of GitBook's public API description.
package adaptive

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

//go:embed adaptive_schema.json
var shapeJSON []byte

// shape is adaptive_schema.json compiled: the shape of every visitor schema.
var shape = func() *jsonschema.Schema {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(shapeJSON))
	if err != nil {
		panic(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("adaptive_schema.json", doc); err != nil {
		panic(err)
	}
	return c.MustCompile("adaptive_schema.json")
}()

// CheckVisitorSchema tells why schema is not a visitor schema, or nil when
// it is. The error's message says what is wrong ("is not a visitor schema:
// at /properties/x: ..."), without naming the schema.
func CheckVisitorSchema(schema map[string]any) error {
	raw, err := json.Marshal(schema)
	if err != nil {
		return errors.New("is not JSON")
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return errors.New("is not JSON")
	}
	// A valid draft-07 schema first: compiling validates it against the
	// draft-07 meta-schema.
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft7)
	// No remote references: a visitor schema is self-contained, and fetching
	// URLs a client names would be a server-side request forgery.
	c.UseLoader(noLoader{})
	if err := c.AddResource("visitor-schema.json", doc); err != nil {
		return fmt.Errorf("is not a valid JSON Schema: %v", err)
	}
	if _, err := c.Compile("visitor-schema.json"); err != nil {
		return fmt.Errorf("is not a valid JSON Schema (draft-07): %s", schemaError(err))
	}
	if err := shape.Validate(doc); err != nil {
		return fmt.Errorf("is not a visitor schema: %s", schemaError(err))
	}
	return nil
}

type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("references to %s are not allowed", url)
}

// schemaError is the most specific message of a validation error, with where
// it applies.
func schemaError(err error) string {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return err.Error()
	}
	for len(ve.Causes) > 0 {
		ve = ve.Causes[0]
	}
	where := "/" + strings.Join(ve.InstanceLocation, "/")
	return fmt.Sprintf("at %s: %s", where, ve.ErrorKind.LocalizedString(english))
}

var english = message.NewPrinter(language.English)

var jsIdentifier = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$]*$`)

// TemplateCondition is a condition suggested for a visitor schema.
type TemplateCondition struct {
	Description string
	Condition   string
}

// TemplateConditions suggests one condition per boolean claim of a visitor
// schema, such as `visitor.claims.isBetaUser == true`, in the order of their
// paths.
func TemplateConditions(schema map[string]any) []TemplateCondition {
	var out []TemplateCondition
	var walk func(props map[string]any, path string)
	walk = func(props map[string]any, path string) {
		names := make([]string, 0, len(props))
		for name := range props {
			names = append(names, name)
		}
		slices.Sort(names)
		for _, name := range names {
			prop, _ := props[name].(map[string]any)
			p := path + "." + name
			if !jsIdentifier.MatchString(name) {
				p = path + "[" + mustJSON(name) + "]"
			}
			switch prop["type"] {
			case "boolean":
				desc, _ := prop["description"].(string)
				if desc == "" {
					desc = "Visitors whose claim " + name + " is true"
				}
				out = append(out, TemplateCondition{Description: desc, Condition: p + " == true"})
			case "object":
				if nested, ok := prop["properties"].(map[string]any); ok {
					walk(nested, p)
				}
			}
		}
	}
	if props, ok := schema["properties"].(map[string]any); ok {
		walk(props, "visitor.claims")
	}
	return out
}

func mustJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// maxUnsignedValue bounds an unsigned claim's string, in bytes: a visitor
// writes it, and conditions run over it.
const maxUnsignedValue = 1024

// UnsignedClaims keeps of claims, which a visitor offers unsigned (a
// cookie's JSON, query parameters as strings), those the visitor schema
// declares under "unsigned", as the type it declares: a boolean from true,
// false, "true" or "false"; a number from a number or its text; a string
// of at most maxUnsignedValue bytes. Anything else is left out: nothing a
// visitor sends unsigned reaches conditions unless the site asked for it.
func UnsignedClaims(schema map[string]any, claims map[string]any) map[string]any {
	out := map[string]any{}
	props, _ := schema["properties"].(map[string]any)
	unsigned, _ := props["unsigned"].(map[string]any)
	declared, _ := unsigned["properties"].(map[string]any)
	for name, value := range claims {
		prop, ok := declared[name].(map[string]any)
		if !ok {
			continue
		}
		if v, ok := claimOfType(prop["type"], value); ok {
			out[name] = v
		}
	}
	return out
}

// claimOfType is value as a claim of JSON Schema type typ, if it is one.
func claimOfType(typ, value any) (any, bool) {
	switch typ {
	case "boolean":
		switch v := value.(type) {
		case bool:
			return v, true
		case string:
			b, err := strconv.ParseBool(v)
			return b, err == nil && (v == "true" || v == "false")
		}
	case "number", "integer":
		switch v := value.(type) {
		case float64:
			return v, !math.IsInf(v, 0) && !math.IsNaN(v)
		case string:
			f, err := strconv.ParseFloat(v, 64)
			return f, err == nil && len(v) <= 32 && !math.IsInf(f, 0) && !math.IsNaN(f)
		}
	case "string":
		if v, ok := value.(string); ok && len(v) <= maxUnsignedValue {
			return v, true
		}
	}
	return nil, false
}
