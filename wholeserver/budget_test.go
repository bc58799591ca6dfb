package wholeserver_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/docsapi/docsapi/cmd/docsapi/server/servertest"
	"github.com/docsapi/docsapi/graph/engine"
)

// rateHeaders are an answer's X-RateLimit-* headers, checked present.
type rateHeaders struct{ limit, remaining, reset int64 }

func rateOf(t *testing.T, res *servertest.Response) rateHeaders {
	t.Helper()
	var h rateHeaders
	for name, p := range map[string]*int64{"X-RateLimit-Limit": &h.limit, "X-RateLimit-Remaining": &h.remaining, "X-RateLimit-Reset": &h.reset} {
		v, err := strconv.ParseInt(res.Header.Get(name), 10, 64)
		if err != nil {
			t.Fatalf("%d answer without a numeric %s (%q): %s", res.Status, name, res.Header.Get(name), res.Body)
		}
		*p = v
	}
	return h
}

func TestRateBudget(t *testing.T) {
	t.Parallel()
	const limit = 200
	env := servertest.New(t, servertest.Options{RateLimit: limit, RateWindow: time.Minute})
	alice, bob := env.NewUser("Alice"), env.NewUser("Bob")
	window := env.Clock.Now().Truncate(time.Minute)
	reset := window.Add(time.Minute)

	// A GraphQL operation costs its complexity: { viewer { id } } is 2.
	res := alice.Do("POST", "/graphql", `{"query":"{ viewer { id } }"}`).Expect(http.StatusOK)
	h := rateOf(t, res)
	if h != (rateHeaders{limit, limit - 2, reset.Unix()}) {
		t.Fatalf("headers after a first query: %+v, want limit %d, remaining %d, reset %d", h, limit, limit-2, reset.Unix())
	}
	var out servertest.GraphQLResponse
	res.Decode(&out)
	cost, _ := out.Extensions["cost"].(map[string]any)
	if cost["requested"] != 2.0 || cost["remaining"] != float64(limit-2) || cost["resetAt"] != reset.UTC().Format(time.RFC3339) {
		t.Fatalf("extensions.cost: %v", out.Extensions)
	}

	// rateLimit tells the same, this operation included (its cost is 6).
	q := alice.GraphQL(`{ rateLimit { limit cost remaining used resetAt } }`, nil)
	var rl struct {
		RateLimit struct {
			Limit, Cost, Remaining, Used int
			ResetAt                      time.Time
		}
	}
	if err := json.Unmarshal(q.Data, &rl); err != nil || len(q.Errors) > 0 {
		t.Fatalf("rateLimit: %v %+v %s", err, q.Errors, q.Data)
	}
	if got := rl.RateLimit; got.Limit != limit || got.Cost != 6 || got.Used != 8 || got.Remaining != limit-8 || !got.ResetAt.Equal(reset) {
		t.Fatalf("rateLimit: %+v", got)
	}

	// A REST call costs its operation's complexity, from the same budget.
	res = alice.Do("GET", "/v1/user", nil).Expect(http.StatusOK)
	restCost := limit - 8 - rateOf(t, res).remaining
	if restCost < 2 {
		t.Fatalf("GET /v1/user cost %d", restCost)
	}
	t.Logf("GET /v1/user costs %d", restCost)
	res = alice.Do("GET", "/v1/user", nil).Expect(http.StatusOK)
	if got := limit - 8 - 2*restCost; rateOf(t, res).remaining != got {
		t.Fatalf("a second GET /v1/user: remaining %d, want %d", rateOf(t, res).remaining, got)
	}

	// Spent: REST answers 429 in its shape, GraphQL in its own.
	for i := 0; ; i++ {
		res = alice.Do("GET", "/v1/user", nil)
		if res.Status != http.StatusOK || i > limit {
			break
		}
	}
	res.Expect(http.StatusTooManyRequests)
	if msg := res.ErrorMessage(); !strings.Contains(msg, "rate limit") {
		t.Errorf("REST 429 message: %s", msg)
	}
	retry, err := strconv.Atoi(res.Header.Get("Retry-After"))
	if err != nil || retry < 1 || retry > 60 {
		t.Errorf("REST 429 Retry-After: %q", res.Header.Get("Retry-After"))
	}
	if h := rateOf(t, res); h.remaining >= restCost || h.limit != limit || h.reset != reset.Unix() {
		t.Errorf("REST 429 headers: %+v", h)
	}
	for _, accept := range []string{"application/json", "application/graphql-response+json"} {
		res = alice.DoWith("POST", "/graphql", `{"query":"{ viewer { id displayName email photoURL } }"}`, http.Header{"Accept": {accept}}).
			Expect(http.StatusTooManyRequests)
		if res.Header.Get("Retry-After") == "" || !strings.HasPrefix(res.Header.Get("Content-Type"), accept) {
			t.Errorf("GraphQL 429 (%s): Retry-After %q, Content-Type %q", accept, res.Header.Get("Retry-After"), res.Header.Get("Content-Type"))
		}
		rateOf(t, res)
		var refused servertest.GraphQLResponse
		res.Decode(&refused)
		if len(refused.Errors) != 1 || refused.Errors[0].Extensions["code"] != engine.CodeRateLimited ||
			refused.Errors[0].Extensions["status"] != 429.0 || (refused.Data != nil && string(refused.Data) != "null") {
			t.Errorf("GraphQL 429 body (%s): %s", accept, res.Body)
		}
	}
	// Refused requests cost nothing; a cheaper one still fits what is left.
	left := rateOf(t, res).remaining
	if left >= 2 {
		res = alice.Do("POST", "/graphql", `{"query":"{ viewer { id } }"}`).Expect(http.StatusOK)
		if rateOf(t, res).remaining != left-2 {
			t.Errorf("after refusals, a query of 2 left %d of %d", rateOf(t, res).remaining, left)
		}
	}

	// Another token has its own budget; so has an anonymous client.
	res = bob.Do("GET", "/v1/user", nil).Expect(http.StatusOK)
	if rateOf(t, res).remaining != limit-restCost {
		t.Errorf("bob's budget: %+v", rateOf(t, res))
	}
	res = env.Do("POST", "/graphql", "", `{"query":"{ __typename }"}`).Expect(http.StatusOK)
	if rateOf(t, res).remaining != limit-1 {
		t.Errorf("an anonymous client's budget: %+v", rateOf(t, res))
	}

	// The next window, the budget is whole again.
	env.Clock.Advance(time.Minute)
	res = alice.Do("GET", "/v1/user", nil).Expect(http.StatusOK)
	if h := rateOf(t, res); h.remaining != limit-restCost || h.reset != reset.Add(time.Minute).Unix() {
		t.Errorf("the next window: %+v", h)
	}

	// Ended windows' counts are deleted (the instance's flusher, every
	// 250 ms, once a window): two windows on, the first one's go.
	env.Clock.Advance(time.Minute)
	deadline := time.Now().Add(10 * time.Second)
	for {
		var old int
		if err := env.DB.Pool.QueryRow(context.Background(), `SELECT count(*) FROM rate_budget_usage WHERE window_start <= $1`, window).Scan(&old); err != nil {
			t.Fatal(err)
		}
		if old == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d counts of an ended window are left", old)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Two instances on one database draw on one budget.
func TestRateBudgetSharedByInstances(t *testing.T) {
	t.Parallel()
	const limit = 100
	a := servertest.New(t, servertest.Options{RateLimit: limit, RateWindow: time.Hour, RateExact: true})
	b := a.AnotherProcess()
	alice := a.NewUser("Alice")
	onA := func() *servertest.Response {
		return a.Do("POST", "/graphql", alice.Token, `{"query":"{ viewer { id } }"}`)
	}
	onB := func() *servertest.Response {
		return b.Do("POST", "/graphql", alice.Token, `{"query":"{ viewer { id } }"}`)
	}

	if got := rateOf(t, onA().Expect(http.StatusOK)).remaining; got != limit-2 {
		t.Fatalf("A: remaining %d", got)
	}
	if got := rateOf(t, onB().Expect(http.StatusOK)).remaining; got != limit-4 {
		t.Fatalf("B after A: remaining %d, want %d", got, limit-4)
	}
	spent := 4
	for ; spent+2 <= limit; spent += 2 {
		if spent%4 == 0 {
			onA().Expect(http.StatusOK)
		} else {
			onB().Expect(http.StatusOK)
		}
	}
	onA().Expect(http.StatusTooManyRequests)
	onB().Expect(http.StatusTooManyRequests)
}

// With an allowance, an instance counts in the database now and then: the
// other sees the spending once it does, never more than limit +
// allowance × instances in all.
func TestRateBudgetAllowance(t *testing.T) {
	t.Parallel()
	const limit = 1000 // allowance: 10
	a := servertest.New(t, servertest.Options{RateLimit: limit, RateWindow: time.Hour})
	b := a.AnotherProcess()
	alice := a.NewUser("Alice")
	admitted := 0
	for i := 0; i < 2*limit; i++ {
		env := a
		if i%2 == 1 {
			env = b
		}
		res := env.Do("POST", "/graphql", alice.Token, `{"query":"{ viewer { id } }"}`)
		if res.Status == http.StatusOK {
			admitted += 2
		}
	}
	if admitted < limit-2 || admitted > limit+2*10 {
		t.Fatalf("two instances admitted %d points of a budget of %d (allowance 10 each)", admitted, limit)
	}
}
