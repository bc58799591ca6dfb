-- An API token may be confined to one organization: a SAML sign-in's
-- session reaches the provider's organization and nothing else. NULL: every
-- organization of the user, as before.
ALTER TABLE api_tokens ADD COLUMN organization_id text REFERENCES organizations (id) ON DELETE CASCADE;
CREATE INDEX api_tokens_organization_idx ON api_tokens (organization_id) WHERE organization_id IS NOT NULL;
