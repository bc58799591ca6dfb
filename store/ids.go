package store

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"time"
)

const idAlphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// NewID returns an opaque random identifier: 20 base62 characters (~119 bits).
func NewID() string {
	return randomString(20)
}

func randomString(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	for i := range b {
		// 62 does not divide 256; the bias (4 of 256 values) is irrelevant for identifiers.
		b[i] = idAlphabet[int(b[i])%len(idAlphabet)]
	}
	return string(b)
}

// NewSecret returns a random URL-safe secret of 32 bytes of entropy, for API
// tokens, share keys and sites' private keys: 43 characters, base64url
// unpadded.
func NewSecret() string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// TokenDigest is how an API token is stored and looked up.
func TokenDigest(token string) []byte {
	sum := sha256.Sum256([]byte(token))
	return sum[:]
}

// Now is the database's notion of the current time for rows we write:
// UTC, truncated to PostgreSQL's microsecond precision so a value read back
// equals the value written.
func Now(clock func() time.Time) time.Time {
	return clock().UTC().Truncate(time.Microsecond)
}

// Nullable text columns are *string in the models, "" standing for absent
// where code compares or merges them: StringOf reads one ("" for nil),
// NullString makes one (nil for "").
func StringOf(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func NullString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
