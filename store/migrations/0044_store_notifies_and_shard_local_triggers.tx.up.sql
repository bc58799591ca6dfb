-- Two changes so that the triggers of the schema run on a Citus cluster as
-- on one PostgreSQL (docs/scaling.md). There a trigger of a distributed
-- table runs on the worker holding the row.

-- 1. Notifications are raised by the store (store/notify.go), in the
-- writing transaction, on the connection every process talks to. Raised
-- by a trigger on a worker they reach no listener, and a worker cannot
-- prepare (two-phase commit) a transaction that notified.
DROP TRIGGER users_callers_changed ON users;
DROP TRIGGER api_tokens_callers_changed ON api_tokens;
DROP TRIGGER organization_members_callers_changed ON organization_members;
DROP FUNCTION docsapi_callers_changed();
DROP TRIGGER live_events_notify ON live_events;
DROP FUNCTION docsapi_live_event_recorded();
DROP TRIGGER integration_events_notify ON integration_events;
DROP FUNCTION docsapi_integration_event_recorded();
DROP TRIGGER collections_access_changed ON collections;
DROP TRIGGER collections_access_updated ON collections;
DROP TRIGGER content_grants_access_changed ON content_grants;
DROP TRIGGER spaces_access_deleted ON spaces;
DROP TRIGGER spaces_access_updated ON spaces;
DROP TRIGGER team_members_access_changed ON team_members;
DROP FUNCTION docsapi_access_changed();

-- 2. The counting and search triggers touch only rows of the organization
-- of the row that fired them, and say so (organization_id = ...) in every
-- statement: on a cluster each statement is then one of the shard group
-- on the same worker, run there. A space no longer changes organization
-- in place (Citus cannot update a distribution column): a transfer copies
-- its rows into the new organization and deletes the old ones
-- (store.MoveToOrganization), which these triggers count as an insert and
-- a delete.
CREATE OR REPLACE FUNCTION count_space_change_requests() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        IF OLD.status IN ('open', 'draft') THEN
            UPDATE spaces SET change_requests_open  = change_requests_open  - (OLD.status = 'open')::integer,
                              change_requests_draft = change_requests_draft - (OLD.status = 'draft')::integer
            WHERE id = OLD.space_id AND organization_id = OLD.organization_id;
        END IF;
    END IF;
    IF TG_OP IN ('UPDATE', 'INSERT') THEN
        IF NEW.status IN ('open', 'draft') THEN
            UPDATE spaces SET change_requests_open  = change_requests_open  + (NEW.status = 'open')::integer,
                              change_requests_draft = change_requests_draft + (NEW.status = 'draft')::integer
            WHERE id = NEW.space_id AND organization_id = NEW.organization_id;
        END IF;
    END IF;
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION count_space_comments() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        IF OLD.change_request_id IS NULL AND OLD.status = 'open' THEN
            UPDATE spaces SET open_comments = open_comments - 1 WHERE id = OLD.space_id AND organization_id = OLD.organization_id;
        END IF;
    END IF;
    IF TG_OP IN ('UPDATE', 'INSERT') THEN
        IF NEW.change_request_id IS NULL AND NEW.status = 'open' THEN
            UPDATE spaces SET open_comments = open_comments + 1 WHERE id = NEW.space_id AND organization_id = NEW.organization_id;
        END IF;
    END IF;
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION sync_current_pages(space text, org text, leaving text, entering text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM current_pages c
    USING (SELECT page_id, body_sha256 FROM revision_pages WHERE revision_id = leaving AND organization_id = org AND body_sha256 IS NOT NULL
           EXCEPT
           SELECT page_id, body_sha256 FROM revision_pages WHERE revision_id = entering AND organization_id = org AND body_sha256 IS NOT NULL) gone
    WHERE c.space_id = space AND c.organization_id = org AND c.page_id = gone.page_id;
    INSERT INTO current_pages (space_id, page_id, organization_id, body_sha256)
    SELECT space, came.page_id, org, came.body_sha256
    FROM (SELECT page_id, body_sha256 FROM revision_pages WHERE revision_id = entering AND organization_id = org AND body_sha256 IS NOT NULL
          EXCEPT
          SELECT page_id, body_sha256 FROM revision_pages WHERE revision_id = leaving AND organization_id = org AND body_sha256 IS NOT NULL) came
    ON CONFLICT (space_id, page_id, organization_id) DO UPDATE SET body_sha256 = EXCLUDED.body_sha256;
END $$;

CREATE OR REPLACE FUNCTION count_revision_change(org text, leaving text, entering text) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    bodies text[];
    deltas integer[];
BEGIN
    SELECT coalesce(array_agg(body_sha256 ORDER BY body_sha256), '{}'), coalesce(array_agg(delta ORDER BY body_sha256), '{}')
    INTO bodies, deltas
    FROM (SELECT body_sha256, sum(n)::integer AS delta
          FROM (SELECT body_sha256, -1 AS n FROM revision_pages WHERE revision_id = leaving AND organization_id = org AND body_sha256 IS NOT NULL
                UNION ALL
                SELECT body_sha256, 1 FROM revision_pages WHERE revision_id = entering AND organization_id = org AND body_sha256 IS NOT NULL) p
          GROUP BY body_sha256
          HAVING sum(n) <> 0) d;
    PERFORM count_shown_bodies(org, bodies, deltas);
END $$;

CREATE OR REPLACE FUNCTION count_space_shown_bodies() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    leaving text;
    entering text;
BEGIN
    IF TG_OP = 'UPDATE' AND OLD.organization_id <> NEW.organization_id THEN
        RAISE EXCEPTION 'a space changes organization by moving its rows (store.MoveToOrganization), not by an update of organization_id';
    END IF;
    IF TG_OP IN ('UPDATE', 'DELETE') AND OLD.deleted_at IS NULL THEN
        leaving := OLD.revision_id;
    END IF;
    IF TG_OP IN ('UPDATE', 'INSERT') AND NEW.deleted_at IS NULL THEN
        entering := NEW.revision_id;
    END IF;
    IF TG_OP = 'DELETE' THEN
        PERFORM count_revision_change(OLD.organization_id, leaving, NULL);
        PERFORM sync_current_pages(OLD.id, OLD.organization_id, leaving, NULL);
        RETURN OLD;
    END IF;
    PERFORM count_revision_change(NEW.organization_id, leaving, entering);
    PERFORM sync_current_pages(NEW.id, NEW.organization_id, leaving, entering);
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION count_new_pages_shown_bodies() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    rev text;
    rev_org text;
    space text;
    org text;
    current_revs text[] := '{}';
    current_spaces text[] := '{}';
    current_orgs text[] := '{}';
    r record;
BEGIN
    FOR rev, rev_org IN SELECT DISTINCT revision_id, organization_id FROM new_pages LOOP
        -- Two lookups by primary key (joined, the generic plan of this
        -- loop's statement scanned the organization's spaces instead).
        SELECT rv.space_id INTO space FROM revisions rv WHERE rv.id = rev AND rv.organization_id = rev_org;
        SELECT s.organization_id INTO org FROM spaces s
        WHERE s.id = space AND s.organization_id = rev_org AND s.revision_id = rev AND s.deleted_at IS NULL;
        IF FOUND THEN
            current_revs := current_revs || rev;
            current_spaces := current_spaces || space;
            current_orgs := current_orgs || org;
        END IF;
    END LOOP;
    IF cardinality(current_revs) = 0 THEN
        RETURN NULL;
    END IF;
    FOR r IN
        SELECT cur.org, array_agg(cur.space) AS spaces, array_agg(p.page_id) AS pages, array_agg(p.body_sha256) AS bodies
        FROM new_pages p JOIN unnest(current_revs, current_spaces, current_orgs) AS cur(rev, space, org)
          ON cur.rev = p.revision_id AND cur.org = p.organization_id
        WHERE p.body_sha256 IS NOT NULL
        GROUP BY cur.org
    LOOP
        INSERT INTO current_pages (space_id, page_id, organization_id, body_sha256)
        SELECT c.space, c.page, r.org, c.body FROM unnest(r.spaces, r.pages, r.bodies) AS c(space, page, body)
        ON CONFLICT (space_id, page_id, organization_id) DO UPDATE SET body_sha256 = EXCLUDED.body_sha256;
    END LOOP;
    FOR r IN
        SELECT c.org, array_agg(c.body_sha256 ORDER BY c.body_sha256) AS bodies, array_agg(c.n ORDER BY c.body_sha256) AS deltas
        FROM (SELECT cur.org, p.body_sha256, count(*)::integer AS n
              FROM new_pages p JOIN unnest(current_revs, current_orgs) AS cur(rev, org)
                ON cur.rev = p.revision_id AND cur.org = p.organization_id
              WHERE p.body_sha256 IS NOT NULL
              GROUP BY cur.org, p.body_sha256) c
        GROUP BY c.org
    LOOP
        PERFORM count_shown_bodies(r.org, r.bodies, r.deltas);
    END LOOP;
    RETURN NULL;
END $$;
