-- Files of a revision: their bytes live in the blob store, by SHA-256; a
-- revision holds small rows naming them, copied to the next revision like
-- its pages.
CREATE TABLE revision_files (
    revision_id  text NOT NULL REFERENCES revisions (id) ON DELETE CASCADE,
    file_id      text NOT NULL,
    name         text NOT NULL,
    content_type text NOT NULL,
    size         bigint NOT NULL,
    blob_sha256  text NOT NULL,
    width        integer,
    height       integer,
    PRIMARY KEY (revision_id, file_id)
);

-- Secrets of the server itself, shared by every process on the database
-- (the key that signs download URLs).
CREATE TABLE server_secrets (
    name  text PRIMARY KEY,
    value bytea NOT NULL
);
