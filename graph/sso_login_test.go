package graph

import (
	"bytes"
	"crypto/x509"
	"testing"
	"time"
)

// The SAML service key is sealed under the server key when there is one,
// stored in clear otherwise, and opens only with the key it was sealed
// under.
func TestSAMLServiceKeySealing(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	withKey := &Resolver{SecretKey: bytes.Repeat([]byte{7}, 32)}
	sealed, err := withKey.newSAMLServiceKey(now)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := x509.ParsePKCS8PrivateKey(sealed.PrivateKey); !sealed.Sealed || err == nil {
		t.Fatalf("with a server key, the private key is stored in clear (sealed %v)", sealed.Sealed)
	}
	keys, err := withKey.openSAMLServiceKey(sealed)
	if err != nil || !keys.key.PublicKey.Equal(keys.cert.PublicKey) {
		t.Fatalf("opening the sealed key: %v", err)
	}
	if keys.cert.NotAfter.Before(now.AddDate(9, 0, 0)) {
		t.Errorf("the certificate expires %v", keys.cert.NotAfter)
	}
	for name, other := range map[string]*Resolver{"another key": {SecretKey: bytes.Repeat([]byte{8}, 32)}, "no key": {}} {
		if _, err := other.openSAMLServiceKey(sealed); err == nil {
			t.Errorf("the sealed key opened with %s", name)
		}
	}

	plain, err := (&Resolver{}).newSAMLServiceKey(now)
	if err != nil || plain.Sealed {
		t.Fatalf("without a server key: sealed %v, %v", plain.Sealed, err)
	}
	if _, err := (&Resolver{}).openSAMLServiceKey(plain); err != nil {
		t.Fatalf("opening the clear key: %v", err)
	}
}
