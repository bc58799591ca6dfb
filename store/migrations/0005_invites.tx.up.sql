-- Invite links to an organization. The id is the link's secret: whoever holds
-- it may join with the invite's role while the organization allows invite
-- links.
CREATE TABLE organization_invites (
    id              text PRIMARY KEY,
    organization_id text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    -- NULL invites guests.
    role            text,
    created_by      text REFERENCES users (id) ON DELETE SET NULL,
    created_at      timestamptz NOT NULL
);
CREATE INDEX organization_invites_organization_idx ON organization_invites (organization_id, created_at, id);

-- Organizations a user may join by email domain.
CREATE INDEX organizations_email_domains_idx ON organizations USING gin (email_domains);
