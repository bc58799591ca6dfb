package graph

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/docsapi/docsapi/store"
)

// replicaReads sends the reads of query operations to the database's
// streaming replicas, and records where the primary is after each
// mutation, so that the caller's next reads wait for a replica that has
// replayed it (the rule and its reasons: store/replica_route.go). It is
// installed only when the database has replicas.
//
// A query that writes after all (something made on first use) is noticed
// by the store: its later reads go to the primary, and its position is
// recorded too. Subscriptions read their events on the primary (their
// operations have no route), where every event is visible as soon as it
// is heard of; a subscriber told of an event then reads at least where the
// primary was (live.go, subscription.go), so that refetching what the
// event names finds it.
type replicaReads struct{ db *store.DB }

var _ interface {
	graphql.HandlerExtension
	graphql.ResponseInterceptor
} = replicaReads{}

func (replicaReads) ExtensionName() string                   { return "ReplicaReads" }
func (replicaReads) Validate(graphql.ExecutableSchema) error { return nil }

func (x replicaReads) InterceptResponse(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	if !graphql.HasOperationContext(ctx) || graphql.GetOperationContext(ctx).Operation == nil {
		return next(ctx)
	}
	caller := ""
	if c, err := CallerFrom(ctx); err == nil {
		caller = c.User.ID
	}
	switch graphql.GetOperationContext(ctx).Operation.Operation {
	case ast.Query:
		ctx = x.db.RouteReads(ctx, caller)
		resp := next(ctx)
		if store.WroteUnder(ctx) {
			x.db.RecordWrite(ctx, caller)
		}
		return resp
	case ast.Mutation:
		resp := next(ctx)
		x.db.RecordWrite(ctx, caller)
		return resp
	}
	return next(ctx)
}
