package graph

import (
	"context"
	"errors"
	"net/mail"
	"strings"

	"github.com/uptrace/bun"

	"github.com/docsapi/docsapi/store"
)

// Instance administration: users and their tokens. These are not part of the
// tenant API (an instance administrator is not a member of anything), so
// they are plain functions called by /admin and the docsapi CLI.

// NewUser is what an administrator gets back when creating a user: the user
// and their first API token, shown this once.
type NewUser struct {
	User  *store.User `json:"user"`
	Token string      `json:"token"`
}

// CreateUser creates a user with an API token.
func (r *Resolver) CreateUser(ctx context.Context, email, displayName string) (*NewUser, error) {
	email = strings.TrimSpace(email)
	if addr, err := mail.ParseAddress(email); err != nil || addr.Address != email {
		return nil, Invalid("email", "must be an email address")
	}
	displayName = strings.TrimSpace(displayName)
	if err := checkLength("displayName", displayName, 1, 255); err != nil {
		return nil, err
	}
	var out *NewUser
	err := store.RunInTx(ctx, r.DB, func(ctx context.Context, tx bun.Tx) error {
		var err error
		out, err = r.createUser(ctx, tx, email, displayName, store.NewSecret())
		return err
	})
	if errors.Is(err, store.ErrConflict) {
		return nil, Conflict("a user with email %s already exists", email)
	}
	return out, err
}

func (r *Resolver) createUser(ctx context.Context, tx bun.IDB, email, displayName, token string) (*NewUser, error) {
	now := r.now()
	u := &store.User{ID: store.NewID(), Email: email, DisplayName: displayName, CreatedAt: now, UpdatedAt: now}
	if err := store.CreateUser(ctx, tx, u); err != nil {
		return nil, err
	}
	if _, err := store.AddToken(ctx, tx, u.ID, token, "created by an administrator", now, nil); err != nil {
		return nil, err
	}
	return &NewUser{User: u, Token: token}, nil
}

// CreateToken issues a new API token for user userID.
func (r *Resolver) CreateToken(ctx context.Context, userID string, developer bool) (string, error) {
	if _, err := store.GetUser(ctx, r.DB, userID); err != nil {
		return "", orNotFound(err, "user")
	}
	// SECURITY: an organization enforcing single sign-on lets its non-admin
	// members in only through its identity provider (graph/sso_login.go).
	if org, err := store.SSOEnforcingOrganization(ctx, r.DB, userID); err != nil {
		return "", err
	} else if org != "" {
		return "", Forbidden("organization %s enforces single sign-on: this user signs in with its SAML provider", org)
	}
	token := store.NewSecret()
	add := func() error {
		_, err := store.AddToken(ctx, r.DB, userID, token, "created by an administrator", r.now(), nil)
		return err
	}
	if developer {
		add = func() error {
			_, err := store.AddDeveloperToken(ctx, r.DB, userID, token, "developer token created by an administrator", r.now())
			return err
		}
	}
	if err := add(); err != nil {
		return "", err
	}
	return token, nil
}

// Bootstrap makes an empty instance usable at once: it creates an owner, an
// organization the owner administers, and registers token as the owner's API
// token. On an instance that has users it does nothing and reports false.
// Several instances starting together are serialised by a transaction lock.
func (r *Resolver) Bootstrap(ctx context.Context, token, email, orgTitle string) (bool, error) {
	if len(token) < 16 {
		return false, errors.New("the bootstrap token must be at least 16 characters")
	}
	created := false
	err := store.RunInTx(ctx, r.DB, func(ctx context.Context, tx bun.Tx) error {
		if err := store.LockBootstrap(ctx, tx); err != nil {
			return err
		}
		n, err := store.CountUsers(ctx, tx)
		if err != nil || n > 0 {
			return err
		}
		owner, err := r.createUser(ctx, tx, email, "Owner", token)
		if err != nil {
			return err
		}
		now := r.now()
		org := newOrganization(orgTitle, owner.User.ID, now)
		created = true
		return store.CreateOrganization(ctx, tx, org, owner.User.ID)
	})
	return created, err
}
