package main

import (
	"strings"
	"testing"
)

// DOCSAPI_SECRET_KEY: empty (no key), 64 hex digits or base64 of 32 bytes;
// anything else stops the server from starting.
func TestSecretKeyConfig(t *testing.T) {
	for _, c := range []struct {
		value string
		ok    bool
		n     int
	}{
		{"", true, 0},
		{strings.Repeat("ab", 32), true, 32},
		{"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=", true, 32},
		{"short", false, 0},
		{strings.Repeat("ab", 16), false, 0},
	} {
		key, err := (&config{SecretKey: c.value}).secretKey()
		if (err == nil) != c.ok || len(key) != c.n {
			t.Errorf("%q: %d bytes, %v", c.value, len(key), err)
		}
	}
}
