-- The purge job's garbage collection of blobs asks, for each stored blob,
-- whether any revision's file still names it (store/blob_refs.go).
CREATE INDEX revision_files_blob_idx ON revision_files (blob_sha256);
