-- Nothing reads revision_pages by body since search checks its candidates
-- against current_pages (migration 0039), and every revision writes to the
-- index: each change request's revision copies its space's pages, a row
-- and an index entry each. The revision_pages primary key (by revision)
-- serves every remaining read.
DROP INDEX revision_pages_body_org_idx;
