-- A site's customization settings (GitBook's SiteCustomizationSettings, the
-- whole object as last set), and what each site space overrides of them.
-- Tables of their own rather than columns of sites and site_spaces: a list
-- of sites and a site's tree read those rows whole, and never need these.
-- A site without a row has the defaults (graph/internal/customization); a
-- site space without one has its site's settings.

CREATE TABLE site_customizations (
    site_id text NOT NULL,
    organization_id text NOT NULL,
    settings jsonb NOT NULL,
    updated_at timestamptz NOT NULL,
    PRIMARY KEY (site_id, organization_id),
    FOREIGN KEY (site_id, organization_id) REFERENCES sites (id, organization_id) ON DELETE CASCADE
);

-- The overrides of a site's site spaces are read together (a published
-- site's profile answers them all): by site, the nearest indexed ancestor.
-- A site space stays in its site, so site_id is the site space's for good.
CREATE TABLE site_space_customizations (
    site_space_id text NOT NULL,
    organization_id text NOT NULL,
    site_id text NOT NULL,
    overrides jsonb NOT NULL,
    updated_at timestamptz NOT NULL,
    PRIMARY KEY (site_space_id, organization_id),
    FOREIGN KEY (site_space_id, organization_id) REFERENCES site_spaces (id, organization_id) ON DELETE CASCADE
);
CREATE INDEX site_space_customizations_site ON site_space_customizations (organization_id, site_id);
