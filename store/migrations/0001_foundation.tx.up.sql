-- Users, their API tokens, organizations and memberships, spaces, and the
-- site tree (sites, section groups, sections, site spaces).
--
-- Every tenant-owned table carries organization_id: it is the distribution
-- key should the data ever be sharded by organization (DESIGN.md section 10).

CREATE TABLE users (
    id           text PRIMARY KEY,
    email        text NOT NULL,
    display_name text NOT NULL,
    photo_url    text,
    created_at   timestamptz NOT NULL,
    updated_at   timestamptz NOT NULL
);
CREATE UNIQUE INDEX users_email_key ON users (lower(email));

-- Tokens are stored as SHA-256 digests: a database dump does not hand out
-- credentials. Tokens are long random strings, so a fast hash is enough.
CREATE TABLE api_tokens (
    id           text PRIMARY KEY,
    user_id      text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    token_sha256 bytea NOT NULL UNIQUE,
    label        text NOT NULL DEFAULT '',
    created_at   timestamptz NOT NULL
);
CREATE INDEX api_tokens_user_id_idx ON api_tokens (user_id);

CREATE TABLE organizations (
    id              text PRIMARY KEY,
    title           text NOT NULL,
    email_domains   text[] NOT NULL DEFAULT '{}',
    hostname        text,
    type            text NOT NULL DEFAULT 'business',
    use_case        text,
    community_type  text,
    -- NULL is "guest": a member with no role by default.
    default_role    text,
    default_site_id text,
    logo            text,
    sso             boolean NOT NULL DEFAULT false,
    ai              boolean NOT NULL DEFAULT false,
    invite_links    boolean NOT NULL DEFAULT true,
    plan            text NOT NULL DEFAULT 'free_2024',
    merge_rules     jsonb NOT NULL DEFAULT '{"type":"none"}',
    agent_instructions            jsonb,
    agent_instructions_updated_at timestamptz,
    agent_instructions_updated_by text,
    created_at      timestamptz NOT NULL,
    updated_at      timestamptz NOT NULL
);
CREATE UNIQUE INDEX organizations_hostname_key ON organizations (hostname) WHERE hostname IS NOT NULL;
CREATE INDEX organizations_created_idx ON organizations (created_at, id);

CREATE TABLE organization_members (
    organization_id text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    user_id         text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    -- NULL is a guest.
    role            text,
    joined_at       timestamptz NOT NULL,
    last_seen_at    timestamptz,
    disabled        boolean NOT NULL DEFAULT false,
    sso             boolean NOT NULL DEFAULT false,
    PRIMARY KEY (organization_id, user_id)
);
CREATE INDEX organization_members_user_idx ON organization_members (user_id, organization_id);

CREATE TABLE spaces (
    id              text PRIMARY KEY,
    organization_id text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    title           text NOT NULL DEFAULT '',
    emoji           text NOT NULL DEFAULT '',
    icon            text,
    visibility      text NOT NULL DEFAULT 'private',
    edit_mode       text NOT NULL DEFAULT 'live',
    merge_rules     jsonb NOT NULL DEFAULT '{"type":"inherit"}',
    language        text,
    -- A role name, 'inherit', or NULL for "guest" (no access by default).
    default_level   text DEFAULT 'inherit',
    parent_id       text,
    revision_id     text NOT NULL,
    created_by      text,
    created_at      timestamptz NOT NULL,
    updated_at      timestamptz NOT NULL,
    deleted_at      timestamptz
);
CREATE INDEX spaces_org_idx ON spaces (organization_id, created_at, id) WHERE deleted_at IS NULL;
CREATE INDEX spaces_deleted_idx ON spaces (deleted_at) WHERE deleted_at IS NOT NULL;

CREATE TABLE sites (
    id                  text PRIMARY KEY,
    organization_id     text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    type                text NOT NULL DEFAULT 'basic',
    title               text NOT NULL,
    icon                jsonb,
    hostname            text,
    basename            text,
    proxy_origin        text,
    visibility          text NOT NULL DEFAULT 'public',
    published           boolean NOT NULL DEFAULT false,
    share_key           text NOT NULL,
    adaptive_content    boolean NOT NULL DEFAULT false,
    adaptive_schema     jsonb,
    adaptive_schema_updated_at timestamptz,
    agents_context      text NOT NULL DEFAULT 'included',
    created_at          timestamptz NOT NULL,
    updated_at          timestamptz NOT NULL
);
CREATE INDEX sites_org_idx ON sites (organization_id, created_at, id);
CREATE UNIQUE INDEX sites_hostname_key ON sites (hostname) WHERE hostname IS NOT NULL;

-- The site structure: groups and sections share one ordering per container
-- (the site root or a group), so both carry a position; site spaces are
-- ordered within their section (or the site root when the site has no
-- sections). Writes to a site's structure lock the site row, which is what
-- keeps positions unique under concurrent writers.
CREATE TABLE site_section_groups (
    id              text PRIMARY KEY,
    organization_id text NOT NULL,
    site_id         text NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    parent_group_id text REFERENCES site_section_groups (id) ON DELETE CASCADE,
    title           text NOT NULL,
    icon            text,
    position        integer NOT NULL,
    created_at      timestamptz NOT NULL
);
CREATE INDEX site_section_groups_site_idx ON site_section_groups (site_id, position, id);
ALTER TABLE site_section_groups ADD CONSTRAINT site_section_groups_position_key
    UNIQUE NULLS NOT DISTINCT (site_id, parent_group_id, position) DEFERRABLE INITIALLY DEFERRED;

CREATE TABLE site_sections (
    id              text PRIMARY KEY,
    organization_id text NOT NULL,
    site_id         text NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    group_id        text REFERENCES site_section_groups (id) ON DELETE SET NULL,
    title           text NOT NULL,
    description     text,
    path            text NOT NULL,
    icon            text,
    condition       text,
    is_default      boolean NOT NULL DEFAULT false,
    position        integer NOT NULL,
    created_at      timestamptz NOT NULL
);
CREATE INDEX site_sections_site_idx ON site_sections (site_id, position, id);
CREATE UNIQUE INDEX site_sections_path_key ON site_sections (site_id, path);
ALTER TABLE site_sections ADD CONSTRAINT site_sections_position_key
    UNIQUE NULLS NOT DISTINCT (site_id, group_id, position) DEFERRABLE INITIALLY DEFERRED;
CREATE UNIQUE INDEX site_sections_default_key ON site_sections (site_id) WHERE is_default;

CREATE TABLE site_spaces (
    id              text PRIMARY KEY,
    organization_id text NOT NULL,
    site_id         text NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    section_id      text REFERENCES site_sections (id) ON DELETE CASCADE,
    space_id        text NOT NULL REFERENCES spaces (id) ON DELETE CASCADE,
    path            text NOT NULL,
    condition       text,
    is_default      boolean NOT NULL DEFAULT false,
    position        integer NOT NULL,
    created_at      timestamptz NOT NULL
);
CREATE INDEX site_spaces_site_idx ON site_spaces (site_id, position, id);
CREATE INDEX site_spaces_space_idx ON site_spaces (space_id);
ALTER TABLE site_spaces ADD CONSTRAINT site_spaces_position_key
    UNIQUE NULLS NOT DISTINCT (site_id, section_id, position) DEFERRABLE INITIALLY DEFERRED;
CREATE UNIQUE INDEX site_spaces_path_key ON site_spaces (site_id, section_id, path) NULLS NOT DISTINCT;
CREATE UNIQUE INDEX site_spaces_default_key ON site_spaces (site_id, section_id) NULLS NOT DISTINCT WHERE is_default;
