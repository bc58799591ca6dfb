-- An organization's deleted spaces (kept 7 days for a restore), by
-- organization: the site tree leaves out the site spaces of its
-- organization's deleted spaces (store.publishesLiveSpace) and the access
-- snapshot reads them (store.LoadOrgSpaces), where spaces_deleted_idx (by
-- date, for the purge) gave every organization's.
CREATE INDEX spaces_org_deleted_idx ON spaces (organization_id) WHERE deleted_at IS NOT NULL;
