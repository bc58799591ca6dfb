-- API tokens may expire: those issued by a single sign-on do (a session, not
-- a credential for life); those an administrator creates do not (NULL).
ALTER TABLE api_tokens ADD COLUMN expires_at timestamptz;
