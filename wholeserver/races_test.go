package wholeserver_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/docsapi/docsapi/cmd/docsapi/server/servertest"
	"github.com/docsapi/docsapi/store"
)

// Races a busy team or an attacker triggers: requests released together
// against one invariant, checked by reads once they have all answered.

// atOnce sends the requests together (each waits on one start barrier) and
// returns their responses, in order, once all have answered.
func atOnce(reqs ...func() *servertest.Response) []*servertest.Response {
	out := make([]*servertest.Response, len(reqs))
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, req := range reqs {
		wg.Go(func() {
			<-start
			out[i] = req()
		})
	}
	close(start)
	wg.Wait()
	return out
}

// newReaders makes n users ("User 0"...) readers of org.
func newReaders(env *servertest.Env, org string, n int) []*servertest.User {
	users := make([]*servertest.User, n)
	for i := range users {
		users[i] = env.NewUser(fmt.Sprint("User ", i))
		users[i].Join(org, store.RoleRead)
	}
	return users
}

// wantClean fails unless every response is one of the allowed statuses: a
// lost race is a clean 4xx, never a 500.
func wantClean(t *testing.T, responses []*servertest.Response, allowed ...int) {
	t.Helper()
	for _, res := range responses {
		if res == nil {
			t.Fatal("a request did not answer")
		}
		ok := false
		for _, s := range allowed {
			ok = ok || res.Status == s
		}
		if !ok {
			t.Errorf("status %d, want one of %v: %s", res.Status, allowed, res.Body)
		}
	}
}

// Content created in a collection while the collection is deleted or given
// to another organization ends up somewhere in the tree of its own
// organization, or is refused cleanly.
func TestConcurrentCreatesInAChangingCollection(t *testing.T) {
	t.Parallel()
	_, c := newContentEnv(t)
	other := c.alice.NewOrg("Other")
	const n = 8
	for _, change := range []string{"delete", "transfer"} {
		target := c.collection("Target "+change, "")
		var reqs []func() *servertest.Response
		for i := range n {
			kind := []string{"spaces", "collections"}[i%2]
			reqs = append(reqs, func() *servertest.Response {
				return c.alice.Do("POST", "/v1/orgs/"+c.org+"/"+kind, map[string]any{"title": fmt.Sprint(change, i), "parent": target})
			})
		}
		reqs = append(reqs, func() *servertest.Response {
			if change == "delete" {
				return c.alice.Do("DELETE", "/v1/collections/"+target, nil)
			}
			return c.alice.Do("POST", "/v1/collections/"+target+"/transfer", map[string]any{"organization": other})
		})
		responses := atOnce(reqs...)
		wantClean(t, responses[:n], http.StatusCreated, http.StatusBadRequest)
		wantClean(t, responses[n:], http.StatusOK, http.StatusResetContent)
		for i, res := range responses[:n] {
			if res.Status != http.StatusCreated {
				continue
			}
			kind := []string{"spaces", "collections"}[i%2]
			got := c.alice.Do("GET", "/v1/"+kind+"/"+res.String("id"), nil).Expect(http.StatusOK).JSON()
			org, _ := got["organization"].(string)
			parent, _ := got["parent"].(string)
			if parent != "" {
				// Its parent is a collection of the same organization.
				parentOrg := c.alice.Do("GET", "/v1/collections/"+parent, nil).Expect(http.StatusOK).String("organization")
				if parentOrg != org {
					t.Errorf("%s %s of %s is in collection %s of %s", kind, got["id"], org, parent, parentOrg)
				}
			}
			if change == "delete" && parent == target {
				t.Errorf("%s %s is in the deleted collection", kind, got["id"])
			}
		}
	}
}

// Replies and reactions to a comment being deleted are made before it goes
// (and go with it) or refused with a 404; nothing of the comment is left.
func TestConcurrentRepliesToADeletedComment(t *testing.T) {
	t.Parallel()
	e := newCREnv(t)
	base := e.spaceBase + "/comments"
	const n = 8
	for round := range 3 {
		id := e.alice.Do("POST", base, map[string]any{"body": map[string]any{"markdown": fmt.Sprint("Comment ", round)}}).Expect(http.StatusOK).String("id")
		var reqs []func() *servertest.Response
		for i := range n {
			reqs = append(reqs,
				func() *servertest.Response {
					return e.alice.Do("POST", base+"/"+id+"/replies", map[string]any{"body": map[string]any{"markdown": fmt.Sprint("Reply ", i)}})
				},
				func() *servertest.Response {
					return e.alice.Do("PUT", base+"/"+id, map[string]any{"addedReactions": []string{fmt.Sprint("e", i)}})
				})
		}
		reqs = append(reqs, func() *servertest.Response { return e.alice.Do("DELETE", base+"/"+id, nil) })
		responses := atOnce(reqs...)
		wantClean(t, responses[:2*n], http.StatusOK, http.StatusNotFound)
		wantClean(t, responses[2*n:], http.StatusNoContent)
		e.alice.Do("GET", base+"/"+id, nil).Expect(http.StatusNotFound)
	}
	var left int
	err := e.env.DB.QueryRowContext(context.Background(), `SELECT
		(SELECT count(*) FROM comment_replies) + (SELECT count(*) FROM comment_reactions)`).Scan(&left)
	if err != nil || left != 0 {
		t.Errorf("%d replies and reactions of deleted comments are left (%v)", left, err)
	}
}

// A space given to another organization while a site of its own
// organization starts publishing it ends up in one of the two states a
// single request allows: published and still at home (the transfer refused
// with a 412), or transferred and published by no site of its old
// organization (the site refused it with a 400).
func TestConcurrentTransferAndPublish(t *testing.T) {
	t.Parallel()
	_, c := newContentEnv(t)
	other := c.alice.NewOrg("Other")
	site := c.alice.Do("POST", "/v1/orgs/"+c.org+"/sites", map[string]any{"title": "Docs"}).Expect(http.StatusCreated).String("id")
	siteSpaces := "/v1/orgs/" + c.org + "/sites/" + site + "/site-spaces"
	const n = 8
	spaces := make([]string, n)
	var reqs []func() *servertest.Response
	for i := range spaces {
		spaces[i] = c.space(fmt.Sprint("S", i), "")
		reqs = append(reqs,
			func() *servertest.Response {
				return c.alice.Do("POST", "/v1/spaces/"+spaces[i]+"/transfer", map[string]any{"organization": other})
			},
			func() *servertest.Response {
				return c.alice.Do("POST", siteSpaces, map[string]any{"spaceId": spaces[i]})
			})
	}
	responses := atOnce(reqs...)
	wantClean(t, responses, http.StatusOK, http.StatusCreated, http.StatusBadRequest, http.StatusPreconditionFailed)

	var published struct {
		Items []struct{ Space struct{ ID string } }
	}
	c.alice.Do("GET", siteSpaces+"?limit=100", nil).Expect(http.StatusOK).Decode(&published)
	for _, ss := range published.Items {
		if org := c.alice.Do("GET", "/v1/spaces/"+ss.Space.ID, nil).Expect(http.StatusOK).String("organization"); org != c.org {
			t.Errorf("a site of %s publishes space %s of %s", c.org, ss.Space.ID, org)
		}
	}
}

// Content written to a space while it is transferred belongs, with the
// space, to the organization the space ends up in: every acknowledged
// comment and edit is read back there, and every row of the space's
// content carries that organization.
func TestConcurrentTransferAndWrites(t *testing.T) {
	t.Parallel()
	e := newCREnv(t)
	other := e.alice.NewOrg("Other")
	const n = 6
	reqs := []func() *servertest.Response{func() *servertest.Response {
		return e.alice.Do("POST", e.spaceBase+"/transfer", map[string]any{"organization": other})
	}}
	for i := range n {
		reqs = append(reqs,
			func() *servertest.Response {
				return e.alice.Do("POST", e.spaceBase+"/comments", map[string]any{"body": map[string]any{"markdown": fmt.Sprint("Comment ", i)}})
			},
			func() *servertest.Response {
				return e.alice.Do("POST", e.crBase, map[string]any{"subject": fmt.Sprint("CR ", i)})
			},
			func() *servertest.Response {
				return e.alice.Do("POST", "/graphql", map[string]any{"query": `mutation($s: ID!, $p: ID!, $in: UpdatePageInput!) {
					updatePage(spaceId: $s, pageId: $p, input: $in) { id } }`,
					"variables": map[string]any{"s": e.space, "p": e.pageA, "in": map[string]any{"markdown": fmt.Sprint("edit ", i)}}})
			})
	}
	responses := atOnce(reqs...)
	wantClean(t, responses, http.StatusOK, http.StatusCreated)
	comments, crs := 0, 0
	for _, res := range responses[1:] {
		switch {
		case res.Status == http.StatusCreated:
			crs++
		case res.JSON()["object"] == "comment":
			comments++
		case res.JSON()["errors"] != nil:
			t.Errorf("an edit failed: %s", res.Body)
		}
	}
	if got := e.alice.Do("GET", e.spaceBase, nil).Expect(http.StatusOK).String("organization"); got != other {
		t.Fatalf("the space is in %s", got)
	}
	if got := e.alice.Do("GET", e.spaceBase+"/comments?limit=100", nil).Expect(http.StatusOK).JSON()["count"]; got != float64(comments) {
		t.Errorf("%v comments listed, %d posted", got, comments)
	}
	if got := e.alice.Do("GET", e.crBase+"?limit=100", nil).Expect(http.StatusOK).JSON()["count"]; got != float64(crs) {
		t.Errorf("%v change requests listed, %d opened", got, crs)
	}
	if got := e.body("", e.pageA); !strings.HasPrefix(got, "edit ") {
		t.Errorf("page A after the edits: %q", got)
	}
	var drift int
	err := e.env.DB.QueryRowContext(context.Background(), `SELECT
		(SELECT count(*) FROM comments WHERE organization_id <> ?) +
		(SELECT count(*) FROM change_requests WHERE organization_id <> ?) +
		(SELECT count(*) FROM revisions WHERE space_id = ? AND organization_id <> ?) +
		(SELECT count(*) FROM revision_pages rp JOIN revisions r ON r.id = rp.revision_id AND r.organization_id = rp.organization_id WHERE r.space_id = ? AND rp.organization_id <> ?)`,
		other, other, e.space, other, e.space, other).Scan(&drift)
	if err != nil || drift != 0 {
		t.Errorf("%d rows of the space's content are left in its old organization (%v)", drift, err)
	}
}

// Members added to a team, and roles granted to it, while the team is
// deleted are added before it goes (and go with it) or refused with a 404.
func TestConcurrentWritesToADeletedTeam(t *testing.T) {
	t.Parallel()
	env := servertest.New(t)
	alice := env.NewUser("Alice")
	org := alice.NewOrg("Acme")
	const n = 6
	users := newReaders(env, org, n)
	space := alice.Do("POST", "/v1/orgs/"+org+"/spaces", `{"title":"Docs"}`).Expect(http.StatusCreated).String("id")
	for round := range 3 {
		team := alice.Do("PUT", "/v1/orgs/"+org+"/teams", map[string]any{"title": fmt.Sprint("Team ", round)}).Expect(http.StatusCreated).String("id")
		teamPath := "/v1/orgs/" + org + "/teams/" + team
		var reqs []func() *servertest.Response
		for i := range n {
			reqs = append(reqs,
				func() *servertest.Response { return alice.Do("PUT", teamPath+"/members/"+users[i].ID, `{}`) },
				func() *servertest.Response {
					return alice.Do("POST", "/v1/spaces/"+space+"/permissions", map[string]any{"role": "edit", "teams": []string{team}})
				})
		}
		reqs = append(reqs, func() *servertest.Response { return alice.Do("DELETE", teamPath, nil) })
		responses := atOnce(reqs...)
		wantClean(t, responses[:2*n], http.StatusNoContent, http.StatusNotFound, http.StatusBadRequest)
		wantClean(t, responses[2*n:], http.StatusResetContent)
		alice.Do("GET", teamPath, nil).Expect(http.StatusNotFound)
	}
	if got := alice.Do("GET", "/v1/spaces/"+space+"/permissions/teams", nil).Expect(http.StatusOK).JSON()["count"]; got != 0.0 {
		t.Errorf("%v teams still hold a role on the space", got)
	}
}

// Replies posted to a comment while its space is transferred carry the
// space's new organization, as the comment does: none is left behind in the
// old one (the transfer moved replies before their comments, and a reply
// reads its organization from its comment).
func TestConcurrentTransferAndReplies(t *testing.T) {
	t.Parallel()
	e := newCREnv(t)
	other := e.alice.NewOrg("Other")
	comment := e.alice.Do("POST", e.spaceBase+"/comments", map[string]any{"body": map[string]any{"markdown": "Thoughts?"}}).
		Expect(http.StatusOK).String("id")
	replies := e.spaceBase + "/comments/" + comment + "/replies"
	const n = 12
	reqs := []func() *servertest.Response{func() *servertest.Response {
		return e.alice.Do("POST", e.spaceBase+"/transfer", map[string]any{"organization": other})
	}}
	for i := range n {
		reqs = append(reqs, func() *servertest.Response {
			return e.alice.Do("POST", replies, map[string]any{"body": map[string]any{"markdown": fmt.Sprint("Reply ", i)}})
		})
	}
	responses := atOnce(reqs...)
	wantClean(t, responses, http.StatusOK)
	posted := 0
	for _, res := range responses[1:] {
		if res.Status == http.StatusOK {
			posted++
		}
	}
	if got := e.alice.Do("GET", replies+"?limit=100", nil).Expect(http.StatusOK).JSON()["count"]; got != float64(posted) {
		t.Errorf("%v replies listed, %d posted", got, posted)
	}
	var left int
	err := e.env.DB.QueryRowContext(context.Background(),
		`SELECT count(*) FROM comment_replies WHERE comment_id = ? AND organization_id <> ?`, comment, other).Scan(&left)
	if err != nil || left != 0 {
		t.Errorf("%d replies are left in the space's old organization (%v)", left, err)
	}
}
