// Package model holds the GraphQL types that are not store models: scalars,
// computed objects (urls, permissions) and the list envelopes.
package model

import (
	"encoding/json"
	"io"
	"strconv"
	"time"

	"github.com/99designs/gqlgen/graphql"

	"github.com/docsapi/docsapi/store"
)

// DateTimeLayout is how timestamps are written: UTC with milliseconds, like the reference.
const DateTimeLayout = "2006-01-02T15:04:05.000Z07:00"

// MarshalDateTime writes t in UTC with millisecond precision.
func MarshalDateTime(t time.Time) graphql.Marshaler {
	return graphql.WriterFunc(func(w io.Writer) {
		_, _ = io.WriteString(w, strconv.Quote(t.UTC().Format(DateTimeLayout)))
	})
}

// UnmarshalDateTime accepts an RFC 3339 string.
func UnmarshalDateTime(v any) (time.Time, error) {
	s, ok := v.(string)
	if !ok {
		return time.Time{}, store.InvalidValue("DateTime must be an RFC 3339 string")
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, store.InvalidValue("DateTime must be an RFC 3339 string: %v", err)
	}
	return t, nil
}

// Document is a rich-text document kept as its JSON.
type Document json.RawMessage

// UnmarshalGQL checks the document's outline: {object: "document", data: {}, nodes: []}.
func (d *Document) UnmarshalGQL(v any) error {
	m, ok := v.(map[string]any)
	if !ok {
		return store.InvalidValue("a document must be an object")
	}
	if m["object"] != "document" {
		return store.InvalidValue(`a document must have "object": "document"`)
	}
	if _, ok := m["nodes"].([]any); !ok {
		return store.InvalidValue(`a document must have a "nodes" array`)
	}
	if data, present := m["data"]; present {
		if _, ok := data.(map[string]any); !ok {
			return store.InvalidValue(`a document's "data" must be an object`)
		}
	} else {
		m["data"] = map[string]any{}
	}
	for i, n := range m["nodes"].([]any) {
		node, ok := n.(map[string]any)
		if !ok || node["object"] != "block" {
			return store.InvalidValue(`document node %d must be an object with "object": "block"`, i)
		}
	}
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	*d = b
	return nil
}

// MarshalGQL writes the document's JSON as it is.
func (d Document) MarshalGQL(w io.Writer) {
	if len(d) == 0 {
		_, _ = io.WriteString(w, "null")
		return
	}
	_, _ = w.Write(d)
}

// CustomizationSettings is a site's customization settings, or a site
// space's overrides of them: a JSON object, whose members the resolvers
// check (graph/internal/customization).
type CustomizationSettings map[string]any

// UnmarshalGQL accepts a JSON object.
func (c *CustomizationSettings) UnmarshalGQL(v any) error {
	m, ok := v.(map[string]any)
	if !ok {
		return store.InvalidValue("customization settings must be an object, not %s", JSONType(v))
	}
	*c = m
	return nil
}

// MarshalGQL writes the settings' JSON.
func (c CustomizationSettings) MarshalGQL(w io.Writer) {
	graphql.MarshalMap(c).MarshalGQL(w)
}
