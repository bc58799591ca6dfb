-- The reads of a space's comments and change requests name its
-- organization too, so that a Citus cluster runs them on one shard group
-- (the organization is the distribution column). PostgreSQL takes the
-- organization and the space for independent and estimated a space's
-- comments as the product of their shares: a few rows where there are
-- thousands, so it sorted them all rather than read the first page in
-- order from the space's index (as migration 0036 found for the change
-- request and the space). The dependency statistics tell it the space
-- (and a change request) determines the organization.
DROP STATISTICS comments_change_request_space;
CREATE STATISTICS comments_change_request_space (dependencies)
    ON change_request_id, space_id, organization_id FROM comments;
CREATE STATISTICS change_requests_space_organization (dependencies)
    ON space_id, organization_id FROM change_requests;
