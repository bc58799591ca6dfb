package wholeserver_test

import (
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/docsapi/docsapi/cmd/docsapi/server/servertest"
	"github.com/docsapi/docsapi/rest"
	"github.com/docsapi/docsapi/store"
)

// TestMixedTenantIDs is TestCrossTenantAccess's attacker with objects of her
// own: she administers an organization filled like the victim's, and names
// her objects where she has the right to and the victim's elsewhere, in
// every mix the routes allow: her organization with the victim's site, her
// space with the victim's change request, her change request's path with the
// victim's comment..., and her own paths with a body naming one of the
// victim's objects (a parent, a position, a section, a space to add). A
// check made on the outer object alone, or a lookup of the inner one that
// forgets its parent, shows here as an answer that is not a refusal, or as
// a change to the victim's data.
func TestMixedTenantIDs(t *testing.T) {
	t.Parallel()
	env := servertest.New(t)
	victim, eve := env.NewUser("Victim"), env.NewUser("Eve")
	eveSpare := eve.NewOrg("Eve Spare")
	v := newTenantFixture(t, env, victim, "victim-tool", eve, eveSpare)
	e := newTenantFixture(t, env, eve, "eve-tool", victim, v.org)
	// What the fixture's snapshot does not read: replies and translations.
	snapshot := func() string {
		var b strings.Builder
		b.WriteString(v.snapshot())
		for _, p := range []string{
			"/v1/spaces/" + v.ids["spaceId"] + "/comments/" + v.ids["commentId"] + "/replies/" + v.ids["commentReplyId"],
			"/v1/spaces/" + v.ids["spaceId"] + "/change-requests/" + v.ids["changeRequestId"] + "/comments/" + v.ids["crCommentId"] + "/replies/" + v.ids["crCommentReplyId"],
			"/v1/orgs/" + v.org + "/translations/" + v.ids["translationId"],
			"/v1/spaces/" + v.ids["spaceId"] + "/permissions/aggregate",
			"/v1/orgs/" + v.org + "/saml/" + v.ids["samlProviderId"],
			"/v1/orgs/" + v.org + "/link-invites/" + v.ids["inviteId"],
		} {
			b.Write(victim.Do("GET", p, nil).Expect(http.StatusOK).Body)
		}
		return b.String()
	}
	before := snapshot()

	// A deletion of what is not there answers 204, as the reference's do;
	// whether it deleted anything of the victim's, the snapshot tells.
	refused := func(method string, status int) bool {
		if method == "DELETE" && status == http.StatusNoContent {
			return true
		}
		return status == http.StatusBadRequest || status == http.StatusForbidden || status == http.StatusNotFound ||
			status == http.StatusConflict || status == http.StatusPreconditionFailed || status == http.StatusUnprocessableEntity
	}
	// Where the victim's ids go, ids of nothing are tried first: an
	// answer that differs tells the attacker that the victim's id names
	// something (an existence oracle).
	nothing := map[string]string{}
	for k := range v.ids {
		nothing[k] = store.NewID()
	}
	nothing["pagePath"] = "no-such-page"
	// A published address of nothing: of no organization's no site.
	nothing["publishedURL"] = strings.NewReplacer(v.ids["organizationId"], nothing["organizationId"], v.ids["siteId"], nothing["siteId"]).
		Replace(v.ids["publishedURL"])
	type attempt struct {
		name string
		// fill is the path and body with the given ids where the
		// victim's go.
		fill func(ids map[string]string) (path, body string)
	}
	// Reads first, deletions last, so that an attempt does not lose the
	// objects of Eve's that the next ones name.
	order := func(r rest.Route) int {
		switch r.Method {
		case "GET":
			return 0
		case "DELETE":
			return 2
		}
		return 1
	}
	routes := slices.Clone(rest.Routes)
	slices.SortStableFunc(routes, func(a, b rest.Route) int { return order(a) - order(b) })
	param := regexp.MustCompile(`\{([A-Za-z]+)(\.\.\.)?\}`)
	attempts := 0
	for _, route := range routes {
		if ownData[route.Operation] {
			continue
		}
		names := param.FindAllStringSubmatch(route.Path, -1)
		build := func(mask int, victimIDs map[string]string) string {
			path := route.Path
			for i, m := range names {
				ids := threadIDs(route, victimIDs)
				if mask&(1<<i) != 0 {
					ids = threadIDs(route, e.ids)
				}
				path = strings.Replace(path, m[0], ids[m[1]], 1)
			}
			return path + requiredQueryOf(route.Operation, e.ids)
		}
		body := e.bodies[route.Operation]
		var tries []attempt
		// Paths of Eve's ids and the victim's, mixed: every mask but all
		// Eve's (her own). A parameter whose value is the same in both
		// organizations (a page path, a slug) names Eve's own object
		// either way.
	masks:
		for mask := 0; mask < 1<<len(names)-1; mask++ {
			for i, m := range names {
				if mask > 0 && mask&(1<<i) == 0 && threadIDs(route, v.ids)[m[1]] == threadIDs(route, e.ids)[m[1]] {
					continue masks
				}
			}
			tries = append(tries, attempt{"path " + maskString(mask, len(names)), func(ids map[string]string) (string, string) {
				return build(mask, ids), body
			}})
		}
		// Eve's own path, with one of the victim's ids in the body where
		// Eve's would be.
		own := build(1<<len(names)-1, nil)
		for key, eveID := range e.ids {
			if victimID := v.ids[key]; body != "" && victimID != eveID && strings.Contains(body, eveID) {
				tries = append(tries, attempt{"body " + key, func(ids map[string]string) (string, string) {
					return own, strings.ReplaceAll(body, eveID, ids[key])
				}})
			}
		}
		// Bodies naming the victim's organization or the victim (a
		// transfer's target, a publisher, a user to invite).
		if strings.Contains(body, v.org) || strings.Contains(body, victim.ID) {
			tries = append(tries, attempt{"own path, victim in body", func(ids map[string]string) (string, string) {
				return own, strings.NewReplacer(v.org, ids["organizationId"], victim.ID, ids["userId"]).Replace(body)
			}})
		}
		slices.SortFunc(tries, func(a, b attempt) int { return strings.Compare(a.name, b.name) })
		for _, try := range tries {
			attempts++
			do := func(ids map[string]string) (*servertest.Response, string) {
				path, body := try.fill(ids)
				var b any
				if route.Method != "GET" && route.Method != "DELETE" && body != "" {
					b = body
				}
				res := eve.Do(route.Method, path, b)
				if !refused(route.Method, res.Status) {
					t.Errorf("%s (%s) by Eve, %s: %s %s: %d %s", route.Operation, route.Path, try.name, route.Method, path, res.Status, firstBytes(res.Body, 300))
					return res, ""
				}
				if res.Status == http.StatusNoContent {
					return res, ""
				}
				msg := res.ErrorMessage()
				for k, id := range ids {
					msg = strings.ReplaceAll(msg, id, "{"+k+"}")
				}
				return res, msg
			}
			none, noneMsg := do(nothing)
			res, msg := do(v.ids)
			if res.Status != none.Status || msg != noneMsg {
				t.Errorf("%s (%s) by Eve, %s: the victim's ids answer %d %q, ids of nothing %d %q: the answer tells that they exist",
					route.Operation, route.Path, try.name, res.Status, msg, none.Status, noneMsg)
			}
		}
		if route.Method != "GET" && len(tries) > 0 {
			if after := snapshot(); after != before {
				t.Fatalf("%s by Eve with the victim's ids changed the victim's data", route.Operation)
			}
		}
	}
	t.Logf("%d attempts", attempts)
}

// maskString writes which of n parameters are Eve's (e) and the victim's (v).
func maskString(mask, n int) string {
	var b strings.Builder
	for i := range n {
		if mask&(1<<i) != 0 {
			b.WriteByte('e')
		} else {
			b.WriteByte('v')
		}
	}
	return b.String()
}

func firstBytes(b []byte, n int) []byte {
	if len(b) > n {
		return b[:n]
	}
	return b
}
