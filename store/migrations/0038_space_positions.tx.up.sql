-- The last position among a container's children, for a new space or
-- collection (store.NextPosition): read from the end of this index, where
-- it scanned every organization's spaces (spaces_org_idx and
-- spaces_parent_idx leave deleted spaces out, and deleted spaces keep their
-- position, so that a restored space does not share it). The root is the
-- parent '' rather than NULL: only an equality lets the index's order serve
-- max(position).
CREATE INDEX spaces_org_parent_position_idx ON spaces (organization_id, (COALESCE(parent_id, '')), position);
