-- A change request is a branch of a space's content: it starts from a main
-- revision (revision_initial), moves forward with its own revisions
-- (revision), is brought up to date with main (revision_merged_ancestor: the
-- main revision last merged in) and, once merged, names the main revision
-- the merge made (revision_merged). Numbers count 1, 2, 3... per space:
-- they are assigned under the space's row lock.
CREATE TABLE change_requests (
    id                       text PRIMARY KEY,
    space_id                 text NOT NULL REFERENCES spaces (id) ON DELETE CASCADE,
    number                   integer NOT NULL,
    status                   text NOT NULL CHECK (status IN ('draft', 'open', 'archived', 'merged')),
    subject                  text NOT NULL DEFAULT '',
    description              jsonb,
    created_by               text REFERENCES users (id) ON DELETE SET NULL,
    created_at               timestamptz NOT NULL,
    updated_at               timestamptz NOT NULL,
    revision_initial         text NOT NULL REFERENCES revisions (id),
    revision                 text NOT NULL REFERENCES revisions (id),
    revision_merged_ancestor text REFERENCES revisions (id),
    revision_merged          text REFERENCES revisions (id),
    UNIQUE (space_id, number)
);
CREATE INDEX change_requests_space_idx ON change_requests (space_id, status, created_at, id);

-- Who edited a change request's content.
CREATE TABLE change_request_contributors (
    change_request_id text NOT NULL REFERENCES change_requests (id) ON DELETE CASCADE,
    user_id           text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    PRIMARY KEY (change_request_id, user_id)
);
