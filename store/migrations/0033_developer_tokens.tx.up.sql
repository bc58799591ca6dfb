-- A developer token may run ad-hoc GraphQL documents and introspection when
-- the server runs registered (trusted) documents only
-- (DOCSAPI_TRUSTED_DOCUMENTS); ordinary tokens run registered ones.
ALTER TABLE api_tokens ADD COLUMN developer boolean NOT NULL DEFAULT false;
