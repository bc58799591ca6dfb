package graph

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/xml"
	"errors"
	"fmt"
	"math/big"
	"net/mail"
	"net/url"
	"strings"
	"time"

	"github.com/beevik/etree"
	"github.com/crewjam/saml"
	dsig "github.com/russellhaering/goxmldsig"
	"github.com/uptrace/bun"

	"github.com/docsapi/docsapi/store"
)

// The SAML sign-in (SP-initiated, HTTP-Redirect out, HTTP-POST back), served
// outside /v1 because the person signing in has no token yet:
//
//	GET  /sso/saml/{providerId}        this service's metadata (its entity ID)
//	GET  /sso/saml/{providerId}/start  records an AuthnRequest and redirects to the provider's ssoURL
//	POST /sso/saml/{providerId}/acs    the provider's SAMLResponse: verified, then the person is signed in
//
// (and, with a token, the link flow of sso_link.go:
// POST /sso/saml/{providerId}/link and /link/confirm).
//
// crewjam/saml checks the response: its signature (the response's or the
// assertion's) against the provider's certificate, the Issuer against the
// provider's entity ID, the Destination and Recipient against the ACS URL,
// the audience against this service's entity ID, the time conditions, and
// InResponseTo against the request this service sent. Each request is
// answered once (replays are refused) and only within samlRequestLifetime.
// Protocol times are checked against the wall clock, as the identity
// provider's are: the library keeps them, not the resolver's clock.
//
// This service signs its AuthnRequests (RSA-SHA256) and accepts assertions
// encrypted to its certificate, with one key pair per instance (samlKeys),
// published in every provider's service metadata.
//
// An identity provider is run by whoever administers its organization (any
// user can create an organization and add one), so what it asserts is
// believed for that organization only. A verified response names a person by
// its NameID, and:
//
//   - the user that (provider, NameID) is bound to (store.SAMLIdentity) is
//     signed in: the user a previous sign-in created, or who linked the
//     provider from their own authenticated session (sso_link.go);
//   - an unbound NameID gets a new user, bound to it, named and addressed
//     as asserted. Never an existing user: an asserted email is no proof of
//     owning the account that has it. When the email is already an
//     account's, the sign-in is refused (409) and says to link from that
//     account (emails are unique among users).
//
// The user becomes an SSO member of the organization with the provider's
// default role and team, and gets a new API token confined to that
// organization (a session: it expires, and reaches no other organization of
// the user), answered as JSON to a client that asks for it and as a small
// HTML page otherwise. An answer to a link flow's request links instead.

// SAMLPath is where the sign-in endpoints are served.
const SAMLPath = "/sso/saml/"

// samlRequestLifetime is how long an AuthnRequest may be answered.
const samlRequestLifetime = 10 * time.Minute

// SSOLogin is what a successful sign-in answers.
type SSOLogin struct {
	// Token is a new API token of the user: Authorization: Bearer <token>.
	Token string `json:"token"`
	// ExpiresAt is when the token stops working (DOCSAPI_SSO_TOKEN_TTL).
	ExpiresAt    time.Time `json:"expiresAt"`
	User         string    `json:"user"`
	Email        string    `json:"email"`
	Organization string    `json:"organization"`
}

// SAMLMetadata is this service's SAML metadata for provider providerID, to
// configure the identity provider with.
func (r *Resolver) SAMLMetadata(ctx context.Context, providerID string) ([]byte, error) {
	_, sp, err := r.samlServiceProvider(ctx, providerID, false)
	if err != nil {
		return nil, err
	}
	return xml.MarshalIndent(sp.Metadata(), "", "  ")
}

// StartSAMLSignIn begins a sign-in at provider providerID: an AuthnRequest,
// remembered; it returns where to redirect the browser with it.
func (r *Resolver) StartSAMLSignIn(ctx context.Context, providerID string) (string, error) {
	p, sp, err := r.samlServiceProvider(ctx, providerID, true)
	if err != nil {
		return "", err
	}
	to, err := r.startSAMLRequest(ctx, p, sp, nil)
	if err != nil {
		return "", err
	}
	return to.String(), nil
}

// startSAMLRequest makes and remembers an AuthnRequest to p, a link flow's
// for user linkUserID when set, and returns where to send the browser with it.
func (r *Resolver) startSAMLRequest(ctx context.Context, p *store.SAMLProvider, sp *saml.ServiceProvider, linkUserID *string) (*url.URL, error) {
	authn, err := sp.MakeAuthenticationRequest(p.SSOURL, saml.HTTPRedirectBinding, saml.HTTPPostBinding)
	if err != nil {
		return nil, err
	}
	now := r.now()
	sent := &store.SAMLRequest{ID: authn.ID, ProviderID: p.ID, CreatedAt: now, LinkUserID: linkUserID}
	if err := store.AddSAMLRequest(ctx, r.DB, sent, now.Add(-samlRequestLifetime)); err != nil {
		return nil, err
	}
	return authn.Redirect("", sp)
}

// AnswerSAML takes the identity provider's answer (the SAMLResponse of the
// HTTP-POST binding, base64) to provider providerID, and signs the person
// in, or, answering a link flow, holds the identity for the link's code:
// one of login and link is set. Refusals are errors of the API (400, 403,
// 404, 409), logged with their reason.
func (r *Resolver) AnswerSAML(ctx context.Context, providerID, samlResponse string) (login *SSOLogin, link *SSOLinkHeld, err error) {
	p, sp, err := r.samlServiceProvider(ctx, providerID, true)
	if err != nil {
		return nil, nil, err
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(samlResponse))
	if err != nil || len(raw) == 0 {
		return nil, nil, BadRequest("SAMLResponse: a base64-encoded SAML response is required (HTTP-POST binding)")
	}
	refused := func(reason string, err error) error {
		r.Log.InfoContext(ctx, "saml sign-in refused", "provider", p.ID, "reason", reason, "error", err)
		return Forbidden("the SAML response is refused: %s", reason)
	}
	// Only answers to a request this service sent, still open, are read
	// further: an unsolicited (IdP-initiated) or replayed response stops here.
	requestID := inResponseTo(raw)
	now := r.now()
	if requestID == "" {
		return nil, nil, refused("it answers no sign-in request of this service (start at the provider's startURL)", nil)
	}
	if open, err := store.OpenSAMLRequest(ctx, r.DB, requestID, p.ID, now.Add(-samlRequestLifetime)); err != nil {
		return nil, nil, err
	} else if !open {
		return nil, nil, refused("its sign-in request is unknown, expired or already answered", nil)
	}
	assertion, err := parseSAMLResponse(sp, raw, requestID)
	if err != nil {
		var invalid *saml.InvalidResponseError
		if errors.As(err, &invalid) {
			err = invalid.PrivateErr
		}
		return nil, nil, refused("it is not validly signed by the provider, or not meant for this service now", err)
	}
	person, reason := assertedPerson(assertion)
	if reason != "" {
		return nil, nil, refused(reason, nil)
	}
	login, link, err = r.answerSAML(ctx, p, requestID, person)
	var e *Error
	if errors.As(err, &e) {
		r.Log.InfoContext(ctx, "saml sign-in refused", "provider", p.ID, "reason", e.Message)
	}
	if login != nil {
		// The sign-in made (or updated) the user, their membership and
		// token: the session's first reads wait for a replica that has
		// them, on this instance (no client position reaches this page).
		r.DB.RecordWrite(ctx, login.User)
	}
	return login, link, err
}

// parseSAMLResponse verifies raw, an answer to request requestID, with
// crewjam/saml. The library dereferences parts of a signed assertion that
// SAML makes optional (a missing Subject panics in v0.5.1, GO-2026-6909,
// which no release fixes yet): such a panic is a refused response, not a
// 500. The panic comes after the signature was checked, so only the
// organization's own provider can cause it.
func parseSAMLResponse(sp *saml.ServiceProvider, raw []byte, requestID string) (a *saml.Assertion, err error) {
	defer func() {
		if p := recover(); p != nil {
			a, err = nil, fmt.Errorf("the SAML library failed on the response: %v", p)
		}
	}()
	return sp.ParseXMLResponse(raw, []string{requestID}, sp.AcsURL)
}

// answerSAML consumes request requestID, answered with person, and either
// signs the person in (a sign-in's request) or holds the link of their
// identity for confirmation (a link flow's), in one transaction: of two
// answers to one request, one wins.
func (r *Resolver) answerSAML(ctx context.Context, p *store.SAMLProvider, requestID string, person samlPerson) (*SSOLogin, *SSOLinkHeld, error) {
	var login *SSOLogin
	var link *SSOLinkHeld
	err := store.RunInTx(ctx, r.DB, func(ctx context.Context, tx bun.Tx) error {
		now := r.now()
		sent, err := store.ConsumeSAMLRequest(ctx, tx, requestID, p.ID, now)
		if errors.Is(err, store.ErrNotFound) {
			return Forbidden("the SAML response is refused: its sign-in request is already answered")
		} else if err != nil {
			return err
		}
		if sent.LinkUserID != nil {
			link, err = r.holdSAMLLink(ctx, tx, p, sent, person, now)
			return err
		}
		login, err = r.signInWithSAML(ctx, tx, p, person, now)
		return err
	})
	return login, link, err
}

// DefaultSSOTokenTTL is how long a token issued by a sign-in works unless
// configured otherwise: a working week and a weekend.
const DefaultSSOTokenTTL = 7 * 24 * time.Hour

func (r *Resolver) ssoTokenTTL() time.Duration {
	if r.SSOTokenTTL > 0 {
		return r.SSOTokenTTL
	}
	return DefaultSSOTokenTTL
}

// signInWithSAML signs the person asserted by p in, in tx: the user their
// NameID is bound to, or a new one, becomes an SSO member of p's
// organization and gets a token confined to it.
func (r *Resolver) signInWithSAML(ctx context.Context, tx bun.Tx, p *store.SAMLProvider, person samlPerson, now time.Time) (*SSOLogin, error) {
	u, err := r.samlUser(ctx, tx, p, person, now)
	if err != nil {
		return nil, err
	}
	m, err := store.GetMember(ctx, tx, p.OrganizationID, u.ID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		if err := store.AddMember(ctx, tx, p.OrganizationID, u.ID, p.DefaultRole, now); err != nil {
			return nil, err
		}
		m = &store.Member{OrganizationID: p.OrganizationID, UserID: u.ID}
		if p.DefaultTeamID != nil {
			t, err := store.GetTeam(ctx, tx, p.OrganizationID, *p.DefaultTeamID)
			if err == nil {
				err = store.PutTeamMember(ctx, tx, t, u.ID, store.TeamRoleMember)
			}
			if err != nil && !errors.Is(err, store.ErrNotFound) {
				return nil, err
			}
		}
	case err != nil:
		return nil, err
	case m.Disabled:
		// SECURITY: an admin disabled this member; signing in does not undo it.
		return nil, Forbidden("your membership of this organization is disabled")
	}
	// An existing member keeps their role and teams, and signs in with SSO from now on.
	m.SSO = true
	if err := store.UpdateMember(ctx, tx, m, "sso"); err != nil {
		return nil, err
	}
	// SECURITY: a sign-in's token is a session: it expires (and the
	// prune_expired_tokens job removes it then), and it is confined to the
	// provider's organization: what this provider asserts is believed there
	// only, so the session reaches none of the user's other organizations.
	token, expiresAt := store.NewSecret(), now.Add(r.ssoTokenTTL())
	if _, err := store.AddOrganizationToken(ctx, tx, u.ID, p.OrganizationID, token, "SAML sign-in with "+p.Label, now, expiresAt); err != nil {
		return nil, err
	}
	return &SSOLogin{Token: token, ExpiresAt: expiresAt, User: u.ID, Email: u.Email, Organization: p.OrganizationID}, nil
}

// samlUser is the user person signs in as through p: the one their NameID
// is bound to, or a new user bound to it.
func (r *Resolver) samlUser(ctx context.Context, tx bun.Tx, p *store.SAMLProvider, person samlPerson, now time.Time) (*store.User, error) {
	// SECURITY: the identity is (provider, NameID), never the asserted
	// email: a provider signs in only the users bound to its NameIDs.
	bound, err := store.SAMLIdentityByNameID(ctx, tx, p.ID, person.nameID)
	if err == nil {
		return store.GetUser(ctx, tx, bound.UserID)
	} else if !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	if person.email == "" {
		return nil, Forbidden("the SAML response is refused: it asserts no email address, which a new account needs")
	}
	// SECURITY: an unbound NameID never yields an existing user, whatever
	// email it asserts (any organization's provider can assert any email).
	// The new user would need that email, which is an existing user's:
	// refused, with the way for its owner to use this provider.
	taken := Conflict("an account with the email %s exists already, and a sign-in cannot take it over: "+
		"to use this identity provider with it, sign in to that account another way and link the provider from it "+
		"(POST %s with its token)", person.email, r.URLs.API(SAMLPath+pathEscape(p.ID)+"/link"))
	if _, err := store.UserByEmail(ctx, tx, person.email); err == nil {
		return nil, taken
	} else if !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	u := &store.User{ID: store.NewID(), Email: person.email, DisplayName: person.name, CreatedAt: now, UpdatedAt: now}
	if err := store.CreateUser(ctx, tx, u); errors.Is(err, store.ErrConflict) {
		return nil, taken // the email was taken meanwhile
	} else if err != nil {
		return nil, err
	}
	err = store.BindSAMLIdentity(ctx, tx, &store.SAMLIdentity{ProviderID: p.ID, NameID: person.nameID, UserID: u.ID,
		OrganizationID: p.OrganizationID, CreatedAt: now})
	if errors.Is(err, store.ErrConflict) {
		// A concurrent sign-in with the same NameID bound it first.
		return nil, Conflict("this identity was signed in concurrently: sign in again")
	}
	return u, err
}

// samlServiceProvider reads provider providerID and builds this service's
// SAML side for it: NotFound when there is no such provider (or, with
// active, it is not configured yet).
func (r *Resolver) samlServiceProvider(ctx context.Context, providerID string, active bool) (*store.SAMLProvider, *saml.ServiceProvider, error) {
	p, err := store.SAMLProviderByID(ctx, r.DB, providerID)
	if err := orNotFound(err, "SAML provider"); err != nil {
		return nil, nil, err
	}
	if active && p.Status() != store.SAMLProviderActive {
		return nil, nil, NotFound("SAML provider")
	}
	service := r.samlService(p)
	entity, _ := url.Parse(service.EntityID)
	acs, _ := url.Parse(service.AcsURL)
	keys, err := r.samlKeys(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("saml service key: %w", err)
	}
	sp := &saml.ServiceProvider{EntityID: service.EntityID, MetadataURL: *entity, AcsURL: *acs,
		AuthnNameIDFormat: saml.EmailAddressNameIDFormat,
		Key:               keys.key, Certificate: keys.cert, SignatureMethod: dsig.RSASHA256SignatureMethod}
	if p.Status() == store.SAMLProviderActive {
		cert, err := providerCertificate(p)
		if err != nil {
			return nil, nil, err
		}
		sp.IDPMetadata = &saml.EntityDescriptor{EntityID: p.EntityID, IDPSSODescriptors: []saml.IDPSSODescriptor{{
			SSODescriptor: saml.SSODescriptor{RoleDescriptor: saml.RoleDescriptor{KeyDescriptors: []saml.KeyDescriptor{{
				Use:     "signing",
				KeyInfo: saml.KeyInfo{X509Data: saml.X509Data{X509Certificates: []saml.X509Certificate{{Data: base64.StdEncoding.EncodeToString(cert.Raw)}}}},
			}}}},
			SingleSignOnServices: []saml.Endpoint{{Binding: saml.HTTPRedirectBinding, Location: p.SSOURL}},
		}}}
	}
	return p, sp, nil
}

// samlKeyPair is this service's SAML key pair.
type samlKeyPair struct {
	key  *rsa.PrivateKey
	cert *x509.Certificate
}

// samlKeys returns this service's SAML key pair: read once per process, and
// made (then stored, for every instance and restart) the first time any
// instance needs it.
func (r *Resolver) samlKeys(ctx context.Context) (*samlKeyPair, error) {
	r.samlKeyMu.Lock()
	defer r.samlKeyMu.Unlock()
	if r.samlKey != nil {
		return r.samlKey, nil
	}
	stored, err := store.GetSAMLServiceKey(ctx, r.DB)
	if errors.Is(err, store.ErrNotFound) {
		var made *store.SAMLServiceKey
		if made, err = r.newSAMLServiceKey(r.now()); err == nil {
			stored, err = store.PutSAMLServiceKey(ctx, r.DB, made)
		}
	}
	if err != nil {
		return nil, err
	}
	keys, err := r.openSAMLServiceKey(stored)
	if err != nil {
		return nil, err
	}
	r.samlKey = keys
	return keys, nil
}

// samlKeyAAD binds the sealed SAML private key to its use.
var samlKeyAAD = []byte("saml-service-key")

// newSAMLServiceKey makes an RSA key of 2048 bits and a self-signed
// certificate for it, valid for 10 years: identity providers take the
// certificate from the metadata, as it is, to check the signatures of
// AuthnRequests and to encrypt assertions. The private key is sealed under
// the server key when the server has one.
func (r *Resolver) newSAMLServiceKey(now time.Time) (*store.SAMLServiceKey, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, err
	}
	template := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: "docsapi SAML service"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.AddDate(10, 0, 0),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
	}
	cert, err := x509.CreateCertificate(rand.Reader, template, template, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, err
	}
	k := &store.SAMLServiceKey{PrivateKey: der, Certificate: cert, CreatedAt: now}
	if len(r.SecretKey) > 0 {
		if k.PrivateKey, err = r.seal(der, samlKeyAAD); err != nil {
			return nil, err
		}
		k.Sealed = true
	}
	return k, nil
}

// openSAMLServiceKey decodes a stored key pair, unsealing its private key.
func (r *Resolver) openSAMLServiceKey(k *store.SAMLServiceKey) (*samlKeyPair, error) {
	der := k.PrivateKey
	if k.Sealed {
		var err error
		if der, err = r.unseal(der, samlKeyAAD); err != nil {
			return nil, fmt.Errorf("saml service key: sealed under a server key this server does not have (DOCSAPI_SECRET_KEY): %w", err)
		}
	}
	key, err := x509.ParsePKCS8PrivateKey(der)
	if err != nil {
		return nil, fmt.Errorf("saml service key: %w", err)
	}
	rsaKey, ok := key.(*rsa.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("saml service key: a %T, not an RSA key", key)
	}
	cert, err := x509.ParseCertificate(k.Certificate)
	if err != nil {
		return nil, fmt.Errorf("saml service certificate: %w", err)
	}
	return &samlKeyPair{key: rsaKey, cert: cert}, nil
}

// inResponseTo is the request a response says it answers; empty when it
// says none or is not XML. Read before verifying, only to find the request.
func inResponseTo(raw []byte) string {
	doc := etree.NewDocument()
	if err := doc.ReadFromBytes(raw); err != nil || doc.Root() == nil {
		return ""
	}
	return doc.Root().SelectAttrValue("InResponseTo", "")
}

// samlPerson is who a verified assertion says signs in.
type samlPerson struct {
	// nameID is the assertion's Subject NameID: the identity at the provider.
	nameID string
	// email and name describe the person, for a new user; email may be empty.
	email, name string
}

// maxNameIDLength bounds the NameIDs kept (SAML's persistent ones are at
// most 256 characters).
const maxNameIDLength = 1024

// assertedPerson is the person an assertion gives, or why it gives none
// usable: the NameID (not transient: a transient one names nobody twice);
// the email from the usual attributes (or an email-shaped NameID); the name
// from the display name, common name, or given name and surname attributes.
func assertedPerson(a *saml.Assertion) (samlPerson, string) {
	var person samlPerson
	if a.Subject == nil || a.Subject.NameID == nil || strings.TrimSpace(a.Subject.NameID.Value) == "" {
		return person, "it asserts no NameID"
	}
	nameID := a.Subject.NameID
	value := strings.TrimSpace(nameID.Value)
	if nameID.Format == string(saml.TransientNameIDFormat) {
		return person, "its NameID is transient, which names nobody twice (configure the identity provider to send a persistent or email NameID)"
	}
	if len(value) > maxNameIDLength {
		return person, fmt.Sprintf("its NameID is longer than %d characters", maxNameIDLength)
	}
	person.nameID = value
	attrs := map[string]string{}
	for _, st := range a.AttributeStatements {
		for _, at := range st.Attributes {
			if len(at.Values) == 0 {
				continue
			}
			for _, key := range []string{at.Name, at.FriendlyName} {
				if key != "" {
					attrs[strings.ToLower(key)] = strings.TrimSpace(at.Values[0].Value)
				}
			}
		}
	}
	first := func(keys ...string) string {
		for _, k := range keys {
			if v := attrs[k]; v != "" {
				return v
			}
		}
		return ""
	}
	email := first("email", "mail", "emailaddress", "urn:oid:0.9.2342.19200300.100.1.3",
		"http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress")
	if email == "" {
		email = value
	}
	if addr, err := mail.ParseAddress(email); err != nil || addr.Address != email {
		email = ""
	}
	name := first("displayname", "name", "cn", "urn:oid:2.5.4.3", "urn:oid:2.16.840.1.113730.3.1.241",
		"http://schemas.xmlsoap.org/ws/2005/05/identity/claims/name")
	if name == "" {
		name = strings.TrimSpace(first("givenname", "firstname", "urn:oid:2.5.4.42") + " " + first("sn", "surname", "lastname", "urn:oid:2.5.4.4"))
	}
	if name == "" {
		name, _, _ = strings.Cut(email, "@")
	}
	person.email, person.name = email, truncateRunes(name, 255)
	return person, ""
}
