-- The totals of the lists of spaces and collections (GraphQL's
-- `totalCount`), kept up to date in the transaction that writes the rows,
-- so that a total costs a few key lookups whatever the organization's
-- size (a count(*) of an organization of 100,000 spaces took 26 ms, on
-- every page, while `count` was the total: issue 29).
--
-- content_counts: the live spaces (and the collections) of an
-- organization, counted by what decides who may read them: their parent
-- (the collection they are in, '' at the root), their own default level
-- ('' for a null level, the guest level) and, for spaces, whether their
-- visibility is in-collection. Every space of one such group is readable
-- by the same members, but for grants on the space itself, so a member's
-- total is the groups their role opens, added up, plus the spaces granted
-- to them in the others (graph/total_count.go): the read rule stays in Go,
-- and the work follows the organization's collections and the member's
-- grants, not its spaces. An admin's total of a collection's spaces is the
-- collection's groups.
--
-- organization_content_counts: each organization's live spaces and its
-- collections: an admin's total of the organization's lists, one row.
--
-- Both carry the organization in their keys: on a Citus cluster they are
-- distributed by it, colocated with the rows they count (store/citus.go),
-- and the triggers below name the organization in every statement, so each
-- runs on the worker holding the row that fired it (migration 0044). A
-- transfer copies rows into the new organization and deletes the old ones
-- (store/transfer.go): the triggers count an insert there and a delete here.
-- On a database already distributed (an install on Citus upgrading), the
-- triggers below are created on distributed tables, which Citus allows
-- when told these are safe (they touch the rows of their own organization
-- only), and each statement is sent alone (--bun:split): Citus passes DDL
-- on to the workers as the statement's text, which must hold one command.
-- The two tables are placed, distributed, right after the migrations
-- (store/citus.go). On one PostgreSQL the setting is a placeholder and
-- does nothing.
SET LOCAL citus.enable_unsafe_triggers = on;
--bun:split

CREATE TABLE content_counts (
    organization_id text    NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    kind            text    NOT NULL CHECK (kind IN ('space', 'collection')),
    parent_id       text    NOT NULL,
    default_level   text    NOT NULL,
    in_collection   boolean NOT NULL,
    n               integer NOT NULL,
    PRIMARY KEY (organization_id, kind, parent_id, default_level, in_collection)
);
--bun:split

CREATE TABLE organization_content_counts (
    organization_id text    NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    kind            text    NOT NULL CHECK (kind IN ('space', 'collection')),
    n               integer NOT NULL,
    PRIMARY KEY (organization_id, kind)
);
--bun:split

INSERT INTO content_counts (organization_id, kind, parent_id, default_level, in_collection, n)
SELECT organization_id, 'space', coalesce(parent_id, ''), coalesce(default_level, ''), visibility = 'in-collection', count(*)
FROM spaces WHERE deleted_at IS NULL
GROUP BY 1, 2, 3, 4, 5;
--bun:split

INSERT INTO content_counts (organization_id, kind, parent_id, default_level, in_collection, n)
SELECT organization_id, 'collection', coalesce(parent_id, ''), coalesce(default_level, ''), false, count(*)
FROM collections
GROUP BY 1, 2, 3, 4, 5;
--bun:split

INSERT INTO organization_content_counts (organization_id, kind, n)
SELECT organization_id, kind, sum(n) FROM content_counts GROUP BY 1, 2;
--bun:split

-- add_content_counts adds deltas to org's counts of kind: each group's
-- row, then the organization's total. Rows are written in the order of
-- their keys, the total last, whatever the statement: two transactions
-- changing the same rows take their locks in one order, and do not
-- deadlock. A row is created by the first item counted in it. A delta that
-- finds no row to take from is that of the rows of an organization being
-- deleted, whose counts the cascade may have deleted first: nothing to do.
CREATE FUNCTION add_content_counts(org text, item_kind text, parents text[], levels text[], in_collections boolean[], deltas integer[])
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    d record;
    total integer := 0;
BEGIN
    FOR d IN SELECT x.parent, x.level, x.in_collection, sum(x.delta)::integer AS delta
             FROM unnest(parents, levels, in_collections, deltas) AS x(parent, level, in_collection, delta)
             GROUP BY 1, 2, 3 HAVING sum(x.delta) <> 0
             ORDER BY 1, 2, 3
    LOOP
        total := total + d.delta;
        UPDATE content_counts SET n = n + d.delta
        WHERE organization_id = org AND kind = item_kind AND parent_id = d.parent
          AND default_level = d.level AND in_collection = d.in_collection;
        IF NOT FOUND AND d.delta > 0 THEN
            INSERT INTO content_counts AS c (organization_id, kind, parent_id, default_level, in_collection, n)
            VALUES (org, item_kind, d.parent, d.level, d.in_collection, d.delta)
            ON CONFLICT (organization_id, kind, parent_id, default_level, in_collection) DO UPDATE SET n = c.n + EXCLUDED.n;
        END IF;
    END LOOP;
    IF total <> 0 THEN
        UPDATE organization_content_counts SET n = n + total WHERE organization_id = org AND kind = item_kind;
        IF NOT FOUND AND total > 0 THEN
            INSERT INTO organization_content_counts AS c (organization_id, kind, n) VALUES (org, item_kind, total)
            ON CONFLICT (organization_id, kind) DO UPDATE SET n = c.n + EXCLUDED.n;
        END IF;
    END IF;
END $$;
--bun:split

-- count_content_rows adds delta (1 or -1) for each row of kind whose
-- organization, parent, level and in-collection visibility are the arrays'
-- elements (one per row): each organization's groups in one call.
CREATE FUNCTION count_content_rows(item_kind text, delta integer, orgs text[], parents text[], levels text[], in_collections boolean[])
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    r record;
BEGIN
    FOR r IN SELECT x.org, array_agg(x.parent) AS parents, array_agg(x.level) AS levels,
                    array_agg(x.in_collection) AS in_collections, array_agg(delta) AS deltas
             FROM unnest(orgs, parents, levels, in_collections) AS x(org, parent, level, in_collection)
             GROUP BY x.org ORDER BY x.org
    LOOP
        PERFORM add_content_counts(r.org, item_kind, r.parents, r.levels, r.in_collections, r.deltas);
    END LOOP;
END $$;
--bun:split

-- Inserts and deletes are counted once per statement, per organization and
-- group (a fill of 100,000 spaces, a transfer of a collection, a purge:
-- one write per group, not one per row). Updates are counted per row, and
-- only those that move a row between groups or in or out of the live ones:
-- the application changes one space or collection at a time, and the
-- updates of a space's other columns (its revision, at every edit) do not
-- run the function at all.
CREATE FUNCTION count_spaces() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_LEVEL = 'ROW' THEN
        IF OLD.organization_id <> NEW.organization_id THEN
            RAISE EXCEPTION 'a space changes organization by moving its rows (store.MoveToOrganization), not by an update of organization_id';
        END IF;
        PERFORM add_content_counts(NEW.organization_id, 'space',
            ARRAY[coalesce(OLD.parent_id, ''), coalesce(NEW.parent_id, '')],
            ARRAY[coalesce(OLD.default_level, ''), coalesce(NEW.default_level, '')],
            ARRAY[OLD.visibility = 'in-collection', NEW.visibility = 'in-collection'],
            ARRAY[-(OLD.deleted_at IS NULL)::integer, (NEW.deleted_at IS NULL)::integer]);
    ELSIF TG_OP = 'INSERT' THEN
        PERFORM count_content_rows('space', 1, array_agg(organization_id), array_agg(coalesce(parent_id, '')),
            array_agg(coalesce(default_level, '')), array_agg(visibility = 'in-collection'))
        FROM new_spaces WHERE deleted_at IS NULL;
    ELSE
        PERFORM count_content_rows('space', -1, array_agg(organization_id), array_agg(coalesce(parent_id, '')),
            array_agg(coalesce(default_level, '')), array_agg(visibility = 'in-collection'))
        FROM old_spaces WHERE deleted_at IS NULL;
    END IF;
    RETURN NULL;
END $$;
--bun:split

CREATE TRIGGER spaces_counted_insert AFTER INSERT ON spaces
    REFERENCING NEW TABLE AS new_spaces FOR EACH STATEMENT EXECUTE FUNCTION count_spaces();
--bun:split
CREATE TRIGGER spaces_counted_delete AFTER DELETE ON spaces
    REFERENCING OLD TABLE AS old_spaces FOR EACH STATEMENT EXECUTE FUNCTION count_spaces();
--bun:split
CREATE TRIGGER spaces_counted_update AFTER UPDATE OF parent_id, default_level, visibility, deleted_at, organization_id ON spaces
    FOR EACH ROW WHEN (OLD.parent_id IS DISTINCT FROM NEW.parent_id OR OLD.default_level IS DISTINCT FROM NEW.default_level
                       OR OLD.visibility IS DISTINCT FROM NEW.visibility OR (OLD.deleted_at IS NULL) <> (NEW.deleted_at IS NULL)
                       OR OLD.organization_id IS DISTINCT FROM NEW.organization_id)
    EXECUTE FUNCTION count_spaces();
--bun:split

-- Collections, the same way (they have no visibility, and are deleted for
-- good).
CREATE FUNCTION count_collections() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_LEVEL = 'ROW' THEN
        IF OLD.organization_id <> NEW.organization_id THEN
            RAISE EXCEPTION 'a collection changes organization by moving its rows (store.MoveToOrganization), not by an update of organization_id';
        END IF;
        PERFORM add_content_counts(NEW.organization_id, 'collection',
            ARRAY[coalesce(OLD.parent_id, ''), coalesce(NEW.parent_id, '')],
            ARRAY[coalesce(OLD.default_level, ''), coalesce(NEW.default_level, '')],
            ARRAY[false, false], ARRAY[-1, 1]);
    ELSIF TG_OP = 'INSERT' THEN
        PERFORM count_content_rows('collection', 1, array_agg(organization_id), array_agg(coalesce(parent_id, '')),
            array_agg(coalesce(default_level, '')), array_agg(false))
        FROM new_collections;
    ELSE
        PERFORM count_content_rows('collection', -1, array_agg(organization_id), array_agg(coalesce(parent_id, '')),
            array_agg(coalesce(default_level, '')), array_agg(false))
        FROM old_collections;
    END IF;
    RETURN NULL;
END $$;
--bun:split

CREATE TRIGGER collections_counted_insert AFTER INSERT ON collections
    REFERENCING NEW TABLE AS new_collections FOR EACH STATEMENT EXECUTE FUNCTION count_collections();
--bun:split
CREATE TRIGGER collections_counted_delete AFTER DELETE ON collections
    REFERENCING OLD TABLE AS old_collections FOR EACH STATEMENT EXECUTE FUNCTION count_collections();
--bun:split
CREATE TRIGGER collections_counted_update AFTER UPDATE OF parent_id, default_level, organization_id ON collections
    FOR EACH ROW WHEN (OLD.parent_id IS DISTINCT FROM NEW.parent_id OR OLD.default_level IS DISTINCT FROM NEW.default_level
                       OR OLD.organization_id IS DISTINCT FROM NEW.organization_id)
    EXECUTE FUNCTION count_collections();
