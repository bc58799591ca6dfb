-- A comment's or reply's body given as a document (GitBook's Document is
-- markdown or a JSON document): kept as given, and answered as given in the
-- document format; body holds its text, which stands for it where markdown
-- is read (graph/comment.go).
ALTER TABLE comments ADD COLUMN body_document jsonb;
ALTER TABLE comment_replies ADD COLUMN body_document jsonb;
