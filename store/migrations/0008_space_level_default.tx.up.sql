-- A NULL default level means "guest", but bun writes DEFAULT for a nil value
-- in an UPDATE: with a column default, clearing a space's level to guest
-- silently restored 'inherit'. Inserts always give a level.
ALTER TABLE spaces ALTER COLUMN default_level DROP DEFAULT;
