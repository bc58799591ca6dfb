package engine

import (
	"bytes"
	"encoding/json"
	"errors"
)

// errTrailingData is DecodeJSON's error for data after the value.
var errTrailingData = errors.New("unexpected data after the value")

// DecodeJSON decodes the one JSON value raw holds into v, numbers as
// json.Number (the executor coerces them to Int or Float as declared). Data
// after the value, but JSON's white space, is an error: a decoder's More
// takes a stray '}' or ']' for the end of a value it is not in, and a body
// with more than its value is not what its client meant to send. Every JSON
// request body, GraphQL's and the REST adapter's, is read through it.
func DecodeJSON(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if len(bytes.Trim(raw[dec.InputOffset():], " \t\r\n")) > 0 {
		return errTrailingData
	}
	return nil
}
