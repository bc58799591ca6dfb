package graph

import (
	"bytes"
	"crypto/x509"
	"strings"
	"testing"
	"time"

	"github.com/crewjam/saml"
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

// An assertion names a person by a NameID that is not transient; the email
// is optional (only a new user needs one).
func TestAssertedPerson(t *testing.T) {
	attr := func(name, value string) saml.AttributeStatement {
		return saml.AttributeStatement{Attributes: []saml.Attribute{{Name: name, Values: []saml.AttributeValue{{Value: value}}}}}
	}
	for _, tc := range []struct {
		name      string
		assertion saml.Assertion
		want      samlPerson
		refused   string
	}{
		{"no subject", saml.Assertion{}, samlPerson{}, "no NameID"},
		{"an empty NameID", saml.Assertion{Subject: &saml.Subject{NameID: &saml.NameID{Value: "  "}}}, samlPerson{}, "no NameID"},
		{"a transient NameID", saml.Assertion{Subject: &saml.Subject{NameID: &saml.NameID{Value: "x", Format: string(saml.TransientNameIDFormat)}}}, samlPerson{}, "transient"},
		{"a NameID too long", saml.Assertion{Subject: &saml.Subject{NameID: &saml.NameID{Value: strings.Repeat("x", maxNameIDLength+1)}}}, samlPerson{}, "longer"},
		{"an email NameID", saml.Assertion{Subject: &saml.Subject{NameID: &saml.NameID{Value: " dana@corp.example "}}},
			samlPerson{nameID: "dana@corp.example", email: "dana@corp.example", name: "dana"}, ""},
		{"a persistent NameID, no email", saml.Assertion{Subject: &saml.Subject{NameID: &saml.NameID{Value: "00u1", Format: string(saml.PersistentNameIDFormat)}}},
			samlPerson{nameID: "00u1"}, ""},
		{"a persistent NameID and attributes", saml.Assertion{Subject: &saml.Subject{NameID: &saml.NameID{Value: "00u2"}},
			AttributeStatements: []saml.AttributeStatement{attr("mail", "eve@corp.example"), attr("displayName", "Eve")}},
			samlPerson{nameID: "00u2", email: "eve@corp.example", name: "Eve"}, ""},
		{"an email attribute that is no email", saml.Assertion{Subject: &saml.Subject{NameID: &saml.NameID{Value: "00u3"}},
			AttributeStatements: []saml.AttributeStatement{attr("email", "not an email")}}, samlPerson{nameID: "00u3"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, refused := assertedPerson(&tc.assertion)
			if got != tc.want || (refused == "") != (tc.refused == "") || !strings.Contains(refused, tc.refused) {
				t.Errorf("got %+v %q, want %+v %q", got, refused, tc.want, tc.refused)
			}
		})
	}
}
