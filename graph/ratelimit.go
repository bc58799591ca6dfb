package graph

import (
	"context"

	"github.com/docsapi/docsapi/graph/engine"
	"github.com/docsapi/docsapi/graph/model"
)

// RateLimit is the caller's rate budget as this operation left it (the
// engine charged it before execution); nil without a budget.
func (r *queryResolver) RateLimit(ctx context.Context) (*model.RateLimit, error) {
	u, ok := engine.Cost(ctx)
	if !ok {
		return nil, nil
	}
	return &model.RateLimit{Limit: int(u.Limit), Cost: int(u.Cost), Remaining: int(u.Remaining()),
		Used: int(u.Used), ResetAt: u.Reset}, nil
}
