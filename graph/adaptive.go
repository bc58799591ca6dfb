package graph

import (
	"github.com/docsapi/docsapi/graph/internal/adaptive"
	"github.com/docsapi/docsapi/graph/internal/condition"
	"github.com/docsapi/docsapi/graph/model"
)

// Adaptive content: a site's visitor schema (package adaptive) and the
// conditions on sections and site spaces (package condition), checked with
// their errors as bad requests naming the input field.

// checkVisitorSchema validates a submitted visitor schema.
func checkVisitorSchema(schema map[string]any) error {
	if err := adaptive.CheckVisitorSchema(schema); err != nil {
		return Invalid("jsonSchema", "%v", err)
	}
	return nil
}

// templateConditions suggests one condition per boolean claim of a visitor
// schema (nil for none).
func templateConditions(schema map[string]any) []*model.SiteAdaptiveTemplateCondition {
	var out []*model.SiteAdaptiveTemplateCondition
	for _, c := range adaptive.TemplateConditions(schema) {
		out = append(out, &model.SiteAdaptiveTemplateCondition{Description: c.Description, Condition: c.Condition})
	}
	return out
}

// checkCondition validates a visitor condition given as field.
func checkCondition(field, src string) error {
	if err := condition.Check(src); err != nil {
		return Invalid(field, "%v", err)
	}
	return nil
}
