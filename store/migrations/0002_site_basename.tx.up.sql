-- A site's basename is its path under the organization's published
-- address, so two sites of one organization cannot share one.
CREATE UNIQUE INDEX sites_basename_key ON sites (organization_id, basename) WHERE basename IS NOT NULL;
