package wholeserver_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docsapi/docsapi/cmd/docsapi/server/servertest"
	"github.com/docsapi/docsapi/graph"
	"github.com/docsapi/docsapi/graph/jobs"
	"github.com/docsapi/docsapi/store"
)

// receiver is a loopback webhook receiver: answer decides each request's
// status (0: never answers until the test ends).
type receiver struct {
	*httptest.Server
	mu       sync.Mutex
	requests []receivedDelivery
}

type receivedDelivery struct {
	Body        []byte
	Signature   string
	EventID     string
	Traceparent string
}

func newReceiver(t *testing.T, answer func(n int) int) *receiver {
	t.Helper()
	rc := &receiver{}
	done := make(chan struct{})
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.requests = append(rc.requests, receivedDelivery{Body: body, Signature: r.Header.Get(graph.SignatureHeader),
			EventID: r.Header.Get("X-GitBook-Event-Id"), Traceparent: r.Header.Get("Traceparent")})
		n := len(rc.requests)
		rc.mu.Unlock()
		status := answer(n)
		if status == 0 {
			select {
			case <-done:
			case <-r.Context().Done():
			}
			return
		}
		w.WriteHeader(status)
	}))
	t.Cleanup(func() { close(done); rc.Close() })
	return rc
}

// received lists the deliveries of integration event id.
func (rc *receiver) received(id string) []receivedDelivery {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var out []receivedDelivery
	for _, d := range rc.requests {
		if d.EventID == id {
			out = append(out, d)
		}
	}
	return out
}

// verifySignature is the receiver's check of the recipe of docs/api-guide.md: the header is
// t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">.
func verifySignature(secret, header string, body []byte) bool {
	var ts, sig string
	for _, part := range strings.Split(header, ",") {
		k, v, _ := strings.Cut(part, "=")
		switch k {
		case "t":
			ts = v
		case "v1":
			sig = v
		}
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(ts + "."))
	mac.Write(body)
	want := hex.EncodeToString(mac.Sum(nil))
	return ts != "" && hmac.Equal([]byte(sig), []byte(want))
}

type deliveredEvent struct {
	Event struct {
		ID, Status, DeliveryStatus string
		Payload                    map[string]any
	}
	Trace struct {
		Logs []struct{ Message, Level string }
	}
}

// eventIDs lists the ids of the integration's events u sees, newest first.
func eventIDs(u *servertest.User, base string) []string {
	var list struct{ Items []struct{ ID string } }
	u.Do("GET", base+"/events?limit=1000", nil).Expect(http.StatusOK).Decode(&list)
	var ids []string
	for _, e := range list.Items {
		ids = append(ids, e.ID)
	}
	return ids
}

// awaitStatus reads the event until its delivery status is want, success
// or failed (or a deadline), and checks its reference status agrees.
func awaitStatus(t *testing.T, u *servertest.User, base, id, want string) deliveredEvent {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		var ev deliveredEvent
		u.Do("GET", base+"/events/"+id, nil).Expect(http.StatusOK).Decode(&ev)
		if ev.Event.DeliveryStatus == want {
			if ev.Event.Status != want {
				t.Fatalf("event %s: delivery %s, status %s", id, want, ev.Event.Status)
			}
			return ev
		}
		if time.Now().After(deadline) {
			t.Fatalf("event %s is %s, not %s: %+v", id, ev.Event.DeliveryStatus, want, ev.Trace.Logs)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// undelivered tells an event not delivered: pending, which the reference's
// status (success or failed) shows as success: it has not failed.
func undelivered(ev deliveredEvent) bool {
	return ev.Event.DeliveryStatus == "pending" && ev.Event.Status == "success"
}

// countLogs counts the trace's lines containing s.
func countLogs(ev deliveredEvent, s string) int {
	n := 0
	for _, l := range ev.Trace.Logs {
		if strings.Contains(l.Message, s) {
			n++
		}
	}
	return n
}

// signingSecret reads the integration's signing secret as its owner.
func signingSecret(t *testing.T, u *servertest.User, name string) string {
	t.Helper()
	res := u.GraphQL(`query($n: String!) { integration(name: $n) { development { url all signingSecret } } }`, map[string]any{"n": name})
	var data struct {
		Integration struct {
			Development *struct {
				URL           *string
				SigningSecret *string
			}
		}
	}
	if len(res.Errors) > 0 || json.Unmarshal(res.Data, &data) != nil || data.Integration.Development == nil || data.Integration.Development.SigningSecret == nil {
		t.Fatalf("development mode: %s %v", res.Data, res.Errors)
	}
	return *data.Integration.Development.SigningSecret
}

// A receiver that fails twice gets the third attempt: one success, signed
// with the integration's signing secret.
func TestDeliveryRetriesUntilSuccess(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Options{Jobs: true, DeliveryAttempts: 5})
	vendor := env.NewUser("Vendor")
	org := vendor.NewOrg("Vendor Inc")
	base := "/v1/integrations/hooked"
	vendor.Do("POST", base, publishBody(org, map[string]any{"secrets": map[string]string{"K": theSecret}})).Expect(http.StatusOK)
	rc := newReceiver(t, func(n int) int {
		if n <= 2 {
			return http.StatusInternalServerError
		}
		return http.StatusOK
	})
	vendor.Do("PUT", base+"/dev", map[string]any{"tunnelUrl": rc.URL + "/events"}).Expect(http.StatusNoContent)
	vendor.Do("POST", base+"/installations", map[string]any{"organization": org}).Expect(http.StatusCreated)
	ids := eventIDs(vendor, base)
	if len(ids) != 1 {
		t.Fatalf("events: %v", ids)
	}
	ev := awaitStatus(t, vendor, base, ids[0], "success")
	if n := countLogs(ev, "delivered"); n != 1 {
		t.Errorf("%d successes in the trace, want 1: %+v", n, ev.Trace.Logs)
	}
	if n := countLogs(ev, "answered 500"); n != 2 {
		t.Errorf("%d failed attempts in the trace, want 2: %+v", n, ev.Trace.Logs)
	}
	got := rc.received(ids[0])
	if len(got) != 3 {
		t.Fatalf("the receiver got %d requests, want 3", len(got))
	}
	var payload map[string]any
	if err := json.Unmarshal(got[2].Body, &payload); err != nil || payload["type"] != "installation_setup" || payload["status"] != "active" {
		t.Errorf("delivered payload: %s", got[2].Body)
	}
	// The secrets the publisher stored are never sent; the signature is
	// made with the signing secret the owner reads.
	if strings.Contains(string(got[2].Body), theSecret) {
		t.Error("a delivery carries the integration's secret")
	}
	secret := signingSecret(t, vendor, "hooked")
	if secret == theSecret || !verifySignature(secret, got[2].Signature, got[2].Body) {
		t.Errorf("the signature %q does not verify with the signing secret", got[2].Signature)
	}
	if verifySignature("whsec_wrong", got[2].Signature, got[2].Body) || verifySignature(theSecret, got[2].Signature, got[2].Body) {
		t.Error("the signature verifies with a wrong secret")
	}
	if verifySignature(secret, got[2].Signature, append(got[2].Body, ' ')) {
		t.Error("the signature verifies a changed body")
	}
	// The event stays delivered once: nothing more arrives when the sweep's
	// work is done again.
	if n := len(rc.received(ids[0])); n != 3 {
		t.Errorf("the receiver got %d requests after success", n)
	}
}

// A receiver that always fails, or never answers, ends failed after the
// configured attempts; the server answers meanwhile.
func TestDeliveryFails(t *testing.T) {
	t.Parallel()
	for name, answer := range map[string]int{"500": http.StatusInternalServerError, "no answer": 0} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			env := servertest.New(t, servertest.Options{Jobs: true, DeliveryAttempts: 3, OutboundTimeout: 300 * time.Millisecond})
			vendor := env.NewUser("Vendor")
			org := vendor.NewOrg("Vendor Inc")
			base := "/v1/integrations/broken"
			vendor.Do("POST", base, publishBody(org, nil)).Expect(http.StatusOK)
			rc := newReceiver(t, func(int) int { return answer })
			vendor.Do("PUT", base+"/dev", map[string]any{"tunnelUrl": rc.URL}).Expect(http.StatusNoContent)
			vendor.Do("POST", base+"/installations", map[string]any{"organization": org}).Expect(http.StatusCreated)
			id := eventIDs(vendor, base)[0]
			// Other requests are served while the deliveries fail.
			vendor.Do("GET", "/v1/user", nil).Expect(http.StatusOK)
			vendor.Do("GET", base, nil).Expect(http.StatusOK)
			ev := awaitStatus(t, vendor, base, id, "failed")
			if n := countLogs(ev, "attempt "); n != 3 {
				t.Errorf("%d attempts in the trace, want 3: %+v", n, ev.Trace.Logs)
			}
			if countLogs(ev, "failed after 3 attempts") != 1 || countLogs(ev, "delivered") != 0 {
				t.Errorf("trace: %+v", ev.Trace.Logs)
			}
			want := "answered 500"
			if answer == 0 {
				want = "no answer within"
			}
			if countLogs(ev, want) != 3 {
				t.Errorf("trace does not say %q: %+v", want, ev.Trace.Logs)
			}
			if n := len(rc.received(id)); n != 3 {
				t.Errorf("the receiver got %d requests, want 3", n)
			}
			vendor.Do("GET", "/v1/user", nil).Expect(http.StatusOK)
		})
	}
}

// Development mode sends the owner organization's events only, unless
// `all`; turning it off stops the deliveries.
func TestDeliveryTargets(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Options{Jobs: true})
	f := &installFixture{env: env, vendor: env.NewUser("Vendor"), admin: env.NewUser("Admin")}
	f.vendorOrg = f.vendor.NewOrg("Vendor Inc")
	f.base = "/v1/integrations/targets"
	f.vendor.Do("POST", f.base, publishBody(f.vendorOrg, nil)).Expect(http.StatusOK)
	f.org = f.admin.NewOrg("Customer")
	rc := newReceiver(t, func(int) int { return http.StatusOK })

	// all false: the customer's event is not sent; the vendor's own is.
	f.vendor.Do("PUT", f.base+"/dev", map[string]any{"tunnelUrl": rc.URL, "all": false}).Expect(http.StatusNoContent)
	f.inst = f.admin.Do("POST", f.base+"/installations", map[string]any{"organization": f.org}).Expect(http.StatusCreated).String("id")
	customerFirst := eventIDs(f.admin, f.base)[0]
	var ev deliveredEvent
	f.admin.Do("GET", f.base+"/events/"+customerFirst, nil).Expect(http.StatusOK).Decode(&ev)
	if !undelivered(ev) || countLogs(ev, "no delivery target") != 1 {
		t.Errorf("the customer's event with all=false: %+v", ev)
	}
	f.vendor.Do("POST", f.base+"/installations", map[string]any{"organization": f.vendorOrg}).Expect(http.StatusCreated)
	vendorFirst := eventIDs(f.vendor, f.base)[0]
	awaitStatus(t, f.vendor, f.base, vendorFirst, "success")

	// all true: the customer's events are sent too.
	f.vendor.Do("PUT", f.base+"/dev", map[string]any{"tunnelUrl": rc.URL, "all": true}).Expect(http.StatusNoContent)
	f.admin.Do("PATCH", f.base+"/installations/"+f.inst, `{"configuration":{"channel":"#docs"}}`).Expect(http.StatusOK)
	customerSecond := eventIDs(f.admin, f.base)[0]
	awaitStatus(t, f.admin, f.base, customerSecond, "success")
	if len(rc.received(customerFirst)) != 0 || len(rc.received(customerSecond)) != 1 {
		t.Errorf("the customer's events received: %d before all, %d after", len(rc.received(customerFirst)), len(rc.received(customerSecond)))
	}

	// Turned off: 205, then 204; events are no longer sent.
	f.vendor.Do("DELETE", f.base+"/dev", nil).Expect(http.StatusResetContent)
	f.vendor.Do("DELETE", f.base+"/dev", nil).Expect(http.StatusNoContent)
	f.admin.Do("PATCH", f.base+"/installations/"+f.inst, `{"configuration":{"channel":"#help"}}`).Expect(http.StatusOK)
	after := eventIDs(f.admin, f.base)[0]
	f.admin.Do("GET", f.base+"/events/"+after, nil).Expect(http.StatusOK).Decode(&ev)
	if !undelivered(ev) || countLogs(ev, "no delivery target") != 1 {
		t.Errorf("an event after DELETE dev: %+v", ev)
	}
	// The customer's admin neither reads the development mode nor changes it.
	res := f.admin.GraphQL(`{ integration(name: "targets") { development { url signingSecret } } }`, nil)
	if string(res.Data) != `{"integration":{"development":null}}` {
		t.Errorf("the customer reads the development mode: %s", res.Data)
	}
	f.admin.Do("PUT", f.base+"/dev", map[string]any{"tunnelUrl": "https://attacker.example/"}).Expect(http.StatusNotFound)
	f.admin.Do("DELETE", f.base+"/dev", nil).Expect(http.StatusNotFound)
}

// Turning development mode off stops the retries of an event being delivered.
func TestDeliveryStopsWhenTurnedOff(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Options{Jobs: true, DeliveryAttempts: 1000})
	vendor := env.NewUser("Vendor")
	org := vendor.NewOrg("Vendor Inc")
	base := "/v1/integrations/stopped"
	vendor.Do("POST", base, publishBody(org, nil)).Expect(http.StatusOK)
	failing := make(chan struct{}, 1)
	rc := newReceiver(t, func(int) int {
		select {
		case failing <- struct{}{}:
		default:
		}
		return http.StatusServiceUnavailable
	})
	vendor.Do("PUT", base+"/dev", map[string]any{"tunnelUrl": rc.URL}).Expect(http.StatusNoContent)
	vendor.Do("POST", base+"/installations", map[string]any{"organization": org}).Expect(http.StatusCreated)
	id := eventIDs(vendor, base)[0]
	select {
	case <-failing:
	case <-time.After(20 * time.Second):
		t.Fatal("no delivery attempt")
	}
	vendor.Do("DELETE", base+"/dev", nil).Expect(http.StatusResetContent)
	deadline := time.Now().Add(20 * time.Second)
	for {
		var ev deliveredEvent
		vendor.Do("GET", base+"/events/"+id, nil).Expect(http.StatusOK).Decode(&ev)
		if countLogs(ev, "development mode no longer sends") == 1 {
			n := len(rc.received(id))
			vendor.Do("GET", base+"/events/"+id, nil).Expect(http.StatusOK).Decode(&ev)
			if !undelivered(ev) || len(rc.received(id)) != n {
				t.Errorf("delivery went on after development mode was turned off: %+v", ev)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("deliveries did not stop: %+v", ev.Trace.Logs)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Bad input is 400; integrations the caller does not own are 403 or 404.
func TestDevelopmentModeInput(t *testing.T) {
	t.Parallel()
	env := servertest.New(t)
	alice, bob, carol := env.NewUser("Alice"), env.NewUser("Bob"), env.NewUser("Carol")
	org := alice.NewOrg("Acme")
	bob.Join(org, store.RoleEdit)
	carol.NewOrg("Carol Co")
	alice.Do("POST", "/v1/integrations/pub", publishBody(org, nil)).Expect(http.StatusOK)
	alice.Do("POST", "/v1/integrations/priv", publishBody(org, map[string]any{"visibility": "private"})).Expect(http.StatusOK)

	for _, body := range []string{`{}`, `{"tunnelUrl":""}`, `{"tunnelUrl":"not a url"}`, `{"tunnelUrl":"ftp://example.com/x"}`, `{"tunnelUrl":"/relative"}`,
		`{"tunnelUrl":"https://` + strings.Repeat("a", 250) + `.example/"}`, `{"tunnelUrl":"https://example.com","all":"yes"}`, `{"tunnelUrl":42}`, `[]`,
		`{"tunnelUrl":null}`, `{"url":"https://example.com"}`, `{"url":"https://a.example/","tunnelUrl":"https://b.example/"}`} {
		alice.Do("PUT", "/v1/integrations/pub/dev", body).Expect(http.StatusBadRequest).ErrorMessage()
	}
	// Nothing was set by the bad requests.
	if d := alice.GraphQL(`{ integration(name: "pub") { development { url signingSecret } } }`, nil); string(d.Data) != `{"integration":{"development":{"url":null,"signingSecret":null}}}` {
		t.Errorf("after bad input: %s", d.Data)
	}
	alice.Do("PUT", "/v1/integrations/nope/dev", `{"tunnelUrl":"https://example.com"}`).Expect(http.StatusNotFound)
	alice.Do("DELETE", "/v1/integrations/nope/dev", nil).Expect(http.StatusNotFound)
	// A member who is not an admin: 403; an outsider: 404 (private) or 403
	// (public: they see it, it is not theirs).
	bob.Do("PUT", "/v1/integrations/pub/dev", `{"tunnelUrl":"https://example.com"}`).Expect(http.StatusForbidden)
	bob.Do("DELETE", "/v1/integrations/pub/dev", nil).Expect(http.StatusForbidden)
	carol.Do("PUT", "/v1/integrations/priv/dev", `{"tunnelUrl":"https://example.com"}`).Expect(http.StatusNotFound)
	carol.Do("DELETE", "/v1/integrations/priv/dev", nil).Expect(http.StatusNotFound)
	status := carol.Do("PUT", "/v1/integrations/pub/dev", `{"tunnelUrl":"https://example.com"}`).Status
	if status != http.StatusForbidden && status != http.StatusNotFound {
		t.Errorf("an outsider sets development mode: %d", status)
	}

	// Set, changed, read back; the signing secret stays the same.
	alice.Do("PUT", "/v1/integrations/pub/dev", `{"tunnelUrl":"https://example.com/a"}`).Expect(http.StatusNoContent)
	first := signingSecret(t, alice, "pub")
	alice.Do("PUT", "/v1/integrations/pub/dev", `{"tunnelUrl":"https://example.com/b","all":true}`).Expect(http.StatusNoContent)
	res := alice.GraphQL(`{ integration(name: "pub") { development { url all signingSecret } } }`, nil)
	var data struct {
		Integration struct {
			Development struct {
				URL, SigningSecret string
				All                bool
			}
		}
	}
	_ = json.Unmarshal(res.Data, &data)
	if d := data.Integration.Development; d.URL != "https://example.com/b" || !d.All || d.SigningSecret != first {
		t.Errorf("development mode: %s", res.Data)
	}
	// The GraphQL input's name of the URL is accepted with the reference's.
	alice.Do("PUT", "/v1/integrations/pub/dev", `{"tunnelUrl":"https://example.com/c","all":true}`).Expect(http.StatusNoContent)
	alice.Do("PUT", "/v1/integrations/pub/dev", `{"url":"https://example.com/c","tunnelUrl":"https://example.com/c","all":true}`).Expect(http.StatusNoContent)
	res = alice.GraphQL(`{ integration(name: "pub") { development { url } } }`, nil)
	if !strings.Contains(string(res.Data), `"https://example.com/c"`) {
		t.Errorf("development mode set by tunnelUrl and url: %s", res.Data)
	}
	// Publishing a new version keeps it; the secret is in no REST answer.
	body := alice.Do("POST", "/v1/integrations/pub", publishBody(org, nil)).Expect(http.StatusOK).Body
	if strings.Contains(string(body), first) {
		t.Error("publishing answers the signing secret")
	}
	if s := signingSecret(t, alice, "pub"); s != first {
		t.Error("publishing changed the signing secret")
	}
}

// A delivery whose job was lost (the enqueue after the commit failed, or the
// process died) is enqueued again by the sweep_unfinished job.
func TestDeliverySweptAfterLostJob(t *testing.T) {
	t.Parallel()
	env := servertest.New(t) // no job runner yet: the enqueued job waits
	vendor := env.NewUser("Vendor")
	org := vendor.NewOrg("Vendor Inc")
	base := "/v1/integrations/swept"
	vendor.Do("POST", base, publishBody(org, nil)).Expect(http.StatusOK)
	rc := newReceiver(t, func(int) int { return http.StatusOK })
	vendor.Do("PUT", base+"/dev", map[string]any{"tunnelUrl": rc.URL}).Expect(http.StatusNoContent)
	vendor.Do("POST", base+"/installations", map[string]any{"organization": org}).Expect(http.StatusCreated)
	id := eventIDs(vendor, base)[0]
	// The job is lost.
	res, err := env.DB.ExecContext(context.Background(), "DELETE FROM river_job WHERE kind = 'deliver_integration_event'")
	if n, _ := res.RowsAffected(); err != nil || n != 1 {
		t.Fatalf("deleting the delivery job: %v, %d rows", err, n)
	}
	runner, err := jobs.Start(context.Background(), jobs.Config{DB: env.DB, Resolver: env.Server.Resolver, Clock: env.Clock.Now,
		PollInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = runner.Stop(context.Background()) })
	ev := awaitStatus(t, vendor, base, id, "success")
	if countLogs(ev, "delivered") != 1 || len(rc.received(id)) != 1 {
		t.Errorf("swept delivery: %+v, %d requests", ev.Trace.Logs, len(rc.received(id)))
	}
}

// lockedBuffer collects log lines written from several goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// An integration's secrets appear in no log line, whatever happens to it:
// publishing (also refused publishing), installing, events and their
// deliveries (failed and successful), reads.
func TestSecretsAreNeverLogged(t *testing.T) {
	t.Parallel()
	logs := &lockedBuffer{}
	env := servertest.New(t, servertest.Options{Jobs: true, DeliveryAttempts: 3, Logs: logs})
	vendor := env.NewUser("Vendor")
	org := vendor.NewOrg("Vendor Inc")
	base := "/v1/integrations/logged"
	vendor.Do("POST", base, publishBody(org, map[string]any{"secrets": map[string]string{"API_KEY": theSecret}})).Expect(http.StatusOK)
	vendor.Do("POST", base, publishBody(org, map[string]any{"secrets": map[string]any{"API_KEY": theSecret, "N": 1}})).Expect(http.StatusBadRequest)
	rc := newReceiver(t, func(n int) int {
		if n == 1 {
			return http.StatusInternalServerError
		}
		return http.StatusOK
	})
	vendor.Do("PUT", base+"/dev", map[string]any{"tunnelUrl": rc.URL + "/events"}).Expect(http.StatusNoContent)
	vendor.Do("POST", base+"/installations", map[string]any{"organization": org}).Expect(http.StatusCreated)
	ids := eventIDs(vendor, base)
	if len(ids) != 1 {
		t.Fatalf("events: %v", ids)
	}
	awaitStatus(t, vendor, base, ids[0], "success")
	vendor.Do("GET", base, nil).Expect(http.StatusOK)
	vendor.Do("GET", base+"/events/"+ids[0], nil).Expect(http.StatusOK)
	out := logs.String()
	if !strings.Contains(out, base) {
		t.Fatalf("the requests were not logged: %q", out)
	}
	if strings.Contains(out, theSecret) {
		t.Errorf("a log line shows the secret:\n%s", out)
	}
}
