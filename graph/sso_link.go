package graph

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"github.com/docsapi/docsapi/store"
)

// Linking an identity provider to an existing account. A sign-in never
// binds an existing user (sso_login.go): the owner of the account does it,
// from their own authenticated session, in three steps:
//
//	POST /sso/saml/{providerId}/link          (token) → {url, expiresAt, confirmURL}
//	   the browser goes to url and signs in at the identity provider, which
//	   posts to the ACS URL as for any sign-in; the ACS verifies the answer
//	   and shows the browser a one-time code instead of signing in
//	POST /sso/saml/{providerId}/link/confirm  (token) {code} → the identity, now linked
//
// Both halves are needed: the link request is the token's user's, and the
// code goes only to the browser that signed in at the provider. So a link
// started by one person and completed by another (someone sent a link URL,
// whose provider session answers it without asking) links nothing: the
// code stays with the second person, who holds no token of the first. The
// request is one-time and answered within samlRequestLifetime; the code is
// one-time and works for samlRequestLifetime after that answer.
//
// A token confined to an organization (a sign-in's session) links only its
// organization's providers. Each user has at most one identity at a
// provider, and each identity belongs to one user.

// SSOLinkStart is what starting a link flow answers.
type SSOLinkStart struct {
	// URL is where the browser signs in at the identity provider: an
	// AuthnRequest of this link flow.
	URL string `json:"url"`
	// ExpiresAt is when the identity provider's answer stops being accepted.
	ExpiresAt time.Time `json:"expiresAt"`
	// ConfirmURL is where the code the answer shows is confirmed.
	ConfirmURL string `json:"confirmURL"`
}

// SSOLinkHeld is what the ACS answers to a link flow's request.
type SSOLinkHeld struct {
	// LinkCode confirms the link, once, with the token that started it.
	LinkCode string `json:"linkCode"`
	// ExpiresAt is when the code stops working.
	ExpiresAt    time.Time `json:"expiresAt"`
	ConfirmURL   string    `json:"confirmURL"`
	Provider     string    `json:"provider"`
	Organization string    `json:"organization"`
}

// SSOLinked is what confirming a link answers: the identity now bound.
type SSOLinked struct {
	Provider     string    `json:"provider"`
	Organization string    `json:"organization"`
	User         string    `json:"user"`
	NameID       string    `json:"nameID"`
	LinkedAt     time.Time `json:"linkedAt"`
}

// StartSAMLLink starts a link flow for the caller at provider providerID:
// an AuthnRequest carrying the link intent, whose redirect URL is answered
// (the call is an API call, not a browser's).
func (r *Resolver) StartSAMLLink(ctx context.Context, providerID string) (*SSOLinkStart, error) {
	caller, err := CallerFrom(ctx)
	if err != nil {
		return nil, err
	}
	p, sp, err := r.samlServiceProvider(ctx, providerID, true)
	if err != nil {
		return nil, err
	}
	// SECURITY: a sign-in's session links its own organization's providers only.
	if err := requireReach(ctx, p.OrganizationID, "link another organization's identity provider"); err != nil {
		return nil, err
	}
	to, err := r.startSAMLRequest(ctx, p, sp, &caller.User.ID)
	if err != nil {
		return nil, err
	}
	return &SSOLinkStart{URL: to.String(), ExpiresAt: r.now().Add(samlRequestLifetime), ConfirmURL: r.linkConfirmURL(p)}, nil
}

// holdSAMLLink answers, in tx, a link flow's request sent: the identity
// person is checked to be linkable to the user who started it, and held
// for them under a new one-time code.
func (r *Resolver) holdSAMLLink(ctx context.Context, tx bun.Tx, p *store.SAMLProvider, sent *store.SAMLRequest, person samlPerson, now time.Time) (*SSOLinkHeld, error) {
	if _, err := linkedIdentity(ctx, tx, p, person.nameID, *sent.LinkUserID); err != nil {
		return nil, err
	}
	code := store.NewSecret()
	if err := store.HoldSAMLLink(ctx, tx, sent.ID, person.nameID, store.TokenDigest(code)); err != nil {
		return nil, err
	}
	return &SSOLinkHeld{LinkCode: code, ExpiresAt: now.Add(samlRequestLifetime), ConfirmURL: r.linkConfirmURL(p),
		Provider: p.ID, Organization: p.OrganizationID}, nil
}

// linkedIdentity tells whether nameID at p may be linked to userID: it
// returns the identity when it is userID's already, nil when it is free to
// link, and a Conflict (409) when it is another user's or userID has
// another identity at p.
func linkedIdentity(ctx context.Context, db bun.IDB, p *store.SAMLProvider, nameID, userID string) (*store.SAMLIdentity, error) {
	// SECURITY: a bound identity stays its user's: linking never moves it.
	if bound, err := store.SAMLIdentityByNameID(ctx, db, p.ID, nameID); err == nil {
		if bound.UserID != userID {
			return nil, Conflict("this identity at the provider is another account's already")
		}
		return bound, nil
	} else if !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	if _, err := store.SAMLIdentityOfUser(ctx, db, p.ID, userID); err == nil {
		return nil, Conflict("your account is linked to another identity at this provider already")
	} else if !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	return nil, nil
}

// ConfirmSAMLLink binds to the caller the identity a link flow's answer
// holds at provider providerID, given the code that answer showed.
func (r *Resolver) ConfirmSAMLLink(ctx context.Context, providerID, code string) (*SSOLinked, error) {
	caller, err := CallerFrom(ctx)
	if err != nil {
		return nil, err
	}
	p, err := store.SAMLProviderByID(ctx, r.DB, providerID)
	if err := orNotFound(err, "SAML provider"); err != nil {
		return nil, err
	}
	// SECURITY: a sign-in's session links its own organization's providers only.
	if err := requireReach(ctx, p.OrganizationID, "link another organization's identity provider"); err != nil {
		return nil, err
	}
	if strings.TrimSpace(code) == "" {
		return nil, Invalid("code", "is required: the code the identity provider's answer showed, as JSON {\"code\": \"...\"}")
	}
	var linked *SSOLinked
	err = store.RunInTx(ctx, r.DB, func(ctx context.Context, tx bun.Tx) error {
		now := r.now()
		// SECURITY: the code is one-time, the caller's own (the link's
		// user), this provider's, and recent; a wrong one reveals nothing.
		nameID, err := store.TakeSAMLLink(ctx, tx, p.ID, caller.User.ID, store.TokenDigest(strings.TrimSpace(code)), now.Add(-samlRequestLifetime))
		if errors.Is(err, store.ErrNotFound) {
			return Forbidden("the link code is unknown, expired, already used, or not from a link you started: start the link again")
		} else if err != nil {
			return err
		}
		identity, err := linkedIdentity(ctx, tx, p, nameID, caller.User.ID)
		if err != nil {
			return err
		}
		if identity == nil { // else linked already: confirming again changes nothing
			identity = &store.SAMLIdentity{ProviderID: p.ID, NameID: nameID, UserID: caller.User.ID, OrganizationID: p.OrganizationID, CreatedAt: now}
			if err := store.BindSAMLIdentity(ctx, tx, identity); errors.Is(err, store.ErrConflict) {
				return Conflict("this identity, or your account, was linked concurrently: start the link again")
			} else if err != nil {
				return err
			}
		}
		linked = &SSOLinked{Provider: p.ID, Organization: p.OrganizationID, User: identity.UserID, NameID: identity.NameID, LinkedAt: identity.CreatedAt}
		return nil
	})
	if err != nil {
		return nil, err
	}
	// Their own write: their next reads wait for a replica that has it.
	r.DB.RecordWrite(ctx, caller.User.ID)
	r.Log.InfoContext(ctx, "saml identity linked", "provider", p.ID, "user", caller.User.ID)
	return linked, nil
}

func (r *Resolver) linkConfirmURL(p *store.SAMLProvider) string {
	return r.URLs.API(SAMLPath + pathEscape(p.ID) + "/link/confirm")
}
