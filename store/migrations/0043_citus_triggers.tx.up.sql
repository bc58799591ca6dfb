-- What a schema distributed by organization (Citus) cannot keep, changed
-- on every install so that one schema serves both.

-- A custom hostname names one site instance-wide; a unique key of a
-- distributed table must include the organization. The store checks it
-- under a lock instead (store.ClaimSiteHostname); this index serves the
-- check.
DROP INDEX sites_hostname_key;
CREATE INDEX sites_hostname_idx ON sites (hostname) WHERE hostname IS NOT NULL;

-- Citus refuses ON DELETE SET NULL on a foreign key that includes the
-- distribution column (even with PostgreSQL 15's column list, which would
-- leave the organization alone). These six keys become plain (NO ACTION)
-- and a BEFORE DELETE trigger on the parent nulls the column of the rows
-- that refer to the row being deleted: the same outcome, and the update
-- stays in the parent's organization, on its shard.
CREATE FUNCTION docsapi_null_references() RETURNS trigger LANGUAGE plpgsql AS $$
-- TG_ARGV[0]: the referring table; TG_ARGV[1]: its column naming the parent.
BEGIN
    EXECUTE format('UPDATE %I SET %I = NULL WHERE %I = $1 AND organization_id = $2', TG_ARGV[0], TG_ARGV[1], TG_ARGV[1])
        USING OLD.id, OLD.organization_id;
    RETURN OLD;
END $$;

ALTER TABLE change_request_reviews DROP CONSTRAINT change_request_reviews_comment_id_fkey,
    ADD CONSTRAINT change_request_reviews_comment_id_fkey FOREIGN KEY (comment_id, organization_id) REFERENCES comments (id, organization_id);
CREATE TRIGGER change_request_reviews_comment_id_nulled BEFORE DELETE ON comments
    FOR EACH ROW EXECUTE FUNCTION docsapi_null_references('change_request_reviews', 'comment_id');

ALTER TABLE change_requests DROP CONSTRAINT change_requests_conversations_issues_cluster_id_fkey,
    ADD CONSTRAINT change_requests_conversations_issues_cluster_id_fkey FOREIGN KEY (conversations_issues_cluster_id, organization_id) REFERENCES conversation_issue_clusters (id, organization_id);
CREATE TRIGGER change_requests_conversations_issues_cluster_id_nulled BEFORE DELETE ON conversation_issue_clusters
    FOR EACH ROW EXECUTE FUNCTION docsapi_null_references('change_requests', 'conversations_issues_cluster_id');

ALTER TABLE conversation_issues DROP CONSTRAINT conversation_issues_cluster_id_fkey,
    ADD CONSTRAINT conversation_issues_cluster_id_fkey FOREIGN KEY (cluster_id, organization_id) REFERENCES conversation_issue_clusters (id, organization_id);
CREATE TRIGGER conversation_issues_cluster_id_nulled BEFORE DELETE ON conversation_issue_clusters
    FOR EACH ROW EXECUTE FUNCTION docsapi_null_references('conversation_issues', 'cluster_id');

ALTER TABLE integration_events DROP CONSTRAINT integration_events_installation_id_fkey,
    ADD CONSTRAINT integration_events_installation_id_fkey FOREIGN KEY (installation_id, organization_id) REFERENCES integration_installations (id, organization_id);
CREATE TRIGGER integration_events_installation_id_nulled BEFORE DELETE ON integration_installations
    FOR EACH ROW EXECUTE FUNCTION docsapi_null_references('integration_events', 'installation_id');

ALTER TABLE saml_providers DROP CONSTRAINT saml_providers_default_team_id_fkey,
    ADD CONSTRAINT saml_providers_default_team_id_fkey FOREIGN KEY (default_team_id, organization_id) REFERENCES teams (id, organization_id);
CREATE TRIGGER saml_providers_default_team_id_nulled BEFORE DELETE ON teams
    FOR EACH ROW EXECUTE FUNCTION docsapi_null_references('saml_providers', 'default_team_id');

ALTER TABLE site_sections DROP CONSTRAINT site_sections_group_id_fkey,
    ADD CONSTRAINT site_sections_group_id_fkey FOREIGN KEY (group_id, organization_id) REFERENCES site_section_groups (id, organization_id);
CREATE TRIGGER site_sections_group_id_nulled BEFORE DELETE ON site_section_groups
    FOR EACH ROW EXECUTE FUNCTION docsapi_null_references('site_sections', 'group_id');

ALTER TABLE translations DROP CONSTRAINT translations_result_space_id_fkey,
    ADD CONSTRAINT translations_result_space_id_fkey FOREIGN KEY (result_space_id, organization_id) REFERENCES spaces (id, organization_id);
CREATE TRIGGER translations_result_space_id_nulled BEFORE DELETE ON spaces
    FOR EACH ROW EXECUTE FUNCTION docsapi_null_references('translations', 'result_space_id');
