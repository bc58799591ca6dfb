-- Sites by custom hostname, instance-wide. A request to a site's own
-- hostname names its site before any organization is known; on a Citus
-- cluster, where sites are distributed by organization, looking the name up
-- in sites would ask every shard. This table is a reference table there
-- (store/citus.go): a copy on every node, read at once. It is kept by the
-- store's writes of sites' hostnames (UpdateSite, DeleteSite); a hostname
-- names one site, which its primary key now holds everywhere.
CREATE TABLE site_hostnames (
    hostname text PRIMARY KEY,
    organization_id text NOT NULL,
    site_id text NOT NULL
);
CREATE INDEX site_hostnames_site ON site_hostnames (site_id);

INSERT INTO site_hostnames (hostname, organization_id, site_id)
    SELECT hostname, organization_id, id FROM sites WHERE hostname IS NOT NULL;
