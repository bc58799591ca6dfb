-- SAML single sign-on (spec 4.17 and 2.24): the identity providers an
-- organization's members sign in with, and the authentication requests sent
-- to them (graph/saml.go, graph/sso_login.go).
CREATE TABLE saml_providers (
    id              text PRIMARY KEY,
    organization_id text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    label           text NOT NULL,
    -- The identity provider: its single sign-on URL, its entity ID (the
    -- Issuer of its responses) and the PEM certificate its signatures are
    -- checked against. Empty until configured: the provider is 'pending'.
    sso_url         text NOT NULL DEFAULT '',
    entity_id       text NOT NULL DEFAULT '',
    certificate     text NOT NULL DEFAULT '',
    default_team_id text REFERENCES teams (id) ON DELETE SET NULL,
    default_role    text,
    created_at      timestamptz NOT NULL,
    updated_at      timestamptz NOT NULL
);
CREATE INDEX saml_providers_list_idx ON saml_providers (organization_id, created_at, id);

-- Every AuthnRequest sent: a response is accepted only InResponseTo one of
-- these, once (consumed_at is set by the sign-in it made), and only while
-- it is recent.
CREATE TABLE saml_requests (
    id          text PRIMARY KEY,
    provider_id text NOT NULL REFERENCES saml_providers (id) ON DELETE CASCADE,
    created_at  timestamptz NOT NULL,
    consumed_at timestamptz
);
CREATE INDEX saml_requests_created_idx ON saml_requests (created_at);
