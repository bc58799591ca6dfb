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
	"regexp"
	"slices"
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
