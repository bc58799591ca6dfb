package rest

import (
	"bytes"
	"errors"
	"fmt"
)

// The REST body of an operation is a part of the GraphQL response data, with
// null members removed: a REST client of the reference expects an optional
// member to be absent, not null. This works on the bytes gqlgen wrote, so
// members keep the order the operation's fragment selects (the reference's
// order) and nothing is decoded into maps and encoded again.

// keepNull names the members whose null is meaningful in the reference: a
// null role or default level means "guest"; a site header item's `to`,
// which the reference requires, is null for a menu leading nowhere.
var keepNull = [][]byte{[]byte(`"defaultRole"`), []byte(`"defaultLevel"`), []byte(`"role"`), []byte(`"to"`)}

var errMalformed = errors.New("malformed JSON in the response data")

// restBody returns the value at path within data, with null members removed.
// It returns nil for a null value.
func restBody(data []byte, path []string) ([]byte, error) {
	start, end, err := valueAt(data, path)
	if err != nil {
		return nil, err
	}
	v := data[start:end]
	if bytes.Equal(v, []byte("null")) {
		return nil, nil
	}
	out := make([]byte, 0, len(v))
	out, _, err = dropNulls(out, v, 0)
	return out, err
}

// valueAt finds the bounds of the value at path.
func valueAt(data []byte, path []string) (start, end int, err error) {
	start = skipSpace(data, 0)
	for _, key := range path {
		if start >= len(data) || data[start] != '{' {
			return 0, 0, fmt.Errorf("no %q in the result", key)
		}
		found := false
		i := skipSpace(data, start+1)
		for i < len(data) && data[i] != '}' {
			kEnd, err := stringEnd(data, i)
			if err != nil {
				return 0, 0, err
			}
			k := data[i+1 : kEnd-1]
			i = skipSpace(data, kEnd)
			if i >= len(data) || data[i] != ':' {
				return 0, 0, errMalformed
			}
			vStart := skipSpace(data, i+1)
			vEnd, err := valueEnd(data, vStart)
			if err != nil {
				return 0, 0, err
			}
			if string(k) == key {
				start, found = vStart, true
				break
			}
			i = skipSpace(data, vEnd)
			if i < len(data) && data[i] == ',' {
				i = skipSpace(data, i+1)
			}
		}
		if !found {
			return 0, 0, fmt.Errorf("no %q in the result", key)
		}
	}
	end, err = valueEnd(data, start)
	return start, end, err
}

// dropNulls appends the value starting at b[i] to out without its null
// object members, and returns the index after the value.
func dropNulls(out, b []byte, i int) ([]byte, int, error) {
	i = skipSpace(b, i)
	if i >= len(b) {
		return out, i, errMalformed
	}
	switch b[i] {
	case '{':
		out = append(out, '{')
		i = skipSpace(b, i+1)
		first := true
		for i < len(b) && b[i] != '}' {
			kEnd, err := stringEnd(b, i)
			if err != nil {
				return out, i, err
			}
			key := b[i:kEnd]
			i = skipSpace(b, kEnd)
			if i >= len(b) || b[i] != ':' {
				return out, i, errMalformed
			}
			vStart := skipSpace(b, i+1)
			if bytes.HasPrefix(b[vStart:], []byte("null")) && !keepsNull(key) {
				i = skipSpace(b, vStart+4)
			} else {
				if !first {
					out = append(out, ',')
				}
				first = false
				out = append(out, key...)
				out = append(out, ':')
				if out, i, err = dropNulls(out, b, vStart); err != nil {
					return out, i, err
				}
				i = skipSpace(b, i)
			}
			if i < len(b) && b[i] == ',' {
				i = skipSpace(b, i+1)
			}
		}
		if i >= len(b) {
			return out, i, errMalformed
		}
		return append(out, '}'), i + 1, nil
	case '[':
		out = append(out, '[')
		i = skipSpace(b, i+1)
		first := true
		for i < len(b) && b[i] != ']' {
			if !first {
				out = append(out, ',')
			}
			first = false
			var err error
			if out, i, err = dropNulls(out, b, i); err != nil {
				return out, i, err
			}
			i = skipSpace(b, i)
			if i < len(b) && b[i] == ',' {
				i = skipSpace(b, i+1)
			}
		}
		if i >= len(b) {
			return out, i, errMalformed
		}
		return append(out, ']'), i + 1, nil
	}
	end, err := valueEnd(b, i)
	if err != nil {
		return out, i, err
	}
	return append(out, b[i:end]...), end, nil
}

func keepsNull(key []byte) bool {
	for _, k := range keepNull {
		if bytes.Equal(key, k) {
			return true
		}
	}
	return false
}

// valueEnd returns the index just after the value starting at b[i].
func valueEnd(b []byte, i int) (int, error) {
	if i >= len(b) {
		return i, errMalformed
	}
	switch b[i] {
	case '"':
		return stringEnd(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				end, err := stringEnd(b, j)
				if err != nil {
					return j, err
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1, nil
				}
			}
		}
		return len(b), errMalformed
	}
	j := i
	for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && !isSpace(b[j]) {
		j++
	}
	if j == i {
		return j, errMalformed
	}
	return j, nil
}

// stringEnd returns the index just after the string starting at b[i].
func stringEnd(b []byte, i int) (int, error) {
	if i >= len(b) || b[i] != '"' {
		return i, errMalformed
	}
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1, nil
		}
	}
	return len(b), errMalformed
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

func isSpace(c byte) bool { return c == ' ' || c == '\n' || c == '\t' || c == '\r' }
