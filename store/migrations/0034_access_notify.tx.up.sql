-- Subscriptions decide who may receive an event from memory: each process
-- keeps, per organization, what deciding a role on its spaces needs (its
-- collections, grants and teams, and the spaces subscribed to), read once
-- and kept until it changes (graph/liveaccess.go). Any committed change to
-- those rows NOTIFYs docsapi_access with the organization's id, which
-- PostgreSQL delivers at commit (never on rollback), once per transaction
-- and organization however many rows changed. The subscriptions' listener
-- hears it on the connection that brings the events, so a change committed
-- before an event is known before that event is delivered.
CREATE FUNCTION docsapi_access_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP <> 'INSERT' THEN
        PERFORM pg_notify('docsapi_access', OLD.organization_id);
    END IF;
    IF TG_OP <> 'DELETE' THEN
        PERFORM pg_notify('docsapi_access', NEW.organization_id);
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER collections_access_changed AFTER INSERT OR DELETE ON collections
    FOR EACH ROW EXECUTE FUNCTION docsapi_access_changed();
CREATE TRIGGER collections_access_updated AFTER UPDATE ON collections
    FOR EACH ROW WHEN (OLD.parent_id IS DISTINCT FROM NEW.parent_id OR OLD.default_level IS DISTINCT FROM NEW.default_level
        OR OLD.organization_id IS DISTINCT FROM NEW.organization_id)
    EXECUTE FUNCTION docsapi_access_changed();

CREATE TRIGGER content_grants_access_changed AFTER INSERT OR UPDATE OR DELETE ON content_grants
    FOR EACH ROW EXECUTE FUNCTION docsapi_access_changed();

CREATE TRIGGER team_members_access_changed AFTER INSERT OR UPDATE OR DELETE ON team_members
    FOR EACH ROW EXECUTE FUNCTION docsapi_access_changed();

-- A space's own row decides its access too (where it sits, its default
-- level and visibility, whether it is deleted); its title or content do
-- not, and are changed far more often.
CREATE TRIGGER spaces_access_deleted AFTER DELETE ON spaces
    FOR EACH ROW EXECUTE FUNCTION docsapi_access_changed();
CREATE TRIGGER spaces_access_updated AFTER UPDATE ON spaces
    FOR EACH ROW WHEN (OLD.parent_id IS DISTINCT FROM NEW.parent_id OR OLD.default_level IS DISTINCT FROM NEW.default_level
        OR OLD.visibility IS DISTINCT FROM NEW.visibility OR OLD.deleted_at IS DISTINCT FROM NEW.deleted_at
        OR OLD.organization_id IS DISTINCT FROM NEW.organization_id)
    EXECUTE FUNCTION docsapi_access_changed();
