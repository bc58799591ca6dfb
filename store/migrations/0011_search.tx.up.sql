-- Full-text search over page bodies, split in sections at headings. Like
-- bodies, sections are stored once per distinct text, so a new revision
-- costs the index nothing; a search joins a space's current revision's
-- pages to the sections of their bodies.
CREATE TABLE body_sections (
    body_sha256 text NOT NULL REFERENCES page_bodies (sha256) ON DELETE CASCADE,
    position    integer NOT NULL,
    -- The heading's anchor; "" for the part before the first heading.
    anchor      text NOT NULL,
    heading     text NOT NULL,
    body        text NOT NULL,
    tsv         tsvector GENERATED ALWAYS AS (
        setweight(to_tsvector('english', heading), 'A') || setweight(to_tsvector('english', body), 'B')) STORED,
    PRIMARY KEY (body_sha256, position)
);
CREATE INDEX body_sections_tsv_idx ON body_sections USING gin (tsv);
CREATE INDEX revision_pages_title_tsv_idx ON revision_pages USING gin (to_tsvector('english', title));
