package engine

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/docsapi/docsapi/tracing"
)

// operationSpans gives each GraphQL operation a span (its response: a
// query's or mutation's one, each event of a subscription) and each of its
// root fields one: a root field's resolver reads what the operation is
// about, and everything below it runs inside its span, where the loaders'
// batches (graph/loaders.go) and the SQL statements have theirs. Fields
// below the root get none: a site's tree has thousands, most of them
// copying a value, and the few that read do so through a loader.
//
// The engine has it with tracing on (Config.Traced). Its spans are children
// of the request's (tracing.Child): a request not sampled costs a context
// lookup per operation and root field.
type operationSpans struct{}

var _ interface {
	graphql.HandlerExtension
	graphql.ResponseInterceptor
	graphql.RootFieldInterceptor
} = operationSpans{}

func (operationSpans) ExtensionName() string                   { return "OperationSpans" }
func (operationSpans) Validate(graphql.ExecutableSchema) error { return nil }

func (operationSpans) InterceptResponse(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	if !tracing.Recording(ctx) || !graphql.HasOperationContext(ctx) {
		return next(ctx)
	}
	op := graphql.GetOperationContext(ctx)
	kind, opName := "operation", op.OperationName
	if op.Operation != nil {
		kind, opName = string(op.Operation.Operation), op.Operation.Name
	}
	name := kind
	if opName != "" {
		name += " " + opName
	}
	ctx, span := tracing.Child(ctx, name, trace.WithAttributes(
		semconv.GraphQLOperationTypeKey.String(kind), semconv.GraphQLOperationName(opName)))
	defer span.End()
	resp := next(ctx)
	if resp != nil && len(resp.Errors) > 0 {
		span.SetStatus(codes.Error, resp.Errors[0].Message)
	}
	return resp
}

func (operationSpans) InterceptRootField(ctx context.Context, next graphql.RootResolver) graphql.Marshaler {
	if !tracing.Recording(ctx) {
		return next(ctx)
	}
	// gqlgen's root field context names the field where its type should
	// be: the operation's says which root it is.
	root := "Query"
	if graphql.HasOperationContext(ctx) && graphql.GetOperationContext(ctx).Operation != nil {
		switch graphql.GetOperationContext(ctx).Operation.Operation {
		case ast.Mutation:
			root = "Mutation"
		case ast.Subscription:
			root = "Subscription"
		}
	}
	ctx, span := tracing.Child(ctx, root+"."+graphql.GetRootFieldContext(ctx).Field.Name)
	defer span.End()
	return next(ctx)
}
