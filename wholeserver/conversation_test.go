package wholeserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docsapi/docsapi/cmd/docsapi/server/servertest"
	"github.com/docsapi/docsapi/graph/jobs"
	"github.com/docsapi/docsapi/graph/translator"
	"github.com/docsapi/docsapi/store"
)

// conversation is an ingest body: one user message (and an assistant's
// answer, which is never an issue), dated at when.
func conversation(id, subject, userMessage string, when time.Time) map[string]any {
	return map[string]any{
		"id": id, "subject": subject,
		"metadata": map[string]any{"url": "https://support.example.com/c/" + id, "attributes": map[string]any{"plan": "pro"},
			"createdAt": when.Format(time.RFC3339)},
		"parts": []any{
			map[string]any{"type": "message", "role": "user", "body": userMessage},
			map[string]any{"type": "message", "role": "assistant", "body": "Sorry about the error, does it still fail?"},
		},
	}
}

// ingestedConversation ingests a conversation into org and processes it in
// the test (no job runner): its id, its issue and the issue's cluster.
func ingestedConversation(t *testing.T, env *servertest.Env, u *servertest.User, org string) (conv, issue, cluster string) {
	t.Helper()
	u.Do("POST", "/v1/orgs/"+org+"/conversations", conversation("conv-1", "Login", "I cannot log in: my password is rejected.", env.Clock.Now())).
		Expect(http.StatusNoContent)
	if err := env.Server.Resolver.ProcessConversations(context.Background(), org); err != nil {
		t.Fatal(err)
	}
	items := u.Do("GET", "/v1/orgs/"+org+"/conversations-issues", nil).Expect(http.StatusOK).JSON()["items"].([]any)
	if len(items) != 1 {
		t.Fatalf("fixture issues: %v", items)
	}
	is := items[0].(map[string]any)["issue"].(map[string]any)
	return "conv-1", is["id"].(string), is["cluster"].(string)
}

// sameTime reports whether a response's timestamp is the instant want.
func sameTime(got any, want time.Time) bool {
	s, _ := got.(string)
	parsed, err := time.Parse(time.RFC3339, s)
	return err == nil && parsed.Equal(want)
}

// list GETs a list as u and returns its items.
func list(t *testing.T, u *servertest.User, path string) []map[string]any {
	t.Helper()
	return listItems(t, u.Do("GET", path, nil))
}

// memberValues is, for each item, the member that keys names (a path into
// nested objects).
func memberValues(items []map[string]any, keys ...string) []string {
	var out []string
	for _, it := range items {
		for _, k := range keys[:len(keys)-1] {
			it = it[k].(map[string]any)
		}
		out = append(out, fmt.Sprint(it[keys[len(keys)-1]]))
	}
	return out
}

func TestConversationIngest(t *testing.T) {
	t.Parallel()
	env := servertest.New(t)
	alice, reader, eve := env.NewUser("Alice"), env.NewUser("Reader"), env.NewUser("Eve")
	org := alice.NewOrg("Acme")
	eve.NewOrg("Eve Corp")
	reader.Join(org, store.RoleRead)
	base := "/v1/orgs/" + org + "/conversations"
	day := 24 * time.Hour
	now := env.Clock.Now()

	// One conversation, then an array of two.
	alice.Do("POST", base, conversation("c1", "Login", "I can't log in.", now.Add(-3*day))).Expect(http.StatusNoContent)
	second := conversation("c2", "Export", "The PDF export fails.", now.Add(-2*day))
	second["source"] = "integration:intercom:inst1"
	alice.Do("POST", base, []any{second, conversation("c3", "Search", "Search finds nothing?", now.Add(-day))}).Expect(http.StatusNoContent)
	if got := memberValues(list(t, reader, base), "id"); strings.Join(got, ",") != "c3,c2,c1" {
		t.Fatalf("list: %v, want newest first", got)
	}
	detail := reader.Do("GET", base+"/c2", nil).Expect(http.StatusOK).JSON()
	c := detail["conversation"].(map[string]any)
	if c["object"] != "conversation" || c["subject"] != "Export" || c["source"] != "integration:intercom:inst1" || c["processedAt"] != nil ||
		!sameTime(c["createdAt"], now.Add(-2*day)) || c["urls"].(map[string]any)["source"] != "https://support.example.com/c/c2" ||
		!strings.HasSuffix(c["urls"].(map[string]any)["location"].(string), base+"/c2") {
		t.Errorf("conversation: %v", c)
	}
	parts := detail["parts"].([]any)
	if len(parts) != 2 || parts[0].(map[string]any)["body"] != "The PDF export fails." || parts[1].(map[string]any)["role"] != "assistant" {
		t.Errorf("parts: %v", parts)
	}
	if md := detail["metadata"].(map[string]any); md["attributes"].(map[string]any)["plan"] != "pro" || md["url"] != "https://support.example.com/c/c2" {
		t.Errorf("metadata: %v", md)
	}

	// Re-ingesting an id replaces that conversation: no duplicate.
	again := conversation("c1", "Login again", "Still locked out.", now.Add(-3*day))
	again["parts"] = []any{map[string]any{"type": "message", "role": "user", "body": "Still locked out."}}
	alice.Do("POST", base, again).Expect(http.StatusNoContent)
	if got := list(t, reader, base); len(got) != 3 {
		t.Fatalf("after re-ingesting: %d conversations", len(got))
	}
	detail = reader.Do("GET", base+"/c1", nil).Expect(http.StatusOK).JSON()
	if detail["conversation"].(map[string]any)["subject"] != "Login again" || len(detail["parts"].([]any)) != 1 {
		t.Errorf("re-ingested: %v", detail)
	}

	// Re-ingested without a date, a conversation keeps the one it had.
	alice.Do("POST", base, `{"id":"c3","subject":"Search","parts":[{"type":"message","role":"user","body":"Search finds nothing?"}]}`).
		Expect(http.StatusNoContent)
	if c := reader.Do("GET", base+"/c3", nil).Expect(http.StatusOK).JSON()["conversation"].(map[string]any); !sameTime(c["createdAt"], now.Add(-day)) {
		t.Errorf("re-ingested without a date: %v", c)
	}

	// Filters and paging.
	if got := memberValues(list(t, reader, base+"?source=email"), "id"); strings.Join(got, ",") != "c3,c1" {
		t.Errorf("source=email: %v", got)
	}
	if got := memberValues(list(t, reader, base+"?source=integration:intercom:inst1"), "id"); strings.Join(got, ",") != "c2" {
		t.Errorf("source=integration: %v", got)
	}
	page := reader.Do("GET", base+"?limit=2", nil).Expect(http.StatusOK).JSON()
	next := page["next"].(map[string]any)["page"].(string)
	if got := memberValues(list(t, reader, base+"?limit=2&page="+next), "id"); strings.Join(got, ",") != "c1" {
		t.Errorf("second page: %v", got)
	}

	// Bad input: 400, and nothing stored (not even the valid conversations
	// before the bad one in an array).
	good := `{"id":"new","parts":[{"type":"message","role":"user","body":"Hi"}]}`
	for name, body := range map[string]string{
		"not JSON":          `{"id":`,
		"not an object":     `"c9"`,
		"empty array":       `[]`,
		"no id":             `{"parts":[]}`,
		"empty id":          `{"id":"","parts":[]}`,
		"long id":           `{"id":"` + strings.Repeat("x", 256) + `","parts":[]}`,
		"no parts":          `{"id":"new"}`,
		"unknown field":     `{"id":"new","parts":[],"colour":"red"}`,
		"part type":         `{"id":"new","parts":[{"type":"note","role":"user","body":"x"}]}`,
		"part role":         `{"id":"new","parts":[{"type":"message","role":"bot","body":"x"}]}`,
		"attribute":         `{"id":"new","parts":[],"metadata":{"attributes":{"n":1}}}`,
		"date":              `{"id":"new","parts":[],"metadata":{"createdAt":"yesterday"}}`,
		"source":            `{"id":"new","parts":[],"source":"slack"}`,
		"long subject":      `{"id":"new","parts":[],"subject":"` + strings.Repeat("s", 513) + `"}`,
		"duplicate ids":     `[` + good + `,` + good + `]`,
		"one bad in a list": `[` + good + `,{"id":"bad","parts":[{"type":"message","role":"bot","body":"x"}]}]`,
	} {
		res := alice.Do("POST", base, body)
		if res.Status != http.StatusBadRequest {
			t.Errorf("%s: %d, want 400: %s", name, res.Status, res.Body)
			continue
		}
		res.ErrorMessage()
	}
	if got := list(t, reader, base); len(got) != 3 {
		t.Errorf("bad input stored something: %v", memberValues(got, "id"))
	}
	reader.Do("GET", base+"/new", nil).Expect(http.StatusNotFound)

	// Readers read but cannot ingest; other tenants see nothing.
	reader.Do("POST", base, good).Expect(http.StatusForbidden)
	eve.Do("POST", base, good).Expect(http.StatusNotFound)
	eve.Do("GET", base, nil).Expect(http.StatusNotFound)
	eve.Do("GET", base+"/c1", nil).Expect(http.StatusNotFound)
	reader.Do("GET", base+"/nope", nil).Expect(http.StatusNotFound)
	reader.Do("GET", "/v1/orgs/"+org+"/conversations-issues/nope", nil).Expect(http.StatusNotFound)
	reader.Do("GET", "/v1/orgs/"+org+"/conversations-clusters/nope", nil).Expect(http.StatusNotFound)
}

// waitIssues polls the issues of org until n of them are clustered.
func waitIssues(t *testing.T, u *servertest.User, org string, n int) []map[string]any {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		items := list(t, u, "/v1/orgs/"+org+"/conversations-issues")
		clustered := 0
		for _, it := range items {
			if it["issue"].(map[string]any)["cluster"] != nil && it["conversation"].(map[string]any)["processedAt"] != nil {
				clustered++
			}
		}
		if clustered == n && len(items) == n {
			return items
		}
		if time.Now().After(deadline) {
			t.Fatalf("issues not processed: %v", items)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestConversationInsights(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Options{Jobs: true})
	alice, reader, eve := env.NewUser("Alice"), env.NewUser("Reader"), env.NewUser("Eve")
	org := alice.NewOrg("Acme")
	eve.NewOrg("Eve Corp")
	reader.Join(org, store.RoleRead)
	o := "/v1/orgs/" + org
	day := 24 * time.Hour
	now := env.Clock.Now()

	alice.Do("POST", o+"/conversations", []any{
		conversation("login-1", "Login", "Hello! I cannot log in, the login page says my password is wrong. Great docs otherwise.", now.Add(-day)),
		conversation("login-2", "Sign in", "Login fails: my password is rejected although it is right.", now.Add(-8*day)),
		conversation("export-1", "PDF", "Exporting my space to PDF produces an empty file.", now.Add(-100*day)),
	}).Expect(http.StatusNoContent)

	items := waitIssues(t, reader, org, 3)
	byConv := map[string]map[string]any{}
	for _, it := range items {
		byConv[it["conversation"].(map[string]any)["id"].(string)] = it["issue"].(map[string]any)
	}
	login1, login2, export := byConv["login-1"], byConv["login-2"], byConv["export-1"]
	if login1["object"] != "conversation-issue" || login1["title"] != "I cannot log in, the login page says my password is wrong." ||
		!sameTime(login1["createdAt"], now.Add(-day)) || login1["ingestedAt"] == nil {
		t.Errorf("issue: %v", login1)
	}
	if login1["cluster"] != login2["cluster"] || login1["cluster"] == export["cluster"] {
		t.Fatalf("clusters: login %v and %v, export %v", login1["cluster"], login2["cluster"], export["cluster"])
	}
	loginCluster, exportCluster := login1["cluster"].(string), export["cluster"].(string)

	// The issue and its conversation; the built-in extractor found it.
	got := reader.Do("GET", o+"/conversations-issues/"+login2["id"].(string), nil).Expect(http.StatusOK).JSON()
	if got["issue"].(map[string]any)["summary"] != "Login fails: my password is rejected although it is right." ||
		got["conversation"].(map[string]any)["id"] != "login-2" {
		t.Errorf("issue by id: %v", got)
	}
	gql := reader.GraphQL(`query($o: ID!, $i: ID!) { organization(id: $o) { conversationIssue(id: $i) { issue { extractor } } } }`,
		map[string]any{"o": org, "i": login2["id"]})
	if len(gql.Errors) > 0 || !strings.Contains(string(gql.Data), `"extractor":"builtin"`) {
		t.Errorf("extractor: %s %v", gql.Data, gql.Errors)
	}

	// The login cluster: 2 issues from 2 conversations, one a day ago (the
	// last week) and one 8 days ago (the week before).
	cluster := reader.Do("GET", o+"/conversations-clusters/"+loginCluster, nil).Expect(http.StatusOK).JSON()
	stats := cluster["stats"].(map[string]any)
	if cluster["object"] != "issues-cluster" || cluster["label"] == "" || !strings.Contains(cluster["summary"].(string), "2 issues in 2 conversations") ||
		stats["issues"] != 2.0 || stats["conversations"] != 2.0 || stats["tasksTotal"] != 0.0 ||
		cluster["sources"].(map[string]any)["email"] != 2.0 {
		t.Errorf("cluster: %v", cluster)
	}
	pulse := func(id string) string {
		c := reader.Do("GET", o+"/conversations-clusters/"+id, nil).Expect(http.StatusOK).JSON()
		return fmt.Sprint(c["weeklyPulse"])
	}
	if p := pulse(loginCluster); p != "[0 0 0 0 0 0 0 0 0 0 0 1 1]" {
		t.Errorf("weeklyPulse: %s", p)
	}
	if p := pulse(exportCluster); p != "[0 0 0 0 0 0 0 0 0 0 0 0 0]" { // 100 days ago: before the 13 weeks
		t.Errorf("weeklyPulse of an old issue: %s", p)
	}
	env.Clock.Advance(7 * day)
	if p := pulse(loginCluster); p != "[0 0 0 0 0 0 0 0 0 0 1 1 0]" {
		t.Errorf("weeklyPulse a week later: %s", p)
	}

	// Filters and order.
	if got := memberValues(list(t, reader, o+"/conversations-issues?cluster="+loginCluster), "conversation", "id"); strings.Join(got, ",") != "login-1,login-2" {
		t.Errorf("issues of the login cluster: %v", got)
	}
	if got := memberValues(list(t, reader, o+"/conversations-issues?conversation=export-1"), "issue", "cluster"); strings.Join(got, ",") != exportCluster {
		t.Errorf("issues of export-1: %v", got)
	}
	for query, want := range map[string]string{
		"":                           loginCluster + "," + exportCluster, // both made by one run: same updatedAt, then id
		"?orderBy=issues":            loginCluster + "," + exportCluster,
		"?orderBy=issues&order=asc":  exportCluster + "," + loginCluster,
		"?orderBy=conversations":     loginCluster + "," + exportCluster,
		"?status=pending&order=desc": "",
		"?status=analysing":          "",
	} {
		got := strings.Join(memberValues(list(t, reader, o+"/conversations-clusters"+query), "id"), ",")
		switch query {
		case "":
			if len(got) != len(want) {
				t.Errorf("clusters: %s", got)
			}
		case "?status=pending&order=desc":
			if !strings.Contains(got, loginCluster) || !strings.Contains(got, exportCluster) {
				t.Errorf("pending clusters: %s", got)
			}
		default:
			if got != want {
				t.Errorf("clusters%s: %s, want %s", query, got, want)
			}
		}
	}
	page := reader.Do("GET", o+"/conversations-clusters?orderBy=issues&limit=1", nil).Expect(http.StatusOK).JSON()
	if got := memberValues(list(t, reader, o+"/conversations-clusters?orderBy=issues&limit=1&page="+page["next"].(map[string]any)["page"].(string)), "id"); strings.Join(got, ",") != exportCluster {
		t.Errorf("second page by issues: %v", got)
	}
	reader.Do("GET", o+"/conversations-clusters?orderBy=size", nil).Expect(http.StatusBadRequest)

	// Change requests made for a cluster are its tasks, and filter by it.
	space := alice.Do("POST", o+"/spaces", `{"title":"Docs"}`).Expect(http.StatusCreated).String("id")
	cr := alice.Do("POST", "/v1/spaces/"+space+"/change-requests", map[string]any{"subject": "Explain password resets",
		"conversationsIssuesCluster": loginCluster}).Expect(http.StatusCreated).JSON()
	if cr["conversationsIssuesCluster"] != loginCluster {
		t.Errorf("change request: %v", cr)
	}
	alice.Do("POST", "/v1/spaces/"+space+"/change-requests", `{"subject":"Unrelated"}`).Expect(http.StatusCreated)
	alice.Do("POST", "/v1/spaces/"+space+"/change-requests", map[string]any{"subject": "x", "conversationsIssuesCluster": "nope"}).
		Expect(http.StatusBadRequest)
	for path, want := range map[string]string{
		"/v1/spaces/" + space + "/change-requests?conversationsIssuesCluster=" + loginCluster:  cr["id"].(string),
		o + "/change-requests?conversationsIssuesCluster=" + loginCluster:                      cr["id"].(string),
		"/v1/spaces/" + space + "/change-requests?conversationsIssuesCluster=" + exportCluster: "",
	} {
		if got := strings.Join(memberValues(list(t, reader, path), "id"), ","); got != want {
			t.Errorf("%s: %s, want %s", path, got, want)
		}
	}
	stats = reader.Do("GET", o+"/conversations-clusters/"+loginCluster, nil).Expect(http.StatusOK).JSON()["stats"].(map[string]any)
	if stats["tasksTotal"] != 1.0 || stats["tasksStarted"] != 1.0 || stats["tasksBacklog"] != 0.0 {
		t.Errorf("tasks: %v", stats)
	}
	if got := memberValues(list(t, reader, o+"/conversations-clusters?orderBy=tasksTotal"), "id"); got[0] != loginCluster {
		t.Errorf("by tasks: %v", got)
	}

	// Re-ingesting export-1 about logging in moves its issue to the login
	// cluster; the export cluster, left empty, goes.
	alice.Do("POST", o+"/conversations", conversation("export-1", "Login", "My password is rejected at login.", now.Add(-100*day))).
		Expect(http.StatusNoContent)
	deadline := time.Now().Add(30 * time.Second)
	for {
		items := list(t, reader, o+"/conversations-issues?conversation=export-1")
		if len(items) == 1 && items[0]["issue"].(map[string]any)["cluster"] == loginCluster {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("re-ingested conversation not processed: %v", items)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got := memberValues(list(t, reader, o+"/conversations-clusters"), "id"); strings.Join(got, ",") != loginCluster {
		t.Errorf("clusters after re-ingesting: %v", got)
	}
	reader.Do("GET", o+"/conversations-clusters/"+exportCluster, nil).Expect(http.StatusNotFound)
	if n := len(list(t, reader, o+"/conversations-issues")); n != 3 {
		t.Errorf("issues after re-ingesting: %d", n)
	}

	// Another tenant sees none of it.
	for _, path := range []string{"/conversations-issues", "/conversations-issues/" + login1["id"].(string),
		"/conversations-clusters", "/conversations-clusters/" + loginCluster} {
		eve.Do("GET", o+path, nil).Expect(http.StatusNotFound)
	}
	eve.Do("GET", "/v1/spaces/"+space+"/change-requests?conversationsIssuesCluster="+loginCluster, nil).Expect(http.StatusNotFound)
}

// fixtureProblems are five distinct problems, each phrased in many ways, as
// customers would write them.
var fixtureProblems = map[string][]string{
	"login": {
		"I can't log in, my password is rejected.",
		"Login fails even after resetting my password.",
		"The sign in page says my password is wrong.",
		"Why does the login reject my password?",
		"I reset my password but still cannot sign in.",
		"My password stopped working at login this morning.",
		"Login keeps telling me the password is invalid.",
		"I am locked out: the password reset link does not let me log in.",
	},
	"export": {
		"Exporting my space to PDF fails.",
		"The PDF export is broken.",
		"PDF export produces an empty file.",
		"Why is the exported PDF missing half of my pages?",
		"Export to PDF times out on big spaces.",
		"I cannot export the documentation as a PDF.",
		"The PDF I exported has broken images.",
		"PDF export of a page crashes.",
	},
	"search": {
		"Search returns no results for pages that exist.",
		"The search bar does not find my pages.",
		"Why does search miss words in page titles?",
		"Search results are outdated after I edit a page.",
		"Search finds nothing when I type a page title.",
		"The search index seems stale: new pages are missing from search results.",
		"Searching for an exact phrase returns unrelated results.",
		"Search is not finding pages in my collection.",
	},
	"billing": {
		"I was charged twice on my last invoice.",
		"The invoice shows the wrong billing amount.",
		"Why was my card charged twice this month?",
		"My billing invoice wrongly lists seats we removed.",
		"The invoice amount is wrong after I downgraded the plan.",
		"I need a corrected invoice: the billing address is wrong.",
		"We were charged for the annual plan twice.",
		"How do I get a refund for a duplicate charge on my invoice?",
	},
	"domain": {
		"My custom domain shows a certificate error.",
		"The SSL certificate for my custom domain is not issued.",
		"Why does the custom domain say the connection is not secure?",
		"The custom domain does not resolve to my docs site.",
		"Certificate error on our custom domain since yesterday.",
		"Setting up a custom domain fails at the DNS verification step.",
		"Our docs on the custom domain show an invalid certificate.",
		"The custom domain is stuck pending and the certificate never arrives.",
	},
}

// About 200 conversations on five problems yield five (±1) clusters, each
// holding the issues of one problem only; weeklyPulse counts every issue of
// the last 13 weeks.
func TestConversationClustersOfAFixture(t *testing.T) {
	t.Parallel()
	env := servertest.New(t)
	alice := env.NewUser("Alice")
	org := alice.NewOrg("Acme")
	now := env.Clock.Now()
	greetings := []string{"Hi team.", "Hello!", "Good morning.", "", "Hey there, quick note.", "Thanks for the great product."}
	endings := []string{"Can you help?", "Thanks in advance.", "", "Please advise.", "This is urgent for us.", "Regards, Sam."}
	problems := []string{"billing", "domain", "export", "login", "search"}
	var batch []any
	problemOf := map[string]string{}
	inWindow := map[string]int{}
	for i := range 200 {
		p := problems[i%len(problems)]
		phrasings := fixtureProblems[p]
		body := strings.TrimSpace(greetings[i%len(greetings)] + " " + phrasings[(i/len(problems))%len(phrasings)] + " " + endings[(i/3)%len(endings)])
		id := fmt.Sprintf("c%03d", i)
		age := time.Duration(i%120) * 24 * time.Hour // spread over 120 days: some before the 13 weeks
		if age < 91*24*time.Hour {
			inWindow[p]++
		}
		batch = append(batch, conversation(id, p, body, now.Add(-age-time.Hour)))
		problemOf[id] = p
	}
	alice.Do("POST", "/v1/orgs/"+org+"/conversations", batch).Expect(http.StatusNoContent)
	if err := env.Server.Resolver.ProcessConversations(context.Background(), org); err != nil {
		t.Fatal(err)
	}

	clusters := list(t, alice, "/v1/orgs/"+org+"/conversations-clusters?orderBy=issues&limit=100")
	if len(clusters) < 4 || len(clusters) > 6 {
		t.Errorf("%d clusters, want 5 (±1): %v", len(clusters), memberValues(clusters, "label"))
	}
	seen := map[string]string{} // problem → its largest cluster
	total := 0
	for _, c := range clusters {
		issues := list(t, alice, "/v1/orgs/"+org+"/conversations-issues?limit=1000&cluster="+c["id"].(string))
		count := map[string]int{}
		for _, it := range issues {
			count[problemOf[it["conversation"].(map[string]any)["id"].(string)]]++
		}
		if len(count) != 1 {
			t.Errorf("cluster %q mixes problems: %v", c["label"], count)
			continue
		}
		for p, n := range count {
			total += n
			if seen[p] != "" {
				t.Errorf("problem %s split between %q and %q", p, seen[p], c["label"])
			}
			seen[p] = c["label"].(string)
			sum := 0
			for _, w := range c["weeklyPulse"].([]any) {
				sum += int(w.(float64))
			}
			if len(c["weeklyPulse"].([]any)) != 13 || (len(clusters) == 5 && sum != inWindow[p]) {
				t.Errorf("cluster %q: weeklyPulse %v, want 13 weeks summing to %d", c["label"], c["weeklyPulse"], inWindow[p])
			}
			if c["stats"].(map[string]any)["issues"] != float64(n) {
				t.Errorf("cluster %q: stats %v for %d issues", c["label"], c["stats"], n)
			}
		}
	}
	if total != 200 {
		t.Errorf("%d issues clustered, want one per conversation (200)", total)
	}
}

// With a provider configured, the model extracts the issues and the issue
// says so; a provider that fails leaves the conversation unprocessed, with
// no issue, for the job to try again.
func TestConversationIssuesFromAProvider(t *testing.T) {
	t.Parallel()
	var broken atomic.Bool
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if broken.Load() {
			http.Error(w, "overloaded", http.StatusServiceUnavailable)
			return
		}
		content := `{"issues": [{"title": "Password rejected at login", "summary": "The user's password is refused."}]}`
		_ = json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"message": map[string]any{"content": content}}}})
	}))
	defer api.Close()
	env := servertest.New(t, servertest.Options{Translator: &translator.OpenAI{URL: api.URL + "/v1", Model: "insights-model"}})
	alice := env.NewUser("Alice")
	org := alice.NewOrg("Acme")
	o := "/v1/orgs/" + org

	alice.Do("POST", o+"/conversations", conversation("c1", "Login", "Nothing works, I am so sad", env.Clock.Now())).Expect(http.StatusNoContent)
	if err := env.Server.Resolver.ProcessConversations(context.Background(), org); err != nil {
		t.Fatal(err)
	}
	items := list(t, alice, o+"/conversations-issues")
	if len(items) != 1 || items[0]["issue"].(map[string]any)["title"] != "Password rejected at login" {
		t.Fatalf("issues: %v", items)
	}
	gql := alice.GraphQL(`query($o: ID!) { organization(id: $o) { conversationIssues { items { issue { extractor } } } } }`, map[string]any{"o": org})
	if len(gql.Errors) > 0 || !strings.Contains(string(gql.Data), `"extractor":"insights-model at `) {
		t.Errorf("extractor: %s %v", gql.Data, gql.Errors)
	}

	broken.Store(true)
	alice.Do("POST", o+"/conversations", conversation("c2", "Export", "The PDF export fails.", env.Clock.Now())).Expect(http.StatusNoContent)
	if err := env.Server.Resolver.ProcessConversations(context.Background(), org); err == nil || !strings.Contains(err.Error(), "answered 503") {
		t.Fatalf("a failing provider: %v", err)
	}
	if c := alice.Do("GET", o+"/conversations/c2", nil).Expect(http.StatusOK).JSON()["conversation"].(map[string]any); c["processedAt"] != nil {
		t.Errorf("processed despite the failure: %v", c)
	}
	if n := len(list(t, alice, o+"/conversations-issues")); n != 1 {
		t.Errorf("%d issues after a failed extraction", n)
	}
}

// The sweep enqueues the organizations whose conversations were left due
// (their job's enqueue was lost, or it failed), and their job processes them.
func TestConversationSweep(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Options{Jobs: true})
	alice := env.NewUser("Alice")
	org := alice.NewOrg("Acme")
	ctx := context.Background()
	now := env.Clock.Now()
	lost := &store.Conversation{OrganizationID: org, ID: "lost", Source: "email", Attributes: map[string]string{},
		Parts:     []store.ConversationPart{{Type: "message", Role: "user", Body: "Why is my invoice wrong?"}},
		CreatedAt: now.Add(-time.Hour), IngestedAt: now.Add(-time.Hour), UpdatedAt: now.Add(-time.Hour)}
	if err := store.UpsertConversation(ctx, env.DB, lost, false); err != nil {
		t.Fatal(err)
	}
	if _, err := env.Jobs.Insert(ctx, jobs.SweepUnfinished{}, nil); err != nil {
		t.Fatal(err)
	}
	items := waitIssues(t, alice, org, 1)
	if got := items[0]["issue"].(map[string]any)["title"]; got != "Why is my invoice wrong?" {
		t.Errorf("issue: %v", items[0])
	}
}

// A cluster is analysing while a conversation of its issues changed and
// awaits extraction, pending (awaiting action) otherwise; an issue dated
// this very instant counts in the last week.
func TestConversationClusterStatus(t *testing.T) {
	t.Parallel()
	env := servertest.New(t)
	alice := env.NewUser("Alice")
	org := alice.NewOrg("Acme")
	o := "/v1/orgs/" + org
	_, _, cluster := ingestedConversation(t, env, alice, org)
	status := func(s string) string {
		return strings.Join(memberValues(list(t, alice, o+"/conversations-clusters?status="+s), "id"), ",")
	}
	if status("pending") != cluster || status("analysing") != "" {
		t.Fatalf("after processing: pending %q, analysing %q", status("pending"), status("analysing"))
	}
	c := alice.Do("GET", o+"/conversations-clusters/"+cluster, nil).Expect(http.StatusOK).JSON()
	if fmt.Sprint(c["weeklyPulse"]) != "[0 0 0 0 0 0 0 0 0 0 0 0 1]" {
		t.Errorf("weeklyPulse: %v", c["weeklyPulse"])
	}
	alice.Do("POST", o+"/conversations", conversation("conv-1", "Login", "My password is still rejected at login.", env.Clock.Now())).
		Expect(http.StatusNoContent)
	if status("pending") != "" || status("analysing") != cluster {
		t.Fatalf("after re-ingesting: pending %q, analysing %q", status("pending"), status("analysing"))
	}
	if err := env.Server.Resolver.ProcessConversations(context.Background(), org); err != nil {
		t.Fatal(err)
	}
	// Its only issue was extracted anew: the cluster it leaves empty goes,
	// a new one holds it.
	if got := status("pending"); got == "" || got == cluster || strings.Contains(got, ",") {
		t.Errorf("after processing again: pending %q", got)
	}
	alice.Do("GET", o+"/conversations-clusters/"+cluster, nil).Expect(http.StatusNotFound)
	alice.Do("GET", o+"/conversations-clusters?status=done", nil).Expect(http.StatusBadRequest)
}
