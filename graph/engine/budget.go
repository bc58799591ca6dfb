package engine

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/99designs/gqlgen/complexity"
	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/docsapi/docsapi/graph/budget"
)

// CodeRateLimited is the error code of an operation refused because its
// caller's rate budget is spent.
const CodeRateLimited = "RATE_LIMITED"

// budgetCharge charges every operation its complexity to the rate budget
// of its context's meter (budget.WithMeter; none: nothing is charged), and
// refuses it once the budget is spent. It runs after the complexity limit,
// which has computed the complexity of a client's document; the REST
// adapter's documents skip that limit, so their cost is computed here, once
// per document and values of its Int variables (page sizes), and kept.
//
// It also adds extensions.cost {requested, remaining, resetAt} to the
// response of every query and mutation it charged.
type budgetCharge struct {
	b  *budget.Budget
	es graphql.ExecutableSchema
	// serverCosts are the costs of the REST adapter's operations, by
	// operation name and Int variables.
	serverCosts *lru.LRU[int]
}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
	graphql.ResponseInterceptor
} = budgetCharge{}

const budgetStats = "RateBudget"

func (budgetCharge) ExtensionName() string                   { return budgetStats }
func (budgetCharge) Validate(graphql.ExecutableSchema) error { return nil }

func newBudgetCharge(b *budget.Budget, es graphql.ExecutableSchema) budgetCharge {
	return budgetCharge{b: b, es: es, serverCosts: lru.New[int](10_000)}
}

func (c budgetCharge) MutateOperationContext(ctx context.Context, op *graphql.OperationContext) *gqlerror.Error {
	m := budget.MeterFrom(ctx)
	if m == nil || op.Operation == nil {
		return nil
	}
	u, ok := c.b.Charge(m.Key, int64(max(1, c.cost(ctx, op))))
	m.Record(u, ok)
	op.Stats.SetExtension(budgetStats, &u)
	if !ok {
		err := gqlerror.Errorf("%s", u.Refusal(c.b.Window()))
		err.Extensions = map[string]any{"code": CodeRateLimited, "status": http.StatusTooManyRequests,
			"resetAt": u.Reset.UTC().Format(time.RFC3339)}
		return err
	}
	return nil
}

// cost is op's complexity, as the complexity limit computed it for a
// client's document.
func (c budgetCharge) cost(ctx context.Context, op *graphql.OperationContext) int {
	if s, ok := op.Stats.GetExtension("ComplexityLimit").(*extension.ComplexityStats); ok {
		return s.Complexity
	}
	if !serverDocument(ctx) {
		return complexity.Calculate(ctx, c.es, op.Operation, op.Variables)
	}
	var key strings.Builder
	key.WriteString(op.Operation.Name)
	for _, v := range op.Operation.VariableDefinitions {
		if v.Type.NamedType != "Int" {
			continue
		}
		key.WriteString("," + v.Variable + "=")
		switch n := op.Variables[v.Variable].(type) {
		case int:
			key.WriteString(strconv.Itoa(n))
		case int64:
			key.WriteString(strconv.FormatInt(n, 10))
		default:
			key.WriteString("?")
		}
	}
	if n, ok := c.serverCosts.Get(ctx, key.String()); ok {
		return n
	}
	n := complexity.Calculate(ctx, c.es, op.Operation, op.Variables)
	c.serverCosts.Add(ctx, key.String(), n)
	return n
}

func (c budgetCharge) InterceptResponse(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	resp := next(ctx)
	// The REST adapter's answers carry no extensions (their headers tell
	// the budget).
	if resp == nil || serverDocument(ctx) || !graphql.HasOperationContext(ctx) {
		return resp
	}
	op := graphql.GetOperationContext(ctx)
	if op.Operation == nil || op.Operation.Operation == ast.Subscription {
		return resp
	}
	u, ok := op.Stats.GetExtension(budgetStats).(*budget.Usage)
	if !ok {
		return resp
	}
	if resp.Extensions == nil {
		resp.Extensions = map[string]any{}
	}
	resp.Extensions["cost"] = map[string]any{"requested": u.Cost, "remaining": u.Remaining(),
		"resetAt": u.Reset.UTC().Format(time.RFC3339)}
	return resp
}

// Cost is what the running operation was charged and left of its caller's
// rate budget; ok false when it draws on none.
func Cost(ctx context.Context) (u budget.Usage, ok bool) {
	if !graphql.HasOperationContext(ctx) {
		return u, false
	}
	p, ok := graphql.GetOperationContext(ctx).Stats.GetExtension(budgetStats).(*budget.Usage)
	if !ok {
		return u, false
	}
	return *p, true
}
