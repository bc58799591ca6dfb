-- A page may ask to be left out of its site's search (no_index: GitBook's
-- noIndex, "not indexable in the search and ask features") and out of
-- search engines (no_robots_index: noRobotsIndex; the sitemap leaves it
-- out, robots.txt disallows it, its pages say noindex). Both are page
-- attributes, kept per revision like hidden. A constant default: no table
-- rewrite, on one PostgreSQL or a Citus cluster.
ALTER TABLE revision_pages
    ADD COLUMN no_index boolean NOT NULL DEFAULT false,
    ADD COLUMN no_robots_index boolean NOT NULL DEFAULT false;
