-- Search starts from the sections matching a query and finds the pages
-- showing their bodies: revision_pages by body.
CREATE INDEX revision_pages_body_idx ON revision_pages (body_sha256);
