package graph

import (
	"bytes"
	"errors"
	"net/http"
	"testing"

	"github.com/docsapi/docsapi/store"
)

// Secrets are sealed under the server key, bound to their integration, and
// refused when the server has no key.
func TestIntegrationSecrets(t *testing.T) {
	r := &Resolver{SecretKey: bytes.Repeat([]byte{7}, 32)}
	sealed, err := r.sealSecrets("int1", map[string]string{"TOKEN": "hunter2"})
	if err != nil || bytes.Contains(sealed, []byte("hunter2")) {
		t.Fatalf("sealed: %q %v", sealed, err)
	}
	got, err := r.OpenSecrets(&store.Integration{ID: "int1", Secrets: sealed})
	if err != nil || got["TOKEN"] != "hunter2" {
		t.Errorf("opened: %v %v", got, err)
	}
	if _, err := r.OpenSecrets(&store.Integration{ID: "int2", Secrets: sealed}); err == nil {
		t.Error("secrets sealed for one integration opened for another")
	}
	other := &Resolver{SecretKey: bytes.Repeat([]byte{8}, 32)}
	if _, err := other.OpenSecrets(&store.Integration{ID: "int1", Secrets: sealed}); err == nil {
		t.Error("secrets opened with another key")
	}
	if s, err := r.sealSecrets("int1", nil); s != nil || err != nil {
		t.Errorf("no secrets: %q %v", s, err)
	}
	var e *Error
	if _, err := (&Resolver{}).sealSecrets("int1", map[string]string{"K": "v"}); !errors.As(err, &e) || e.Status != http.StatusBadRequest {
		t.Errorf("without a server key: %v", err)
	}
}
