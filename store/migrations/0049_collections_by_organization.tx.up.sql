-- An organization's collections read in the order of a page (oldest first,
-- store.ListCollections), whole (an access snapshot, store.LoadOrgAccess)
-- and at the end of a container (store.NextPosition): by organization,
-- through indexes, where they scanned every organization's collections (a
-- table that grows with every tenant: the plan test of issue 29, with
-- 10,000 collections of another organization, found all three; a page
-- also sorted them all). The position index is the spaces' of migration
-- 0038: the root is the parent '', so that max(position) reads one entry.
-- Each statement alone (--bun:split): on a distributed database Citus
-- passes the statement's text on to the workers.
CREATE INDEX collections_org_created_idx ON collections (organization_id, created_at, id);
--bun:split
CREATE INDEX collections_org_parent_position_idx ON collections (organization_id, (COALESCE(parent_id, '')), position);
