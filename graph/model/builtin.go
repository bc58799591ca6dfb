package model

import (
	"encoding/json"
	"math"
	"strconv"

	"github.com/99designs/gqlgen/graphql"

	"github.com/docsapi/docsapi/store"
)

// Strict versions of the built-in scalars. gqlgen's own accept a number for a
// String, the string "yes" as false for a Boolean and "5" for an Int; a REST
// body of the wrong type must be a 400 instead, so input is taken only in
// its own JSON type (json.Number for numbers: the REST adapter decodes with
// UseNumber; int64 for literals in a document).

func MarshalString(s string) graphql.Marshaler { return graphql.MarshalString(s) }

func UnmarshalString(v any) (string, error) {
	if s, ok := v.(string); ok {
		return s, nil
	}
	return "", store.InvalidValue("expected a string, got %s", JSONType(v))
}

func MarshalBoolean(b bool) graphql.Marshaler { return graphql.MarshalBoolean(b) }

func UnmarshalBoolean(v any) (bool, error) {
	if b, ok := v.(bool); ok {
		return b, nil
	}
	return false, store.InvalidValue("expected true or false, got %s", JSONType(v))
}

func MarshalInt(i int) graphql.Marshaler { return graphql.MarshalInt(i) }

func UnmarshalInt(v any) (int, error) {
	var n int64
	switch x := v.(type) {
	case int:
		n = int64(x)
	case int64:
		n = x
	case json.Number:
		i, err := strconv.ParseInt(string(x), 10, 64)
		if err != nil {
			return 0, store.InvalidValue("expected an integer, got %s", x)
		}
		n = i
	default:
		return 0, store.InvalidValue("expected an integer, got %s", JSONType(v))
	}
	if n < math.MinInt32 || n > math.MaxInt32 {
		return 0, store.InvalidValue("integer %d is out of range", n)
	}
	return int(n), nil
}

func MarshalFloat(f float64) graphql.Marshaler { return graphql.MarshalFloat(f) }

func UnmarshalFloat(v any) (float64, error) {
	switch x := v.(type) {
	case float64:
		return x, nil
	case int:
		return float64(x), nil
	case int64:
		return float64(x), nil
	case json.Number:
		f, err := x.Float64()
		if err != nil {
			return 0, store.InvalidValue("expected a number, got %s", x)
		}
		return f, nil
	}
	return 0, store.InvalidValue("expected a number, got %s", JSONType(v))
}

func MarshalID(s string) graphql.Marshaler { return graphql.MarshalString(s) }

// UnmarshalID takes a string or, as GraphQL allows, an integer.
func UnmarshalID(v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case int:
		return strconv.Itoa(x), nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	case json.Number:
		if _, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return string(x), nil
		}
	}
	return "", store.InvalidValue("expected an id (a string), got %s", JSONType(v))
}

// JSONType names the JSON type of a decoded value ("a string"), for error messages.
func JSONType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case json.Number, int, int64, float64:
		return "a number"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return "an unsupported value"
}
