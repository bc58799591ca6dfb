-- Processes cache who a bearer token belongs to (store/callers.go). Any
-- committed change to the rows a caller is made of tells every process to
-- forget its cache: a statement trigger NOTIFYs docsapi_callers, which
-- PostgreSQL delivers at commit (and not at all on rollback), once per
-- transaction however many rows changed. (Deleting an organization deletes
-- its members, which fires their trigger.)
CREATE FUNCTION docsapi_callers_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('docsapi_callers', '');
    RETURN NULL;
END
$$;

CREATE TRIGGER users_callers_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON users
    FOR EACH STATEMENT EXECUTE FUNCTION docsapi_callers_changed();
CREATE TRIGGER api_tokens_callers_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON api_tokens
    FOR EACH STATEMENT EXECUTE FUNCTION docsapi_callers_changed();
-- A member's last activity is no part of a caller: pings do not notify.
CREATE TRIGGER organization_members_callers_changed
    AFTER INSERT OR UPDATE OF organization_id, user_id, role, disabled OR DELETE OR TRUNCATE ON organization_members
    FOR EACH STATEMENT EXECUTE FUNCTION docsapi_callers_changed();
