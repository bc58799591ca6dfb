-- The keys a schema distributed by organization needs (Citus: a unique or
-- foreign key between distributed tables must include the distribution
-- column), on every install, so that one schema runs on a plain PostgreSQL
-- and on a Citus coordinator (docs/scaling.md, "Distributing the schema").
-- Distribution itself is not here: store/citus.go distributes the tables
-- after the migrations when the database has the citus extension.

-- 1. Foreign keys between tenant tables name the organization: a row
-- refers to a parent of its own organization, which the organization's
-- shard holds. They are dropped first (step 2 replaces the keys they rest
-- on) and added back in step 3 under their old names. ON DELETE SET NULL
-- names its column, so the organization is never nulled.
ALTER TABLE change_request_contributors DROP CONSTRAINT change_request_contributors_change_request_id_fkey;
ALTER TABLE change_request_requested_reviewers DROP CONSTRAINT change_request_requested_reviewers_change_request_id_fkey;
ALTER TABLE change_request_requested_reviewers DROP CONSTRAINT change_request_requested_reviewers_revision_id_fkey;
ALTER TABLE change_request_reviews DROP CONSTRAINT change_request_reviews_change_request_id_fkey;
ALTER TABLE change_request_reviews DROP CONSTRAINT change_request_reviews_comment_id_fkey;
ALTER TABLE change_request_reviews DROP CONSTRAINT change_request_reviews_revision_id_fkey;
ALTER TABLE change_requests DROP CONSTRAINT change_requests_conversations_issues_cluster_id_fkey;
ALTER TABLE change_requests DROP CONSTRAINT change_requests_revision_fkey;
ALTER TABLE change_requests DROP CONSTRAINT change_requests_revision_initial_fkey;
ALTER TABLE change_requests DROP CONSTRAINT change_requests_revision_merged_ancestor_fkey;
ALTER TABLE change_requests DROP CONSTRAINT change_requests_revision_merged_fkey;
ALTER TABLE change_requests DROP CONSTRAINT change_requests_space_id_fkey;
ALTER TABLE collections DROP CONSTRAINT collections_parent_id_fkey;
ALTER TABLE comment_replies DROP CONSTRAINT comment_replies_comment_id_fkey;
ALTER TABLE comments DROP CONSTRAINT comments_change_request_id_fkey;
ALTER TABLE comments DROP CONSTRAINT comments_space_id_fkey;
ALTER TABLE content_grants DROP CONSTRAINT content_grants_collection_id_fkey;
ALTER TABLE content_grants DROP CONSTRAINT content_grants_space_id_fkey;
ALTER TABLE content_grants DROP CONSTRAINT content_grants_team_id_fkey;
ALTER TABLE conversation_issues DROP CONSTRAINT conversation_issues_cluster_id_fkey;
ALTER TABLE integration_event_logs DROP CONSTRAINT integration_event_logs_integration_event_id_fkey;
ALTER TABLE integration_events DROP CONSTRAINT integration_events_event_id_fkey;
ALTER TABLE integration_events DROP CONSTRAINT integration_events_installation_id_fkey;
ALTER TABLE integration_site_installations DROP CONSTRAINT integration_site_installations_installation_id_fkey;
ALTER TABLE integration_site_installations DROP CONSTRAINT integration_site_installations_site_id_fkey;
ALTER TABLE integration_space_installations DROP CONSTRAINT integration_space_installations_installation_id_fkey;
ALTER TABLE integration_space_installations DROP CONSTRAINT integration_space_installations_space_id_fkey;
ALTER TABLE openapi_spec_versions DROP CONSTRAINT openapi_spec_versions_spec_id_fkey;
ALTER TABLE revision_files DROP CONSTRAINT revision_files_revision_id_fkey;
ALTER TABLE revision_pages DROP CONSTRAINT revision_pages_revision_id_fkey;
ALTER TABLE revisions DROP CONSTRAINT revisions_space_id_fkey;
ALTER TABLE saml_identities DROP CONSTRAINT saml_identities_provider_id_fkey;
ALTER TABLE saml_providers DROP CONSTRAINT saml_providers_default_team_id_fkey;
ALTER TABLE saml_requests DROP CONSTRAINT saml_requests_provider_id_fkey;
ALTER TABLE site_section_groups DROP CONSTRAINT site_section_groups_parent_group_id_fkey;
ALTER TABLE site_section_groups DROP CONSTRAINT site_section_groups_site_id_fkey;
ALTER TABLE site_sections DROP CONSTRAINT site_sections_group_id_fkey;
ALTER TABLE site_sections DROP CONSTRAINT site_sections_site_id_fkey;
ALTER TABLE site_spaces DROP CONSTRAINT site_spaces_section_id_fkey;
ALTER TABLE site_spaces DROP CONSTRAINT site_spaces_site_id_fkey;
ALTER TABLE site_spaces DROP CONSTRAINT site_spaces_space_id_fkey;
ALTER TABLE spaces DROP CONSTRAINT spaces_parent_fkey;
ALTER TABLE team_members DROP CONSTRAINT team_members_team_id_fkey;
ALTER TABLE translations DROP CONSTRAINT translations_result_space_id_fkey;
ALTER TABLE translations DROP CONSTRAINT translations_source_space_id_fkey;

-- 2. The 15 tables foreign keys refer to by id get the (id,
-- organization_id) primary key that migration 0035's unique key beside it
-- prepared (an index is built: the unique key's cannot be taken over while
-- it is a constraint of its own).
ALTER TABLE spaces DROP CONSTRAINT spaces_pkey, DROP CONSTRAINT spaces_id_organization_id_key,
    ADD CONSTRAINT spaces_pkey PRIMARY KEY (id, organization_id);
ALTER TABLE collections DROP CONSTRAINT collections_pkey, DROP CONSTRAINT collections_id_organization_id_key,
    ADD CONSTRAINT collections_pkey PRIMARY KEY (id, organization_id);
ALTER TABLE sites DROP CONSTRAINT sites_pkey, DROP CONSTRAINT sites_id_organization_id_key,
    ADD CONSTRAINT sites_pkey PRIMARY KEY (id, organization_id);
ALTER TABLE site_section_groups DROP CONSTRAINT site_section_groups_pkey, DROP CONSTRAINT site_section_groups_id_organization_id_key,
    ADD CONSTRAINT site_section_groups_pkey PRIMARY KEY (id, organization_id);
ALTER TABLE site_sections DROP CONSTRAINT site_sections_pkey, DROP CONSTRAINT site_sections_id_organization_id_key,
    ADD CONSTRAINT site_sections_pkey PRIMARY KEY (id, organization_id);
ALTER TABLE teams DROP CONSTRAINT teams_pkey, DROP CONSTRAINT teams_id_organization_id_key,
    ADD CONSTRAINT teams_pkey PRIMARY KEY (id, organization_id);
ALTER TABLE revisions DROP CONSTRAINT revisions_pkey, DROP CONSTRAINT revisions_id_organization_id_key,
    ADD CONSTRAINT revisions_pkey PRIMARY KEY (id, organization_id);
ALTER TABLE change_requests DROP CONSTRAINT change_requests_pkey, DROP CONSTRAINT change_requests_id_organization_id_key,
    ADD CONSTRAINT change_requests_pkey PRIMARY KEY (id, organization_id);
ALTER TABLE comments DROP CONSTRAINT comments_pkey, DROP CONSTRAINT comments_id_organization_id_key,
    ADD CONSTRAINT comments_pkey PRIMARY KEY (id, organization_id);
ALTER TABLE openapi_specs DROP CONSTRAINT openapi_specs_pkey, DROP CONSTRAINT openapi_specs_id_organization_id_key,
    ADD CONSTRAINT openapi_specs_pkey PRIMARY KEY (id, organization_id);
ALTER TABLE integration_installations DROP CONSTRAINT integration_installations_pkey, DROP CONSTRAINT integration_installations_id_organization_id_key,
    ADD CONSTRAINT integration_installations_pkey PRIMARY KEY (id, organization_id);
ALTER TABLE events DROP CONSTRAINT events_pkey, DROP CONSTRAINT events_id_organization_id_key,
    ADD CONSTRAINT events_pkey PRIMARY KEY (id, organization_id);
ALTER TABLE integration_events DROP CONSTRAINT integration_events_pkey, DROP CONSTRAINT integration_events_id_organization_id_key,
    ADD CONSTRAINT integration_events_pkey PRIMARY KEY (id, organization_id);
ALTER TABLE conversation_issue_clusters DROP CONSTRAINT conversation_issue_clusters_pkey, DROP CONSTRAINT conversation_issue_clusters_id_organization_id_key,
    ADD CONSTRAINT conversation_issue_clusters_pkey PRIMARY KEY (id, organization_id);
ALTER TABLE saml_providers DROP CONSTRAINT saml_providers_pkey, DROP CONSTRAINT saml_providers_id_organization_id_key,
    ADD CONSTRAINT saml_providers_pkey PRIMARY KEY (id, organization_id);

-- 3. The foreign keys again, composite.
ALTER TABLE change_request_contributors ADD CONSTRAINT change_request_contributors_change_request_id_fkey FOREIGN KEY (change_request_id, organization_id) REFERENCES change_requests (id, organization_id) ON DELETE CASCADE;
ALTER TABLE change_request_requested_reviewers ADD CONSTRAINT change_request_requested_reviewers_change_request_id_fkey FOREIGN KEY (change_request_id, organization_id) REFERENCES change_requests (id, organization_id) ON DELETE CASCADE;
ALTER TABLE change_request_requested_reviewers ADD CONSTRAINT change_request_requested_reviewers_revision_id_fkey FOREIGN KEY (revision_id, organization_id) REFERENCES revisions (id, organization_id) ON DELETE CASCADE;
ALTER TABLE change_request_reviews ADD CONSTRAINT change_request_reviews_change_request_id_fkey FOREIGN KEY (change_request_id, organization_id) REFERENCES change_requests (id, organization_id) ON DELETE CASCADE;
ALTER TABLE change_request_reviews ADD CONSTRAINT change_request_reviews_comment_id_fkey FOREIGN KEY (comment_id, organization_id) REFERENCES comments (id, organization_id) ON DELETE SET NULL (comment_id);
ALTER TABLE change_request_reviews ADD CONSTRAINT change_request_reviews_revision_id_fkey FOREIGN KEY (revision_id, organization_id) REFERENCES revisions (id, organization_id) ON DELETE CASCADE;
ALTER TABLE change_requests ADD CONSTRAINT change_requests_conversations_issues_cluster_id_fkey FOREIGN KEY (conversations_issues_cluster_id, organization_id) REFERENCES conversation_issue_clusters (id, organization_id) ON DELETE SET NULL (conversations_issues_cluster_id);
ALTER TABLE change_requests ADD CONSTRAINT change_requests_revision_fkey FOREIGN KEY (revision, organization_id) REFERENCES revisions (id, organization_id);
ALTER TABLE change_requests ADD CONSTRAINT change_requests_revision_initial_fkey FOREIGN KEY (revision_initial, organization_id) REFERENCES revisions (id, organization_id);
ALTER TABLE change_requests ADD CONSTRAINT change_requests_revision_merged_ancestor_fkey FOREIGN KEY (revision_merged_ancestor, organization_id) REFERENCES revisions (id, organization_id);
ALTER TABLE change_requests ADD CONSTRAINT change_requests_revision_merged_fkey FOREIGN KEY (revision_merged, organization_id) REFERENCES revisions (id, organization_id);
ALTER TABLE change_requests ADD CONSTRAINT change_requests_space_id_fkey FOREIGN KEY (space_id, organization_id) REFERENCES spaces (id, organization_id) ON DELETE CASCADE;
ALTER TABLE collections ADD CONSTRAINT collections_parent_id_fkey FOREIGN KEY (parent_id, organization_id) REFERENCES collections (id, organization_id);
ALTER TABLE comment_replies ADD CONSTRAINT comment_replies_comment_id_fkey FOREIGN KEY (comment_id, organization_id) REFERENCES comments (id, organization_id) ON DELETE CASCADE;
ALTER TABLE comments ADD CONSTRAINT comments_change_request_id_fkey FOREIGN KEY (change_request_id, organization_id) REFERENCES change_requests (id, organization_id) ON DELETE CASCADE;
ALTER TABLE comments ADD CONSTRAINT comments_space_id_fkey FOREIGN KEY (space_id, organization_id) REFERENCES spaces (id, organization_id) ON DELETE CASCADE;
ALTER TABLE content_grants ADD CONSTRAINT content_grants_collection_id_fkey FOREIGN KEY (collection_id, organization_id) REFERENCES collections (id, organization_id) ON DELETE CASCADE;
ALTER TABLE content_grants ADD CONSTRAINT content_grants_space_id_fkey FOREIGN KEY (space_id, organization_id) REFERENCES spaces (id, organization_id) ON DELETE CASCADE;
ALTER TABLE content_grants ADD CONSTRAINT content_grants_team_id_fkey FOREIGN KEY (team_id, organization_id) REFERENCES teams (id, organization_id) ON DELETE CASCADE;
ALTER TABLE conversation_issues ADD CONSTRAINT conversation_issues_cluster_id_fkey FOREIGN KEY (cluster_id, organization_id) REFERENCES conversation_issue_clusters (id, organization_id) ON DELETE SET NULL (cluster_id);
ALTER TABLE integration_event_logs ADD CONSTRAINT integration_event_logs_integration_event_id_fkey FOREIGN KEY (integration_event_id, organization_id) REFERENCES integration_events (id, organization_id) ON DELETE CASCADE;
ALTER TABLE integration_events ADD CONSTRAINT integration_events_event_id_fkey FOREIGN KEY (event_id, organization_id) REFERENCES events (id, organization_id) ON DELETE CASCADE;
ALTER TABLE integration_events ADD CONSTRAINT integration_events_installation_id_fkey FOREIGN KEY (installation_id, organization_id) REFERENCES integration_installations (id, organization_id) ON DELETE SET NULL (installation_id);
ALTER TABLE integration_site_installations ADD CONSTRAINT integration_site_installations_installation_id_fkey FOREIGN KEY (installation_id, organization_id) REFERENCES integration_installations (id, organization_id) ON DELETE CASCADE;
ALTER TABLE integration_site_installations ADD CONSTRAINT integration_site_installations_site_id_fkey FOREIGN KEY (site_id, organization_id) REFERENCES sites (id, organization_id) ON DELETE CASCADE;
ALTER TABLE integration_space_installations ADD CONSTRAINT integration_space_installations_installation_id_fkey FOREIGN KEY (installation_id, organization_id) REFERENCES integration_installations (id, organization_id) ON DELETE CASCADE;
ALTER TABLE integration_space_installations ADD CONSTRAINT integration_space_installations_space_id_fkey FOREIGN KEY (space_id, organization_id) REFERENCES spaces (id, organization_id) ON DELETE CASCADE;
ALTER TABLE openapi_spec_versions ADD CONSTRAINT openapi_spec_versions_spec_id_fkey FOREIGN KEY (spec_id, organization_id) REFERENCES openapi_specs (id, organization_id) ON DELETE CASCADE;
ALTER TABLE revision_files ADD CONSTRAINT revision_files_revision_id_fkey FOREIGN KEY (revision_id, organization_id) REFERENCES revisions (id, organization_id) ON DELETE CASCADE;
ALTER TABLE revision_pages ADD CONSTRAINT revision_pages_revision_id_fkey FOREIGN KEY (revision_id, organization_id) REFERENCES revisions (id, organization_id) ON DELETE CASCADE;
ALTER TABLE revisions ADD CONSTRAINT revisions_space_id_fkey FOREIGN KEY (space_id, organization_id) REFERENCES spaces (id, organization_id) ON DELETE CASCADE;
ALTER TABLE saml_identities ADD CONSTRAINT saml_identities_provider_id_fkey FOREIGN KEY (provider_id, organization_id) REFERENCES saml_providers (id, organization_id) ON DELETE CASCADE;
ALTER TABLE saml_providers ADD CONSTRAINT saml_providers_default_team_id_fkey FOREIGN KEY (default_team_id, organization_id) REFERENCES teams (id, organization_id) ON DELETE SET NULL (default_team_id);
ALTER TABLE saml_requests ADD CONSTRAINT saml_requests_provider_id_fkey FOREIGN KEY (provider_id, organization_id) REFERENCES saml_providers (id, organization_id) ON DELETE CASCADE;
ALTER TABLE site_section_groups ADD CONSTRAINT site_section_groups_parent_group_id_fkey FOREIGN KEY (parent_group_id, organization_id) REFERENCES site_section_groups (id, organization_id) ON DELETE CASCADE;
ALTER TABLE site_section_groups ADD CONSTRAINT site_section_groups_site_id_fkey FOREIGN KEY (site_id, organization_id) REFERENCES sites (id, organization_id) ON DELETE CASCADE;
ALTER TABLE site_sections ADD CONSTRAINT site_sections_group_id_fkey FOREIGN KEY (group_id, organization_id) REFERENCES site_section_groups (id, organization_id) ON DELETE SET NULL (group_id);
ALTER TABLE site_sections ADD CONSTRAINT site_sections_site_id_fkey FOREIGN KEY (site_id, organization_id) REFERENCES sites (id, organization_id) ON DELETE CASCADE;
ALTER TABLE site_spaces ADD CONSTRAINT site_spaces_section_id_fkey FOREIGN KEY (section_id, organization_id) REFERENCES site_sections (id, organization_id) ON DELETE CASCADE;
ALTER TABLE site_spaces ADD CONSTRAINT site_spaces_site_id_fkey FOREIGN KEY (site_id, organization_id) REFERENCES sites (id, organization_id) ON DELETE CASCADE;
ALTER TABLE site_spaces ADD CONSTRAINT site_spaces_space_id_fkey FOREIGN KEY (space_id, organization_id) REFERENCES spaces (id, organization_id) ON DELETE CASCADE;
ALTER TABLE spaces ADD CONSTRAINT spaces_parent_fkey FOREIGN KEY (parent_id, organization_id) REFERENCES collections (id, organization_id);
ALTER TABLE team_members ADD CONSTRAINT team_members_team_id_fkey FOREIGN KEY (team_id, organization_id) REFERENCES teams (id, organization_id) ON DELETE CASCADE;
ALTER TABLE translations ADD CONSTRAINT translations_result_space_id_fkey FOREIGN KEY (result_space_id, organization_id) REFERENCES spaces (id, organization_id) ON DELETE SET NULL (result_space_id);
ALTER TABLE translations ADD CONSTRAINT translations_source_space_id_fkey FOREIGN KEY (source_space_id, organization_id) REFERENCES spaces (id, organization_id) ON DELETE CASCADE;
