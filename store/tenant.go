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
func inParentOrganization(q *bun.InsertQuery, org string, parentTable, parentID string, returning ...string) *bun.InsertQuery {
	if org != "" {
		if len(returning) > 0 {
			q = q.Returning(strings.Join(returning, ", "))
		}
		return q
	}
	return q.Value("organization_id", "(SELECT organization_id FROM ? WHERE id = ?)", bun.Ident(parentTable), parentID).
		Returning(strings.Join(append(returning, "organization_id"), ", "))
}
