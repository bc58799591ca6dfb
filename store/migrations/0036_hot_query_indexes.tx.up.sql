-- Indexes that serve the filters and orders the hot reads actually use, so
-- that their plans do not depend on how much data other organizations have
-- (issue 18; store/plans_test.go fails when a hot read's plan scans a whole
-- tenant table at size).
--
-- The comments on a space's own content, in the order their lists page
-- through them. comments_space_idx (space_id, change_request_id, posted_at,
-- id) finds them, but "change_request_id IS NULL" is no equality, so it
-- cannot give them in posted_at order: lists sorted all of a space's
-- comments, and at size PostgreSQL scanned the whole table instead. The
-- filter is fixed, so the index is partial.
CREATE INDEX comments_space_content_idx ON comments (space_id, posted_at, id)
    WHERE change_request_id IS NULL;

-- The comments of change requests, by change request in the order their
-- lists page through them, with their status: the open comment counts
-- shown with every change request (list, read, create) are an index-only
-- count of the rows counted, where they scanned every comment of the
-- database; and deleting a change request finds its comments (ON DELETE
-- CASCADE) without a scan. Comments on a space's content are no change
-- request's: left out.
CREATE INDEX comments_change_request_idx ON comments (change_request_id, posted_at, id) INCLUDE (status)
    WHERE change_request_id IS NOT NULL;

-- The change requests of a space, newest first, as lists show them when
-- no status is asked for: change_requests_space_idx leads with the status,
-- so those lists sorted every change request of the space.
CREATE INDEX change_requests_space_created_idx ON change_requests (space_id, created_at, id);

-- A change request belongs to one space, but PostgreSQL takes the two
-- columns for independent and estimated the comments of a change request
-- of a space as the product of their shares: some twenty rows for a
-- change request with five hundred comments, so it sorted them all rather
-- than read the first page in order from comments_space_idx. The
-- dependency statistics (built by ANALYZE, as autovacuum runs it) tell it
-- the change request determines the space.
CREATE STATISTICS comments_change_request_space (dependencies) ON change_request_id, space_id FROM comments;
