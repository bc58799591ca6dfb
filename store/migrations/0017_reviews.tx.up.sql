-- Reviews of change requests, and the reviewers asked for one. A review is
-- immutable: a reviewer reviewing again adds a review, which supersedes their
-- earlier ones. seq (one sequence for both tables) orders reviews and
-- requests among themselves, whatever the clock says: a review is outdated
-- once the change request has a newer revision, a newer review by the same
-- reviewer, or a newer request for that reviewer. Everything here goes with
-- its space (through its change request and its revisions) when it is purged.
CREATE SEQUENCE change_request_review_seq;

CREATE TABLE change_request_reviews (
    id                text PRIMARY KEY,
    change_request_id text NOT NULL REFERENCES change_requests (id) ON DELETE CASCADE,
    reviewer_id       text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    requested_by      text REFERENCES users (id) ON DELETE SET NULL,
    status            text NOT NULL CHECK (status IN ('approved', 'changes-requested')),
    revision_id       text NOT NULL REFERENCES revisions (id) ON DELETE CASCADE,
    comment_id        text REFERENCES comments (id) ON DELETE SET NULL,
    created_at        timestamptz NOT NULL,
    updated_at        timestamptz NOT NULL,
    seq               bigint NOT NULL DEFAULT nextval('change_request_review_seq')
);
CREATE INDEX change_request_reviews_cr_idx ON change_request_reviews (change_request_id, reviewer_id, seq);

-- A pending request for a user's review. It is fulfilled (removed) when the
-- user reviews.
CREATE TABLE change_request_requested_reviewers (
    change_request_id text NOT NULL REFERENCES change_requests (id) ON DELETE CASCADE,
    user_id           text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    requested_by      text REFERENCES users (id) ON DELETE SET NULL,
    revision_id       text NOT NULL REFERENCES revisions (id) ON DELETE CASCADE,
    created_at        timestamptz NOT NULL,
    seq               bigint NOT NULL DEFAULT nextval('change_request_review_seq'),
    PRIMARY KEY (change_request_id, user_id)
);
CREATE INDEX change_request_requested_reviewers_user_idx ON change_request_requested_reviewers (user_id);
