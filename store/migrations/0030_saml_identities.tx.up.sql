-- A SAML sign-in never borrows an identity (graph/sso_login.go,
-- graph/sso_link.go): an identity provider is run by whoever administers
-- its organization, so what it asserts is trusted for that organization
-- only, and never to say which existing account someone owns.

-- The federated identities: the NameID a provider asserts, bound to one
-- user. Bound either when the sign-in created that user, or when the user
-- linked the provider from their own authenticated session. Never by email.
CREATE TABLE saml_identities (
    provider_id     text NOT NULL REFERENCES saml_providers (id) ON DELETE CASCADE,
    name_id         text NOT NULL,
    user_id         text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    organization_id text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    created_at      timestamptz NOT NULL,
    PRIMARY KEY (provider_id, name_id),
    -- One identity per user at each provider.
    UNIQUE (provider_id, user_id)
);
CREATE INDEX saml_identities_user_idx ON saml_identities (user_id);

-- A link flow is an AuthnRequest started by an authenticated user
-- (link_user_id). The provider's answer does not bind yet: it records the
-- verified NameID and hands the browser a one-time code (its digest here),
-- which the same user confirms with their token. Both halves are needed, so
-- a link started by one person cannot capture another person's identity.
ALTER TABLE saml_requests
    ADD COLUMN link_user_id     text REFERENCES users (id) ON DELETE CASCADE,
    ADD COLUMN link_name_id     text,
    ADD COLUMN link_code_sha256 bytea UNIQUE;
