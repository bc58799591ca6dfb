package store

import (
	"strings"

	"github.com/uptrace/bun"
)

// inParentOrganization fills the organization_id of a row being inserted
// from its parent's (row parentID of parentTable) when the caller did not
// give it: a child always belongs to its parent's organization. It costs
// the insert one primary key lookup, the one its foreign key check makes
// anyway, and no round trip: the value comes back into the model.
//
// The lookup share-locks the parent (FOR KEY SHARE, as the foreign key
// check does): should a transfer to another organization be changing the
// parent, it waits for it and reads the new organization. Read without the
// lock, it was the old one, and the child stayed in the organization its
// parent had left.
func inParentOrganization(q *bun.InsertQuery, org string, parentTable, parentID string, returning ...string) *bun.InsertQuery {
	if org != "" {
		if len(returning) > 0 {
			q = q.Returning(strings.Join(returning, ", "))
		}
		return q
	}
	return q.Value("organization_id", "(SELECT organization_id FROM ? WHERE id = ? FOR KEY SHARE)", bun.Ident(parentTable), parentID).
		Returning(strings.Join(append(returning, "organization_id"), ", "))
}
