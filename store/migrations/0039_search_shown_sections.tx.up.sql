-- Search reads only what spaces show now, however much they have been
-- edited (issue 18; store/search.go Search): the sections that some live
-- space's current revision shows (body_sections.shown, counted in
-- shown_bodies), checked against the searched spaces' current pages
-- (current_pages), both kept by triggers.
--
-- Every edit stores a new body (a change request's revision shows it, and
-- after a merge, only older revisions show the body it replaced), and the
-- organization's GIN indexes held every body ever written: a search found
-- its words in superseded and unmerged text too, then dropped each such
-- candidate only after looking up its pages, so filling its bounded
-- candidates read more index entries and revision_pages the more an
-- organization had edited (p50 1.58x over the mixed run that doubles the
-- data with edits). The indexes now hold only the sections of bodies that a
-- current revision of a live space shows: shown. Search still checks each
-- candidate against the searched revisions (a shown body may be shown by a
-- space the caller cannot read, or does not search); shown only keeps what
-- no search can find out of its way.
--
-- shown_bodies counts, per organization and body, the pages of live
-- spaces' current revisions that show the body (a row only while there is
-- one); body_sections.shown says whether its body has a row, written when
-- that changes. The counts are a narrow table of their own rather than a
-- column of page_bodies: updating the wide body rows made every concurrent
-- write of the same text (SaveBody's insert, which checks the key) wait
-- for the updating transaction. Triggers keep both right whatever code
-- changes what a space shows (an edit, a merge, an import, a git sync, a
-- translation, a duplicate, deleting or restoring a space, moving it to
-- another organization, purging it), as the counts of migration 0025 are
-- kept: revisions are immutable, so what a space shows changes only with
-- its row (revision_id, deleted_at, organization_id), or when pages are
-- written into the revision a space already names (a new space's row is
-- written before its first revision). A space's change counts only the
-- bodies that differ between its old and new revision: a merge writes the
-- few pages it changed, not the space's every section.

CREATE TABLE shown_bodies (
    organization_id text NOT NULL,
    body_sha256     text NOT NULL,
    pages           integer NOT NULL,
    PRIMARY KEY (organization_id, body_sha256)
);
ALTER TABLE body_sections ADD COLUMN shown boolean NOT NULL DEFAULT false;

INSERT INTO shown_bodies (organization_id, body_sha256, pages)
SELECT s.organization_id, rp.body_sha256, count(*)
FROM spaces s JOIN revision_pages rp ON rp.revision_id = s.revision_id
WHERE s.deleted_at IS NULL AND rp.body_sha256 IS NOT NULL
GROUP BY s.organization_id, rp.body_sha256;

UPDATE body_sections s SET shown = true
FROM shown_bodies b
WHERE b.organization_id = s.organization_id AND b.body_sha256 = s.body_sha256;

-- current_pages: the pages with a body of every live space's current
-- revision, by space, so that a search checks a candidate section against
-- the spaces showing it now. revision_pages has a row per revision showing
-- a body: every change request's revision copies its space's pages, so the
-- rows a check read per candidate grew with the edits (100 per body of a
-- busy space in the mixed run), where current_pages has one per live space
-- showing it. A space's change rewrites only the pages that differ between
-- its old and new revision. A row per space and page (organization_id last
-- in the key, as in every tenant table: moving a space updates its rows).
CREATE TABLE current_pages (
    space_id        text NOT NULL,
    page_id         text NOT NULL,
    organization_id text NOT NULL,
    body_sha256     text NOT NULL,
    PRIMARY KEY (space_id, page_id, organization_id)
);
INSERT INTO current_pages (space_id, page_id, organization_id, body_sha256)
SELECT s.id, rp.page_id, s.organization_id, rp.body_sha256
FROM spaces s JOIN revision_pages rp ON rp.revision_id = s.revision_id
WHERE s.deleted_at IS NULL AND rp.body_sha256 IS NOT NULL;
CREATE INDEX current_pages_body_idx ON current_pages (body_sha256, organization_id) INCLUDE (space_id, page_id);

-- Space space of org stops showing revision leaving and starts showing
-- revision entering (either may be NULL): its pages that leave or change
-- go, those that come or change are written.
CREATE FUNCTION sync_current_pages(space text, org text, leaving text, entering text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM current_pages c
    USING (SELECT page_id, body_sha256 FROM revision_pages WHERE revision_id = leaving AND body_sha256 IS NOT NULL
           EXCEPT
           SELECT page_id, body_sha256 FROM revision_pages WHERE revision_id = entering AND body_sha256 IS NOT NULL) gone
    WHERE c.space_id = space AND c.page_id = gone.page_id;
    INSERT INTO current_pages (space_id, page_id, organization_id, body_sha256)
    SELECT space, came.page_id, org, came.body_sha256
    FROM (SELECT page_id, body_sha256 FROM revision_pages WHERE revision_id = entering AND body_sha256 IS NOT NULL
          EXCEPT
          SELECT page_id, body_sha256 FROM revision_pages WHERE revision_id = leaving AND body_sha256 IS NOT NULL) came
    ON CONFLICT (space_id, page_id, organization_id) DO UPDATE SET body_sha256 = EXCLUDED.body_sha256;
END $$;

-- Adds deltas[i] to the count of org's body bodies[i] (bodies sorted, so
-- that two writes sharing bodies lock them in one order and wait for each
-- other rather than deadlock), and flags the sections of the bodies whose
-- count starts or stops being positive; a section already right is not
-- rewritten. Sections are found by their bodies (the primary key's first
-- column), never by the organization: a join left to the planner read all
-- of the organization's sections.
CREATE FUNCTION count_shown_bodies(org text, bodies text[], deltas integer[]) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    showing text[];
    hiding text[];
BEGIN
    IF cardinality(bodies) = 0 THEN
        RETURN;
    END IF;
    WITH counted AS (
        INSERT INTO shown_bodies AS b (organization_id, body_sha256, pages)
        SELECT org, d.sha256, d.delta FROM unnest(bodies, deltas) AS d(sha256, delta) ORDER BY d.sha256
        ON CONFLICT (organization_id, body_sha256) DO UPDATE SET pages = b.pages + EXCLUDED.pages
        RETURNING b.body_sha256, b.pages > 0 AS shown)
    SELECT coalesce(array_agg(body_sha256) FILTER (WHERE shown), '{}'), coalesce(array_agg(body_sha256) FILTER (WHERE NOT shown), '{}')
    INTO showing, hiding FROM counted;
    UPDATE body_sections SET shown = true WHERE body_sha256 = ANY(showing) AND organization_id = org AND NOT shown;
    UPDATE body_sections SET shown = false WHERE body_sha256 = ANY(hiding) AND organization_id = org AND shown;
    DELETE FROM shown_bodies WHERE organization_id = org AND body_sha256 = ANY(hiding);
END $$;

-- org's space stops showing revision leaving and starts showing revision
-- entering (either may be NULL): the bodies whose number of pages differs
-- between the two are counted, the rest untouched.
CREATE FUNCTION count_revision_change(org text, leaving text, entering text) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    bodies text[];
    deltas integer[];
BEGIN
    SELECT coalesce(array_agg(body_sha256 ORDER BY body_sha256), '{}'), coalesce(array_agg(delta ORDER BY body_sha256), '{}')
    INTO bodies, deltas
    FROM (SELECT body_sha256, sum(n)::integer AS delta
          FROM (SELECT body_sha256, -1 AS n FROM revision_pages WHERE revision_id = leaving AND body_sha256 IS NOT NULL
                UNION ALL
                SELECT body_sha256, 1 FROM revision_pages WHERE revision_id = entering AND body_sha256 IS NOT NULL) p
          GROUP BY body_sha256
          HAVING sum(n) <> 0) d;
    PERFORM count_shown_bodies(org, bodies, deltas);
END $$;

-- A space's row: what it showed (when live) leaves, what it shows (when
-- live) enters. Deleting a row counts before the delete, while its pages
-- are still there (the revisions cascade).
CREATE FUNCTION count_space_shown_bodies() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    leaving text;
    entering text;
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') AND OLD.deleted_at IS NULL THEN
        leaving := OLD.revision_id;
    END IF;
    IF TG_OP IN ('UPDATE', 'INSERT') AND NEW.deleted_at IS NULL THEN
        entering := NEW.revision_id;
    END IF;
    IF TG_OP = 'UPDATE' AND OLD.organization_id <> NEW.organization_id THEN
        PERFORM count_revision_change(OLD.organization_id, leaving, NULL);
        PERFORM count_revision_change(NEW.organization_id, NULL, entering);
        PERFORM sync_current_pages(NEW.id, NEW.organization_id, leaving, entering);
        UPDATE current_pages SET organization_id = NEW.organization_id WHERE space_id = NEW.id AND organization_id <> NEW.organization_id;
    ELSIF TG_OP = 'DELETE' THEN
        PERFORM count_revision_change(OLD.organization_id, leaving, NULL);
        PERFORM sync_current_pages(OLD.id, OLD.organization_id, leaving, NULL);
        RETURN OLD;
    ELSE
        PERFORM count_revision_change(NEW.organization_id, leaving, entering);
        PERFORM sync_current_pages(NEW.id, NEW.organization_id, leaving, entering);
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER spaces_shown_bodies_insert AFTER INSERT ON spaces
    FOR EACH ROW WHEN (NEW.deleted_at IS NULL) EXECUTE FUNCTION count_space_shown_bodies();
CREATE TRIGGER spaces_shown_bodies_update AFTER UPDATE OF revision_id, deleted_at, organization_id ON spaces
    FOR EACH ROW WHEN (OLD.revision_id IS DISTINCT FROM NEW.revision_id OR (OLD.deleted_at IS NULL) <> (NEW.deleted_at IS NULL)
                       OR OLD.organization_id IS DISTINCT FROM NEW.organization_id)
    EXECUTE FUNCTION count_space_shown_bodies();
CREATE TRIGGER spaces_shown_bodies_delete BEFORE DELETE ON spaces
    FOR EACH ROW WHEN (OLD.deleted_at IS NULL) EXECUTE FUNCTION count_space_shown_bodies();

-- Pages written into a revision that a live space already names (a new
-- space's first revision, a duplicate's copy) are counted, and made current
-- pages, as they come.
-- Every other revision's pages (a change request's, a merge's before the
-- space moves to it) are counted when a space comes to name it. One look
-- by primary keys per revision the statement wrote (usually one), then one
-- pass over the new pages if any of them is current.
CREATE FUNCTION count_new_pages_shown_bodies() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    rev text;
    space text;
    org text;
    current_revs text[] := '{}';
    current_spaces text[] := '{}';
    current_orgs text[] := '{}';
    r record;
BEGIN
    FOR rev IN SELECT DISTINCT revision_id FROM new_pages LOOP
        SELECT s.id, s.organization_id INTO space, org
        FROM revisions rv JOIN spaces s ON s.id = rv.space_id
        WHERE rv.id = rev AND s.revision_id = rev AND s.deleted_at IS NULL;
        IF FOUND THEN
            current_revs := current_revs || rev;
            current_spaces := current_spaces || space;
            current_orgs := current_orgs || org;
        END IF;
    END LOOP;
    IF cardinality(current_revs) = 0 THEN
        RETURN NULL;
    END IF;
    INSERT INTO current_pages (space_id, page_id, organization_id, body_sha256)
    SELECT cur.space, p.page_id, cur.org, p.body_sha256
    FROM new_pages p JOIN unnest(current_revs, current_spaces, current_orgs) AS cur(rev, space, org) ON cur.rev = p.revision_id
    WHERE p.body_sha256 IS NOT NULL
    ON CONFLICT (space_id, page_id, organization_id) DO UPDATE SET body_sha256 = EXCLUDED.body_sha256;
    FOR r IN
        SELECT c.org, array_agg(c.body_sha256 ORDER BY c.body_sha256) AS bodies, array_agg(c.n ORDER BY c.body_sha256) AS deltas
        FROM (SELECT cur.org, p.body_sha256, count(*)::integer AS n
              FROM new_pages p JOIN unnest(current_revs, current_orgs) AS cur(rev, org) ON cur.rev = p.revision_id
              WHERE p.body_sha256 IS NOT NULL
              GROUP BY cur.org, p.body_sha256) c
        GROUP BY c.org
    LOOP
        PERFORM count_shown_bodies(r.org, r.bodies, r.deltas);
    END LOOP;
    RETURN NULL;
END $$;

CREATE TRIGGER revision_pages_shown_bodies AFTER INSERT ON revision_pages
    REFERENCING NEW TABLE AS new_pages FOR EACH STATEMENT EXECUTE FUNCTION count_new_pages_shown_bodies();

-- The search indexes of migration 0037, holding only shown sections.
CREATE INDEX body_sections_shown_tsv_idx ON body_sections USING gin (organization_id, tsv) WHERE shown;
CREATE INDEX body_sections_shown_heading_idx ON body_sections USING gin (organization_id, to_tsvector('english', heading)) WHERE shown;
DROP INDEX body_sections_org_tsv_idx, body_sections_org_heading_idx;
