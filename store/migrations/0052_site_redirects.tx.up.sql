-- Redirects of published sites, two kinds:
--
-- site_redirects: a site's own redirects (GitBook's SiteRedirect), made by
-- those who manage the site: a source path under the site's address, kept
-- in one canonical form (graph/site_redirect.go), and where it leads: a
-- section, a site space or a page of the site, or a URL (a path of the site
-- or an absolute http(s) address). The destination's ids are not foreign
-- keys: a redirect whose section, site space or page is gone leads nowhere
-- (404) and says so (its target is null) until it is changed or deleted.
--
-- page_redirects: the automatic redirects of a space's pages whose path
-- changed (a rename, a move, a new slug, a merge, a git import): the path a
-- page had, and the page (its id stays the same across revisions), so that
-- a path moved twice still leads to where the page is now. Kept per space,
-- so every site showing the space serves them; never at a path where a
-- page is now; at most store.MaxPageRedirects a space, oldest out first.
--
-- Tenant tables keyed with their organization, whose keys cascade from the
-- site's and the space's (on a Citus cluster they are colocated with them).

CREATE TABLE site_redirects (
    id text NOT NULL,
    organization_id text NOT NULL,
    site_id text NOT NULL,
    source text NOT NULL,
    destination_kind text NOT NULL,
    destination_site_section_id text,
    destination_site_space_id text,
    destination_page_id text,
    destination_url text,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    PRIMARY KEY (id, organization_id),
    FOREIGN KEY (site_id, organization_id) REFERENCES sites (id, organization_id) ON DELETE CASCADE
);
-- A site's redirects in the order they are listed (oldest first).
CREATE INDEX site_redirects_site ON site_redirects (organization_id, site_id, created_at, id);
-- The redirect a visitor's address names (store.SiteRedirectBySource): one
-- source, one redirect, per site.
CREATE UNIQUE INDEX site_redirects_source ON site_redirects (organization_id, site_id, source);

CREATE TABLE page_redirects (
    organization_id text NOT NULL,
    space_id text NOT NULL,
    path text NOT NULL,
    page_id text NOT NULL,
    created_at timestamptz NOT NULL,
    PRIMARY KEY (organization_id, space_id, path),
    FOREIGN KEY (space_id, organization_id) REFERENCES spaces (id, organization_id) ON DELETE CASCADE
);
-- The oldest go first past the cap; a page deleted takes its old paths.
CREATE INDEX page_redirects_age ON page_redirects (organization_id, space_id, created_at, path);
CREATE INDEX page_redirects_page ON page_redirects (organization_id, space_id, page_id);
