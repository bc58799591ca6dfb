-- Git sync: where a revision, page or file came from (or went to) in a git
-- repository, and the space's last git sync (its URL never holds
-- credentials: they are stripped before anything is stored).
ALTER TABLE revisions ADD COLUMN git jsonb;
ALTER TABLE revision_pages ADD COLUMN git_path text, ADD COLUMN git_oid text;
ALTER TABLE revision_files ADD COLUMN git_path text, ADD COLUMN git_oid text;
ALTER TABLE spaces ADD COLUMN git_info jsonb;
