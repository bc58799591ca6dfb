-- What opens a site to visitors beyond its visibility: its share links
-- (GitBook's ShareLink), each a secret key a visitor's address carries as
-- ?share=<key>, which can be turned off (active) or removed; and its
-- visitor authentication settings (GitBook's SitePublishingAuth): the
-- private key the site owner's login backend signs visitors' tokens with,
-- and where visitors go when theirs is refused. Tables of their own, like
-- a site's customization (0047): lists of sites and site trees never read
-- them. Tenant tables keyed with their organization, whose keys cascade
-- from the site's (on a Citus cluster they are colocated with it).

CREATE TABLE site_share_links (
    id text NOT NULL,
    organization_id text NOT NULL,
    site_id text NOT NULL,
    name text NOT NULL,
    share_key text NOT NULL,
    active boolean NOT NULL,
    created_at timestamptz NOT NULL,
    PRIMARY KEY (id, organization_id),
    FOREIGN KEY (site_id, organization_id) REFERENCES sites (id, organization_id) ON DELETE CASCADE
);
-- A site's links in the order they are listed (oldest first).
CREATE INDEX site_share_links_site ON site_share_links (organization_id, site_id, created_at, id);
-- The link a visitor's key names (store.SiteShareLinkByKey): a key opens
-- one link of one site.
CREATE UNIQUE INDEX site_share_links_key ON site_share_links (organization_id, site_id, share_key);

-- One row per site, from its creation (store.CreateSite).
CREATE TABLE site_publishing_auths (
    site_id text NOT NULL,
    organization_id text NOT NULL,
    backend text NOT NULL,
    private_key text NOT NULL,
    fallback_url text,
    updated_at timestamptz NOT NULL,
    PRIMARY KEY (site_id, organization_id),
    FOREIGN KEY (site_id, organization_id) REFERENCES sites (id, organization_id) ON DELETE CASCADE
);

-- The sites of before get theirs: a private key of 256 bits as
-- store.NewSecret makes them (base64url, unpadded), hashed from three
-- random UUIDs (gen_random_uuid draws 122 strongly random bits each;
-- pgcrypto's gen_random_bytes is not installed).
INSERT INTO site_publishing_auths (site_id, organization_id, backend, private_key, updated_at)
SELECT id, organization_id, 'custom',
    translate(rtrim(encode(sha256(uuid_send(gen_random_uuid()) || uuid_send(gen_random_uuid()) || uuid_send(gen_random_uuid())), 'base64'), '='),
        '+/', '-_'),
    now()
FROM sites;
