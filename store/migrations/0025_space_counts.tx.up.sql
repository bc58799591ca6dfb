-- The counts every space shows (its open comments, its open and draft change
-- requests) are carried on its row, so reading a space is one row and no
-- aggregate. Triggers on change_requests and comments keep them exact
-- whatever code writes those tables (mutations, merges, jobs, imports,
-- cascading deletes); nothing else writes them.
--
-- What counts, as the API shows it (graph/space.go):
--   change_requests_open / _draft: change requests with that status;
--   open_comments: comments on the space's own content (not on a change
--   request) that are open (not resolved).
ALTER TABLE spaces
    ADD COLUMN open_comments         integer NOT NULL DEFAULT 0,
    ADD COLUMN change_requests_open  integer NOT NULL DEFAULT 0,
    ADD COLUMN change_requests_draft integer NOT NULL DEFAULT 0;

UPDATE spaces s SET change_requests_open = t.open, change_requests_draft = t.draft
FROM (SELECT space_id, count(*) FILTER (WHERE status = 'open') AS open, count(*) FILTER (WHERE status = 'draft') AS draft
      FROM change_requests GROUP BY space_id) t
WHERE t.space_id = s.id;

UPDATE spaces s SET open_comments = t.n
FROM (SELECT space_id, count(*) AS n FROM comments
      WHERE change_request_id IS NULL AND status = 'open' GROUP BY space_id) t
WHERE t.space_id = s.id;

-- A change request leaving a count (deleted, or its status or space
-- changed) takes one off its old space's; one entering adds one to its new
-- space's. When the space itself is being deleted (cascade), the update
-- finds no row and does nothing.
CREATE FUNCTION count_space_change_requests() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        IF OLD.status IN ('open', 'draft') THEN
            UPDATE spaces SET change_requests_open  = change_requests_open  - (OLD.status = 'open')::integer,
                              change_requests_draft = change_requests_draft - (OLD.status = 'draft')::integer
            WHERE id = OLD.space_id;
        END IF;
    END IF;
    IF TG_OP IN ('UPDATE', 'INSERT') THEN
        IF NEW.status IN ('open', 'draft') THEN
            UPDATE spaces SET change_requests_open  = change_requests_open  + (NEW.status = 'open')::integer,
                              change_requests_draft = change_requests_draft + (NEW.status = 'draft')::integer
            WHERE id = NEW.space_id;
        END IF;
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER change_requests_count_insert_delete AFTER INSERT OR DELETE ON change_requests
    FOR EACH ROW EXECUTE FUNCTION count_space_change_requests();
CREATE TRIGGER change_requests_count_update AFTER UPDATE OF status, space_id ON change_requests
    FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status OR OLD.space_id IS DISTINCT FROM NEW.space_id)
    EXECUTE FUNCTION count_space_change_requests();

-- The same for open comments on a space's own content.
CREATE FUNCTION count_space_comments() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        IF OLD.change_request_id IS NULL AND OLD.status = 'open' THEN
            UPDATE spaces SET open_comments = open_comments - 1 WHERE id = OLD.space_id;
        END IF;
    END IF;
    IF TG_OP IN ('UPDATE', 'INSERT') THEN
        IF NEW.change_request_id IS NULL AND NEW.status = 'open' THEN
            UPDATE spaces SET open_comments = open_comments + 1 WHERE id = NEW.space_id;
        END IF;
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER comments_count_insert_delete AFTER INSERT OR DELETE ON comments
    FOR EACH ROW EXECUTE FUNCTION count_space_comments();
CREATE TRIGGER comments_count_update AFTER UPDATE OF status, space_id, change_request_id ON comments
    FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status OR OLD.space_id IS DISTINCT FROM NEW.space_id
                       OR OLD.change_request_id IS DISTINCT FROM NEW.change_request_id)
    EXECUTE FUNCTION count_space_comments();

-- The counters are the triggers' alone: a new space (a duplicate too, whose
-- row is copied from another) starts at zero, and a direct update of a
-- space that names them (a whole-row update from the application) keeps
-- their current values. Updates made by the triggers above run nested
-- (pg_trigger_depth() > 1) and go through.
CREATE FUNCTION guard_space_counts() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        NEW.open_comments := 0;
        NEW.change_requests_open := 0;
        NEW.change_requests_draft := 0;
    ELSIF pg_trigger_depth() = 1 THEN
        NEW.open_comments := OLD.open_comments;
        NEW.change_requests_open := OLD.change_requests_open;
        NEW.change_requests_draft := OLD.change_requests_draft;
    END IF;
    RETURN NEW;
END $$;

CREATE TRIGGER spaces_counts_guard BEFORE INSERT OR UPDATE OF open_comments, change_requests_open, change_requests_draft
    ON spaces FOR EACH ROW EXECUTE FUNCTION guard_space_counts();
