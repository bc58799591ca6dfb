package graph

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/docsapi/docsapi/store"
)

// Visitor API tokens: the short-lived tokens URL resolution hands a custom
// front end (PublishedSiteContent.apiToken), with which /graphql and /v1
// read exactly what one visitor may read on one site, as the reader would
// serve it to them, and nothing else.
//
// A token is stateless: a JSON Web Token signed (HS256) with a secret of
// the server's (store.ServerSecret "visitor-api-tokens"), whose payload is
// GitBook's SiteAPIToken (kind, organization, site, siteSection,
// siteSpace, space, spaces, claims: GitBook's renderer decodes it for the
// visitor's claims) with what admitted the visitor: the proof, the share
// link, and fingerprints of the secrets that admitted it (the share key,
// the site's visitor key), never the secrets themselves. Its header is
// always the same (visitorTokenHeader), so every token starts with the
// same characters, VisitorTokenPrefix: that is how the server tells one
// from an API token.
//
// Every request re-admits the visitor from the token (AdmitVisitorToken):
// the site as it is now, published, with the same audience satisfied by
// the proofs recorded, which therefore stop working when the share link is
// turned off or deleted, the site's visitor key is regenerated, the site is
// unpublished or deleted, or its audience changes to one they do not
// satisfy. Admission reads what it reads from memory kept fresh by every
// change to the site (siteAt, remembered), so a request pays no query for
// it while nothing changed.

// VisitorTokenTTL is how long a visitor API token works at most: an hour,
// and no longer than the visitor token its claims were verified with.
const VisitorTokenTTL = time.Hour

// maxVisitorAPIToken bounds a visitor API token: the claims it carries are
// a visitor token's (maxVisitorSecret) and a site's space ids.
const maxVisitorAPIToken = 64 << 10

// visitorTokenKind is the kid of every visitor API token's header.
const visitorTokenKind = "docsapi-site-visitor"

// visitorTokenHeader is the header of every visitor API token, as the JWT
// library writes it (a map's keys sorted), and VisitorTokenPrefix its
// encoding and the dot after it: what every visitor API token starts with.
var (
	visitorTokenHeader = map[string]any{"alg": jwt.SigningMethodHS256.Alg(), "kid": visitorTokenKind, "typ": "JWT"}
	VisitorTokenPrefix = func() string {
		b, err := json.Marshal(visitorTokenHeader)
		if err != nil {
			panic(err)
		}
		return base64.RawURLEncoding.EncodeToString(b) + "."
	}()
)

// IsVisitorToken tells whether token has the form of a visitor API token
// (whether it is one, AdmitVisitorToken says).
func IsVisitorToken(token string) bool { return strings.HasPrefix(token, VisitorTokenPrefix) }

// siteToken is a visitor API token's payload.
type siteToken struct {
	// GitBook's SiteAPIToken: "site", and where the resolved address led.
	Kind         string   `json:"kind"`
	Organization string   `json:"organization"`
	Site         string   `json:"site"`
	SiteSection  string   `json:"siteSection,omitempty"`
	SiteSpace    string   `json:"siteSpace"`
	Space        string   `json:"space"`
	Spaces       []string `json:"spaces"`
	// Claims are the visitor's, as conditions see them: the signed ones,
	// with the unsigned ones under "unsigned".
	Claims map[string]any `json:"claims"`
	// Proof is what admitted the visitor; ShareLink the share link whose
	// key it was ("" for the site's own); ShareKey and VisitorKey the
	// fingerprints of the share key and of the visitor key the signed
	// claims were verified with.
	Proof      VisitorProof `json:"proof"`
	ShareLink  string       `json:"shareLink,omitempty"`
	ShareKey   string       `json:"shareKey,omitempty"`
	VisitorKey string       `json:"visitorKey,omitempty"`
	jwt.RegisteredClaims
}

// visitorTokenKey is the server's key for visitor API tokens, read once.
func (r *Resolver) visitorTokenKey(ctx context.Context) ([]byte, error) {
	k := &r.visitorTokenSecret
	k.once.Do(func() {
		k.key, k.err = store.ServerSecret(context.WithoutCancel(ctx), r.DB, "visitor-api-tokens")
	})
	return k.key, k.err
}

// fingerprint is what a token records of secret, a key that admitted a
// visitor of site siteID: enough to tell it is still the same key, and
// nothing that would open the site.
func fingerprint(key []byte, siteID, secret string) string {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte("visitor-proof\x00" + siteID + "\x00" + secret))
	return base64.RawURLEncoding.EncodeToString(mac.Sum(nil)[:16])
}

// A resolved address, for the token to name.
type tokenPlace struct {
	section, siteSpace, space string
	spaces                    []string
}

// issueVisitorToken makes a visitor API token for visitor v, who reads
// place: it works until expires.
func (r *Resolver) issueVisitorToken(ctx context.Context, v *Visitor, place tokenPlace) (token string, expires time.Time, err error) {
	key, err := r.visitorTokenKey(ctx)
	if err != nil {
		return "", time.Time{}, err
	}
	now := r.now()
	expires = now.Add(VisitorTokenTTL).Truncate(time.Second)
	if !v.expires.IsZero() && v.expires.Before(expires) {
		expires = v.expires.Truncate(time.Second)
	}
	site := v.site
	t := &siteToken{Kind: "site", Organization: site.OrganizationID, Site: site.ID, SiteSection: place.section,
		SiteSpace: place.siteSpace, Space: place.space, Spaces: place.spaces, Claims: v.claims,
		Proof: v.proof, ShareLink: v.shareLink,
		RegisteredClaims: jwt.RegisteredClaims{IssuedAt: jwt.NewNumericDate(now), ExpiresAt: jwt.NewNumericDate(expires)}}
	if v.shareKey != "" {
		t.ShareKey = fingerprint(key, site.ID, v.shareKey)
	}
	if v.visitorKey != "" {
		t.VisitorKey = fingerprint(key, site.ID, v.visitorKey)
	}
	jt := jwt.NewWithClaims(jwt.SigningMethodHS256, t)
	jt.Header = visitorTokenHeader
	token, err = jt.SignedString(key)
	if err == nil && !IsVisitorToken(token) {
		err = errors.New("a visitor API token without its prefix")
	}
	return token, expires, err
}

// errVisitorTokenRevoked: what admitted a token's visitor no longer does.
var errVisitorTokenRevoked = errors.New("what admitted the visitor no longer does")

// AdmitVisitorToken admits the visitor of a visitor API token, as of now:
// ErrUnauthenticated when the token is not one this server made, has
// expired, or its proofs no longer admit its visitor to its site (a share
// link turned off, a new visitor key, the site unpublished).
func (r *Resolver) AdmitVisitorToken(ctx context.Context, token string) (*Visitor, error) {
	if !IsVisitorToken(token) || len(token) > maxVisitorAPIToken {
		return nil, ErrUnauthenticated
	}
	key, err := r.visitorTokenKey(ctx)
	if err != nil {
		return nil, err
	}
	t := &siteToken{}
	_, err = jwt.ParseWithClaims(token, t, func(*jwt.Token) (any, error) { return key, nil },
		// SECURITY: the server's own tokens only: its algorithm, its key,
		// an expiry, and not past it.
		jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}), jwt.WithExpirationRequired(), jwt.WithTimeFunc(r.now))
	if err != nil || t.Kind != "site" || t.Organization == "" || t.Site == "" {
		return nil, ErrUnauthenticated
	}
	if r.DB.Replicated() {
		// SECURITY: on the primary, never a replica that may not have
		// seen a share link turned off or a site unpublished.
		ctx = store.OnPrimary(ctx)
	}
	site, err := r.siteAt(ctx, "id "+t.Organization+"/"+t.Site, func() (*store.Site, error) {
		return store.GetSite(ctx, r.DB, t.Organization, t.Site)
	})
	if err != nil {
		return nil, err
	}
	// SECURITY: the site as it is now: published, and its audience
	// satisfied by what admitted the visitor then.
	if site == nil || !site.Published {
		return nil, ErrUnauthenticated
	}
	v, err := r.admit(ctx, site, tokenProofs{t: t, key: key})
	var authRequired *VisitorAuthRequired
	if errors.Is(err, errVisitorTokenRevoked) || errors.As(err, &authRequired) || isNotFound(err) {
		return nil, ErrUnauthenticated
	} else if err != nil {
		return nil, err
	}
	digest := sha256.Sum256([]byte(token))
	v.budgetKey = "visitor-token:" + hex.EncodeToString(digest[:12])
	return v, nil
}

// BudgetKey is whose rate budget the visitor draws on: its API token's;
// "" for a visitor of the reader, which has no budget.
func (v *Visitor) BudgetKey() string { return v.budgetKey }

// tokenProofs are the proofs a visitor API token recorded, checked against
// the site as it is now.
type tokenProofs struct {
	t   *siteToken
	key []byte
}

func (p tokenProofs) holds(siteID, secret, recorded string) bool {
	return secret != "" && recorded != "" && hmac.Equal([]byte(fingerprint(p.key, siteID, secret)), []byte(recorded))
}

func (p tokenProofs) shareKey(ctx context.Context, r *Resolver, s *store.Site) (string, string, error) {
	if p.t.Proof != ProofShareKey {
		return "", "", nil
	}
	key := s.ShareKey
	if p.t.ShareLink != "" {
		link, err := r.shareLinkByID(ctx, s, p.t.ShareLink)
		if err != nil || link == nil || !link.Active {
			return "", "", err
		}
		key = link.Key
	}
	// SECURITY: the same key as then: the site's own key, or its share
	// link's, unchanged and active.
	if !p.holds(s.ID, key, p.t.ShareKey) {
		return "", "", nil
	}
	return key, p.t.ShareLink, nil
}

func (p tokenProofs) visitorToken(_ *Resolver, auth *store.SitePublishingAuth) (map[string]any, time.Time, error) {
	// SECURITY: claims verified with the site's visitor key as it is now.
	if p.t.Proof != ProofToken || !p.holds(auth.SiteID, auth.PrivateKey, p.t.VisitorKey) {
		return nil, time.Time{}, errVisitorTokenRevoked
	}
	return p.signed(), p.t.ExpiresAt.Time, nil
}

func (p tokenProofs) offersSignedClaims() bool { return p.t.VisitorKey != "" }

func (p tokenProofs) adaptiveClaims(_ *Resolver, auth *store.SitePublishingAuth) (map[string]any, time.Time, error) {
	if !p.holds(auth.SiteID, auth.PrivateKey, p.t.VisitorKey) {
		return nil, time.Time{}, errVisitorTokenRevoked
	}
	return p.signed(), p.t.ExpiresAt.Time, nil
}

// signed are the token's signed claims: its claims but the unsigned ones,
// which admission keeps again as the site's schema declares them now.
func (p tokenProofs) signed() map[string]any {
	out := make(map[string]any, len(p.t.Claims))
	for k, v := range p.t.Claims {
		if k != "unsigned" {
			out[k] = v
		}
	}
	return out
}

func (p tokenProofs) unsigned() map[string]any {
	u, _ := p.t.Claims["unsigned"].(map[string]any)
	return u
}

// shareLinkByID is share link id of site s (nil: none), from memory while
// nothing of the site changed.
func (r *Resolver) shareLinkByID(ctx context.Context, s *store.Site, id string) (*store.SiteShareLink, error) {
	// By id, after the site's id and a \x01 (by key: validShareKey, with a
	// NUL): a key never reads as an id.
	return remembered(r, &r.siteSecrets.links, s.ID+"\x01"+id, s.ID, func() (*store.SiteShareLink, error) {
		l, err := store.GetSiteShareLink(ctx, r.DB, s.OrganizationID, s.ID, id)
		if errors.Is(err, store.ErrNotFound) {
			return nil, nil
		}
		return l, err
	})
}

// contextID is what a page made for visitor v depends on beyond its site
// and content: its claims. Front ends key what they keep by it (GitBook's
// PublishedSiteContent.contextId); "" for a visitor without claims.
func contextID(v *Visitor) string {
	if len(v.claims) == 0 {
		return ""
	}
	b, err := json.Marshal(v.claims) // a map's keys sorted: the same claims, the same bytes
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16])
}

// sortedUnique is ids sorted, each once.
func sortedUnique(ids []string) []string {
	out := slices.Clone(ids)
	slices.Sort(out)
	return slices.Compact(out)
}
