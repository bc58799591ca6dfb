package graph

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"errors"
)

// Secrets the server keeps in the database (integration secrets, its SAML
// private key) are sealed with AES-256-GCM under the server key,
// DOCSAPI_SECRET_KEY, each bound to what it belongs to (the additional
// data): a sealed value copied to another row does not open.

// errNoSecretKey: the server has no key to seal or open with.
var errNoSecretKey = errors.New("this server has no DOCSAPI_SECRET_KEY")

// seal encrypts plain under the server key, bound to aad.
func (r *Resolver) seal(plain, aad []byte) ([]byte, error) {
	gcm, err := r.secretCipher()
	if err != nil {
		return nil, err
	}
	nonce := make([]byte, gcm.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	return gcm.Seal(nonce, nonce, plain, aad), nil
}

// unseal decrypts what seal made with the same key and aad.
func (r *Resolver) unseal(sealed, aad []byte) ([]byte, error) {
	gcm, err := r.secretCipher()
	if err != nil {
		return nil, err
	}
	n := gcm.NonceSize()
	if len(sealed) < n {
		return nil, errors.New("sealed value too short")
	}
	return gcm.Open(nil, sealed[:n], sealed[n:], aad)
}

func (r *Resolver) secretCipher() (cipher.AEAD, error) {
	if len(r.SecretKey) == 0 {
		return nil, errNoSecretKey
	}
	block, err := aes.NewCipher(r.SecretKey)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}
