-- The tenant on every row (docs/scaling.md, "Distributing the schema"):
-- every table that belongs to one organization carries organization_id,
-- NOT NULL, in its primary key or in a unique key, so that an
-- organization's rows can be found, exported, deleted, policed or
-- distributed (Citus, by organization_id) without joining to a parent.
--
-- The tables shared by every organization (reference tables) do not:
-- users, api_tokens (a token is looked up before any organization is
-- known; organization_id there is an optional scope), organizations (the
-- tenants themselves), integrations (published by one organization,
-- installed by any), server_secrets and saml_service_keys (the instance's).
--
-- Works on a database that has data: each table gets the column nullable,
-- is filled from its parent's rows by one set-based UPDATE (parents before
-- children), and only then is the column made NOT NULL and put in keys.

-- 1. Children of a space.
ALTER TABLE revisions ADD COLUMN organization_id text;
ALTER TABLE change_requests ADD COLUMN organization_id text;
ALTER TABLE comments ADD COLUMN organization_id text;
UPDATE revisions t SET organization_id = s.organization_id FROM spaces s WHERE s.id = t.space_id;
UPDATE change_requests t SET organization_id = s.organization_id FROM spaces s WHERE s.id = t.space_id;
UPDATE comments t SET organization_id = s.organization_id FROM spaces s WHERE s.id = t.space_id;

-- 2. Children of a revision, a change request, a comment.
ALTER TABLE revision_pages ADD COLUMN organization_id text;
ALTER TABLE revision_files ADD COLUMN organization_id text;
UPDATE revision_pages t SET organization_id = r.organization_id FROM revisions r WHERE r.id = t.revision_id;
UPDATE revision_files t SET organization_id = r.organization_id FROM revisions r WHERE r.id = t.revision_id;

ALTER TABLE change_request_contributors ADD COLUMN organization_id text;
ALTER TABLE change_request_reviews ADD COLUMN organization_id text;
ALTER TABLE change_request_requested_reviewers ADD COLUMN organization_id text;
UPDATE change_request_contributors t SET organization_id = cr.organization_id FROM change_requests cr WHERE cr.id = t.change_request_id;
UPDATE change_request_reviews t SET organization_id = cr.organization_id FROM change_requests cr WHERE cr.id = t.change_request_id;
UPDATE change_request_requested_reviewers t SET organization_id = cr.organization_id FROM change_requests cr WHERE cr.id = t.change_request_id;

ALTER TABLE comment_replies ADD COLUMN organization_id text;
UPDATE comment_replies t SET organization_id = c.organization_id FROM comments c WHERE c.id = t.comment_id;

-- A reaction's target is a comment or a reply (no foreign key): reactions
-- whose target is gone are left over from deletions and shown nowhere.
ALTER TABLE comment_reactions ADD COLUMN organization_id text;
UPDATE comment_reactions t SET organization_id = c.organization_id FROM comments c WHERE c.id = t.target_id;
UPDATE comment_reactions t SET organization_id = r.organization_id FROM comment_replies r
    WHERE r.id = t.target_id AND t.organization_id IS NULL;
DELETE FROM comment_reactions WHERE organization_id IS NULL;

-- 3. Children of organization-level rows.
ALTER TABLE openapi_spec_versions ADD COLUMN organization_id text;
UPDATE openapi_spec_versions t SET organization_id = s.organization_id FROM openapi_specs s WHERE s.id = t.spec_id;

ALTER TABLE integration_space_installations ADD COLUMN organization_id text;
ALTER TABLE integration_site_installations ADD COLUMN organization_id text;
UPDATE integration_space_installations t SET organization_id = i.organization_id FROM integration_installations i WHERE i.id = t.installation_id;
UPDATE integration_site_installations t SET organization_id = i.organization_id FROM integration_installations i WHERE i.id = t.installation_id;

ALTER TABLE integration_event_logs ADD COLUMN organization_id text;
UPDATE integration_event_logs t SET organization_id = e.organization_id FROM integration_events e WHERE e.id = t.integration_event_id;

ALTER TABLE saml_requests ADD COLUMN organization_id text;
UPDATE saml_requests t SET organization_id = p.organization_id FROM saml_providers p WHERE p.id = t.provider_id;

-- 4. Page bodies and their search sections were stored once per distinct
-- text for the whole instance. They become an organization's: one copy per
-- organization whose pages show the text (a text two organizations share is
-- stored twice; deduplication stays within an organization). A body no page
-- shows any more is dropped with its sections (nothing can read it).
ALTER TABLE revision_pages DROP CONSTRAINT revision_pages_body_sha256_fkey;
ALTER TABLE body_sections DROP CONSTRAINT body_sections_body_sha256_fkey;
ALTER TABLE page_bodies DROP CONSTRAINT page_bodies_pkey;
ALTER TABLE body_sections DROP CONSTRAINT body_sections_pkey;

ALTER TABLE page_bodies ADD COLUMN organization_id text;
ALTER TABLE body_sections ADD COLUMN organization_id text;

CREATE TEMPORARY TABLE body_owners ON COMMIT DROP AS
    SELECT DISTINCT organization_id, body_sha256 FROM revision_pages WHERE body_sha256 IS NOT NULL;

INSERT INTO page_bodies (organization_id, sha256, markdown)
    SELECT o.organization_id, b.sha256, b.markdown FROM page_bodies b JOIN body_owners o ON o.body_sha256 = b.sha256;
INSERT INTO body_sections (organization_id, body_sha256, position, anchor, heading, body)
    SELECT o.organization_id, s.body_sha256, s.position, s.anchor, s.heading, s.body
    FROM body_sections s JOIN body_owners o ON o.body_sha256 = s.body_sha256
    WHERE s.organization_id IS NULL;
-- The instance-wide originals.
DELETE FROM body_sections WHERE organization_id IS NULL;
DELETE FROM page_bodies WHERE organization_id IS NULL;

-- 5. NOT NULL, now that every row has its organization.
ALTER TABLE revisions ALTER COLUMN organization_id SET NOT NULL;
ALTER TABLE change_requests ALTER COLUMN organization_id SET NOT NULL;
ALTER TABLE comments ALTER COLUMN organization_id SET NOT NULL;
ALTER TABLE revision_pages ALTER COLUMN organization_id SET NOT NULL;
ALTER TABLE revision_files ALTER COLUMN organization_id SET NOT NULL;
ALTER TABLE change_request_contributors ALTER COLUMN organization_id SET NOT NULL;
ALTER TABLE change_request_reviews ALTER COLUMN organization_id SET NOT NULL;
ALTER TABLE change_request_requested_reviewers ALTER COLUMN organization_id SET NOT NULL;
ALTER TABLE comment_replies ALTER COLUMN organization_id SET NOT NULL;
ALTER TABLE comment_reactions ALTER COLUMN organization_id SET NOT NULL;
ALTER TABLE openapi_spec_versions ALTER COLUMN organization_id SET NOT NULL;
ALTER TABLE integration_space_installations ALTER COLUMN organization_id SET NOT NULL;
ALTER TABLE integration_site_installations ALTER COLUMN organization_id SET NOT NULL;
ALTER TABLE integration_event_logs ALTER COLUMN organization_id SET NOT NULL;
ALTER TABLE saml_requests ALTER COLUMN organization_id SET NOT NULL;
ALTER TABLE page_bodies ALTER COLUMN organization_id SET NOT NULL;
ALTER TABLE body_sections ALTER COLUMN organization_id SET NOT NULL;

-- 6. Keys. organization_id comes last in each: every key's leading columns
-- stay what the reads look rows up by (an id, a revision), so no read gets
-- slower, and a parent already determines its organization, so the keys
-- are as unique as before.
--
-- Bodies: per organization, and referred to with it.
ALTER TABLE page_bodies ADD PRIMARY KEY (sha256, organization_id);
ALTER TABLE body_sections ADD PRIMARY KEY (body_sha256, position, organization_id);
ALTER TABLE body_sections ADD FOREIGN KEY (body_sha256, organization_id)
    REFERENCES page_bodies (sha256, organization_id) ON DELETE CASCADE;
ALTER TABLE revision_pages ADD FOREIGN KEY (body_sha256, organization_id)
    REFERENCES page_bodies (sha256, organization_id);

-- Tables no foreign key refers to: organization_id joins the primary key.
ALTER TABLE revision_pages DROP CONSTRAINT revision_pages_pkey,
    ADD PRIMARY KEY (revision_id, page_id, organization_id);
ALTER TABLE revision_files DROP CONSTRAINT revision_files_pkey,
    ADD PRIMARY KEY (revision_id, file_id, organization_id);
ALTER TABLE change_request_contributors DROP CONSTRAINT change_request_contributors_pkey,
    ADD PRIMARY KEY (change_request_id, user_id, organization_id);
ALTER TABLE change_request_requested_reviewers DROP CONSTRAINT change_request_requested_reviewers_pkey,
    ADD PRIMARY KEY (change_request_id, user_id, organization_id);
ALTER TABLE change_request_reviews DROP CONSTRAINT change_request_reviews_pkey,
    ADD PRIMARY KEY (id, organization_id);
ALTER TABLE comment_replies DROP CONSTRAINT comment_replies_pkey,
    ADD PRIMARY KEY (id, organization_id);
ALTER TABLE comment_reactions DROP CONSTRAINT comment_reactions_pkey,
    ADD PRIMARY KEY (target_id, user_id, emoji, organization_id);
ALTER TABLE openapi_spec_versions DROP CONSTRAINT openapi_spec_versions_pkey,
    ADD PRIMARY KEY (id, organization_id);
ALTER TABLE integration_space_installations DROP CONSTRAINT integration_space_installations_pkey,
    ADD PRIMARY KEY (installation_id, space_id, organization_id);
ALTER TABLE integration_site_installations DROP CONSTRAINT integration_site_installations_pkey,
    ADD PRIMARY KEY (installation_id, site_id, organization_id);
ALTER TABLE integration_event_logs DROP CONSTRAINT integration_event_logs_pkey,
    ADD PRIMARY KEY (integration_event_id, seq, organization_id);
ALTER TABLE saml_requests DROP CONSTRAINT saml_requests_pkey,
    ADD PRIMARY KEY (id, organization_id);
ALTER TABLE team_members DROP CONSTRAINT team_members_pkey,
    ADD PRIMARY KEY (team_id, user_id, organization_id);
ALTER TABLE saml_identities DROP CONSTRAINT saml_identities_pkey,
    ADD PRIMARY KEY (provider_id, name_id, organization_id);
ALTER TABLE live_events DROP CONSTRAINT live_events_pkey,
    ADD PRIMARY KEY (id, organization_id);
ALTER TABLE organization_invites DROP CONSTRAINT organization_invites_pkey,
    ADD PRIMARY KEY (id, organization_id);
ALTER TABLE translations DROP CONSTRAINT translations_pkey,
    ADD PRIMARY KEY (id, organization_id);
ALTER TABLE conversation_issues DROP CONSTRAINT conversation_issues_pkey,
    ADD PRIMARY KEY (id, organization_id);
ALTER TABLE site_spaces DROP CONSTRAINT site_spaces_pkey,
    ADD PRIMARY KEY (id, organization_id);

-- Tables foreign keys refer to by id keep that primary key (the foreign
-- keys need it) and get (id, organization_id) unique beside it: what the
-- composite foreign keys of a distributed layout will refer to, after which
-- the primary key on id alone can go (docs/scaling.md).
ALTER TABLE spaces ADD UNIQUE (id, organization_id);
ALTER TABLE collections ADD UNIQUE (id, organization_id);
ALTER TABLE sites ADD UNIQUE (id, organization_id);
ALTER TABLE site_section_groups ADD UNIQUE (id, organization_id);
ALTER TABLE site_sections ADD UNIQUE (id, organization_id);
ALTER TABLE teams ADD UNIQUE (id, organization_id);
ALTER TABLE revisions ADD UNIQUE (id, organization_id);
ALTER TABLE change_requests ADD UNIQUE (id, organization_id);
ALTER TABLE comments ADD UNIQUE (id, organization_id);
ALTER TABLE openapi_specs ADD UNIQUE (id, organization_id);
ALTER TABLE integration_installations ADD UNIQUE (id, organization_id);
ALTER TABLE events ADD UNIQUE (id, organization_id);
ALTER TABLE integration_events ADD UNIQUE (id, organization_id);
ALTER TABLE conversation_issue_clusters ADD UNIQUE (id, organization_id);
ALTER TABLE saml_providers ADD UNIQUE (id, organization_id);

-- The other unique keys of tenant tables get organization_id too (a
-- distributed table's unique keys must hold the distribution column). Each
-- key's leading columns already determine the organization (a site, a
-- space, a provider), so none becomes any less unique. Names are kept.
DROP INDEX content_grants_space_user_key, content_grants_space_team_key,
    content_grants_collection_user_key, content_grants_collection_team_key;
CREATE UNIQUE INDEX content_grants_space_user_key ON content_grants (space_id, user_id, organization_id)
    WHERE space_id IS NOT NULL AND user_id IS NOT NULL;
CREATE UNIQUE INDEX content_grants_space_team_key ON content_grants (space_id, team_id, organization_id)
    WHERE space_id IS NOT NULL AND team_id IS NOT NULL;
CREATE UNIQUE INDEX content_grants_collection_user_key ON content_grants (collection_id, user_id, organization_id)
    WHERE collection_id IS NOT NULL AND user_id IS NOT NULL;
CREATE UNIQUE INDEX content_grants_collection_team_key ON content_grants (collection_id, team_id, organization_id)
    WHERE collection_id IS NOT NULL AND team_id IS NOT NULL;

ALTER TABLE change_requests DROP CONSTRAINT change_requests_space_id_number_key,
    ADD CONSTRAINT change_requests_space_id_number_key UNIQUE (space_id, number, organization_id);

ALTER TABLE site_section_groups DROP CONSTRAINT site_section_groups_position_key,
    ADD CONSTRAINT site_section_groups_position_key
    UNIQUE NULLS NOT DISTINCT (site_id, parent_group_id, position, organization_id) DEFERRABLE INITIALLY DEFERRED;
ALTER TABLE site_sections DROP CONSTRAINT site_sections_position_key,
    ADD CONSTRAINT site_sections_position_key
    UNIQUE NULLS NOT DISTINCT (site_id, group_id, position, organization_id) DEFERRABLE INITIALLY DEFERRED;
ALTER TABLE site_spaces DROP CONSTRAINT site_spaces_position_key,
    ADD CONSTRAINT site_spaces_position_key
    UNIQUE NULLS NOT DISTINCT (site_id, section_id, position, organization_id) DEFERRABLE INITIALLY DEFERRED;
DROP INDEX site_sections_path_key, site_sections_default_key, site_spaces_path_key, site_spaces_default_key;
CREATE UNIQUE INDEX site_sections_path_key ON site_sections (site_id, path, organization_id);
CREATE UNIQUE INDEX site_sections_default_key ON site_sections (site_id, organization_id) WHERE is_default;
CREATE UNIQUE INDEX site_spaces_path_key ON site_spaces (site_id, section_id, path, organization_id) NULLS NOT DISTINCT;
CREATE UNIQUE INDEX site_spaces_default_key ON site_spaces (site_id, section_id, organization_id) NULLS NOT DISTINCT WHERE is_default;

ALTER TABLE saml_identities DROP CONSTRAINT saml_identities_provider_id_user_id_key,
    ADD CONSTRAINT saml_identities_provider_id_user_id_key UNIQUE (provider_id, user_id, organization_id);
ALTER TABLE saml_requests DROP CONSTRAINT saml_requests_link_code_sha256_key,
    ADD CONSTRAINT saml_requests_link_code_sha256_key UNIQUE (link_code_sha256, organization_id);

-- Left global on purpose: sites_hostname_key (a custom hostname names one
-- site across all organizations: docs/scaling.md says what it becomes).
