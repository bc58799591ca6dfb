-- Indexes for a search whose work is bounded per query and does not grow
-- with other organizations' content (issue 18; store/search.go Search).
--
-- btree_gin lets one GIN index lead with the organization: a search reads
-- only its own organization's matches, where body_sections_tsv_idx gave
-- every organization's sections holding the word, each then read from the
-- heap to be discarded. btree_gin ships with PostgreSQL (contrib) and is a
-- trusted extension: a database owner without superuser rights may create
-- it.
CREATE EXTENSION IF NOT EXISTS btree_gin;

CREATE INDEX body_sections_org_tsv_idx ON body_sections USING gin (organization_id, tsv);
DROP INDEX body_sections_tsv_idx;

-- Sections whose heading matches: the best hits (a heading's words weigh
-- most in the rank), found apart from the sections whose text matches, of
-- which a search ranks only the first ones it finds.
CREATE INDEX body_sections_org_heading_idx ON body_sections USING gin (organization_id, to_tsvector('english', heading));

-- Page titles, by revision: a search looks them up in the searched spaces'
-- current revisions only, where the title index held every revision of
-- every organization (each revision repeats its pages' titles).
CREATE INDEX revision_pages_revision_title_idx ON revision_pages USING gin (revision_id, to_tsvector('english', title));
DROP INDEX revision_pages_title_tsv_idx;

-- The pages showing a body, with their revision and page: a search checks
-- each matching section against the searched revisions from the index
-- alone (a space with many revisions has as many rows per body).
CREATE INDEX revision_pages_body_org_idx ON revision_pages (body_sha256, organization_id) INCLUDE (revision_id, page_id);
DROP INDEX revision_pages_body_idx;
