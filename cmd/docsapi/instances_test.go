package main_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/docsapi/docsapi/cmd/docsapi/server/servertest"
	"github.com/docsapi/docsapi/store"
	"github.com/docsapi/docsapi/store/blob/blobtest"
	"github.com/docsapi/docsapi/store/pgtest"
)

// instance is one `docsapi serve` process of a service.
type instance struct {
	t    *testing.T
	name string
	base string // http://addr, also its public URL
	cmd  *exec.Cmd
	mu   sync.Mutex
	logs []string
}

// startInstances starts n processes of the binary on one database and one
// bucket, at the same moment, and waits until each is ready.
func startInstances(t *testing.T, bin string, n int, env ...string) []*instance {
	t.Helper()
	var out []*instance
	for i := range n {
		addr := freeAddr(t)
		in := &instance{t: t, name: string(rune('A' + i)), base: "http://" + addr}
		in.cmd = exec.Command(bin, "serve", "--shutdown-timeout=5s")
		in.cmd.Env = append(append(os.Environ(), env...), "DOCSAPI_ADDR="+addr, "DOCSAPI_PUBLIC_URL="+in.base,
			"DOCSAPI_DATA_DIR="+t.TempDir(), "DOCSAPI_LOG_FORMAT=json")
		stderr, _ := in.cmd.StderrPipe()
		go func() {
			sc := bufio.NewScanner(stderr)
			for sc.Scan() {
				in.mu.Lock()
				in.logs = append(in.logs, sc.Text())
				in.mu.Unlock()
			}
		}()
		out = append(out, in)
	}
	for _, in := range out {
		if err := in.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = in.cmd.Process.Signal(syscall.SIGTERM)
			done := make(chan struct{})
			go func() { _ = in.cmd.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				_ = in.cmd.Process.Kill()
			}
			if t.Failed() {
				in.mu.Lock()
				t.Logf("instance %s logs:\n%s", in.name, strings.Join(in.logs, "\n"))
				in.mu.Unlock()
			}
		})
	}
	for _, in := range out {
		waitFor(t, in.base+"/readyz")
	}
	return out
}

// do sends a request to the instance with token and returns the status
// and the body; body, if any, is sent as JSON.
func (in *instance) do(method, path, token string, body any) (int, []byte) {
	in.t.Helper()
	var r io.Reader
	if body != nil {
		raw, _ := json.Marshal(body)
		r = bytes.NewReader(raw)
	}
	req, _ := http.NewRequest(method, in.base+path, r)
	if r != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		in.t.Fatalf("%s %s on %s: %v", method, path, in.name, err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	return res.StatusCode, raw
}

// must sends a request that must answer want, and decodes its JSON body.
func (in *instance) must(want int, method, path, token string, body any) map[string]any {
	in.t.Helper()
	status, raw := in.do(method, path, token, body)
	if status != want {
		in.t.Fatalf("%s %s on %s: %d %s, want %d", method, path, in.name, status, raw, want)
	}
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	return out
}

// upload uploads content as a file of the space's content.
func (in *instance) upload(token, space, name string, content []byte) string {
	in.t.Helper()
	req := servertest.UploadRequest(in.base, token, `mutation($s: ID!, $file: Upload!) { uploadFile(spaceId: $s, file: $file) { id } }`,
		map[string]any{"s": space}, name, "application/octet-stream", content)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		in.t.Fatal(err)
	}
	defer res.Body.Close()
	var out struct {
		Data struct {
			UploadFile struct{ ID string }
		}
		Errors []any
	}
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil || len(out.Errors) > 0 || out.Data.UploadFile.ID == "" {
		in.t.Fatalf("upload on %s: %d %v %v", in.name, res.StatusCode, out.Errors, err)
	}
	return out.Data.UploadFile.ID
}

// eventually retries check until it holds, for at most 10 seconds: what one
// instance wrote reaches another through PostgreSQL's notifications or
// its job queue, a few milliseconds later.
func eventually(t *testing.T, what string, check func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !check() {
		if time.Since(start) > 10*time.Second {
			t.Fatalf("%s: not after 10s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return time.Since(start)
}

// hookReceiver counts the webhook deliveries it receives, by event id.
type hookReceiver struct {
	*httptest.Server
	mu    sync.Mutex
	count map[string]int
}

func newHookReceiver(t *testing.T) *hookReceiver {
	rc := &hookReceiver{count: map[string]int{}}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		rc.mu.Lock()
		rc.count[r.Header.Get("X-GitBook-Event-Id")]++
		rc.mu.Unlock()
	}))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *hookReceiver) received() map[string]int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	out := map[string]int{}
	for k, v := range rc.count {
		out[k] = v
	}
	return out
}

// Two `docsapi serve` processes on one PostgreSQL and one S3 bucket,
// started at the same moment, behave as one service: the migrations and the
// bootstrap happen once; a file uploaded through A downloads through B; a
// subscription on B hears a change made through A; a token revoked and a
// member removed are refused by B; a job enqueued by either runs once, and
// each outgoing webhook event is delivered once.
func TestTwoInstances(t *testing.T) {
	t.Parallel()
	bin := buildDocsapi(t)
	dbURL := pgtest.NewEmptyDatabase(t)
	const token, adminToken = "bootstrap-token-of-two-instances", "admin-token-of-two-instances"
	instances := startInstances(t, bin, 2, "DATABASE_URL="+dbURL, "DOCSAPI_BLOB_URL="+blobtest.S3(t),
		"DOCSAPI_BOOTSTRAP_TOKEN="+token, "DOCSAPI_ADMIN_TOKEN="+adminToken,
		"DOCSAPI_SECRET_KEY="+strings.Repeat("ab", 32), "DOCSAPI_OUTBOUND_ALLOW_LOOPBACK=1", "DOCSAPI_DELIVERY_BACKOFF=100ms")
	a, b := instances[0], instances[1]
	ctx := context.Background()
	db, err := store.Open(ctx, dbURL, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()

	// The migrations ran once (the advisory lock), and so did the bootstrap.
	var applied, distinct int
	if err := db.NewRaw("SELECT count(*), count(DISTINCT name) FROM bun_migrations").Scan(ctx, &applied, &distinct); err != nil || applied == 0 || applied != distinct {
		t.Fatalf("migrations: %d applied, %d distinct, %v", applied, distinct, err)
	}
	orgs := b.must(http.StatusOK, "GET", "/v1/orgs", token, nil)["items"].([]any)
	if len(orgs) != 1 {
		t.Fatalf("the bootstrap made %d organizations", len(orgs))
	}
	org := orgs[0].(map[string]any)["id"].(string)
	space := a.must(http.StatusCreated, "POST", "/v1/orgs/"+org+"/spaces", token, map[string]any{"title": "Docs"})["id"].(string)

	// Outgoing events: an integration in development mode delivers to a
	// local receiver; its installation through A and the space's through
	// B each record an event whose delivery is a job either may run.
	rc := newHookReceiver(t)
	hook := "/v1/integrations/two-instances"
	a.must(http.StatusOK, "POST", hook, token, map[string]any{"title": "Hook", "description": "Counts deliveries",
		"script": "export default {}", "scopes": []string{"space:content:read"}, "organization": org})
	a.must(http.StatusNoContent, "PUT", hook+"/dev", token, map[string]any{"tunnelUrl": rc.URL + "/events"})
	inst := a.must(http.StatusCreated, "POST", hook+"/installations", token, map[string]any{"organization": org})["id"].(string)
	b.must(http.StatusCreated, "POST", hook+"/installations/"+inst+"/spaces", token, map[string]any{"space": space})

	// A subscription on B hears an upload through A. B cannot tell when
	// its subscription is listening, so uploads go on until one is heard.
	conn := subscribe(t, b, token, space)
	big := bytes.Repeat([]byte("0123456789abcdef"), 6<<16) // 6 MiB: several parts of an S3 upload
	var file string
	heard := eventually(t, "a subscription on B hears an upload through A", func() bool {
		file = a.upload(token, space, "big.bin", big)
		return conn.heard("content_updated", 300*time.Millisecond)
	})
	t.Logf("a subscription on B heard an upload through A after %v", heard)

	// The file downloads through B, from the shared bucket; the address B
	// signed works on A too (the signing key is in the database), as it
	// must behind a load balancer.
	url := b.must(http.StatusOK, "GET", "/v1/spaces/"+space+"/content/files/"+file, token, nil)["downloadURL"].(string)
	if !strings.HasPrefix(url, b.base) {
		t.Fatalf("B's download address: %s", url)
	}
	for _, in := range instances {
		res, err := http.Get(in.base + strings.TrimPrefix(url, b.base))
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK || !bytes.Equal(got, big) {
			t.Fatalf("download through %s: %d, %d bytes", in.name, res.StatusCode, len(got))
		}
	}

	// A member removed through A, and a token revoked, are refused by B
	// once it has heard of it (PostgreSQL notifies B's caller cache).
	newMember := func(name string) (id, tok string) {
		u := a.must(http.StatusCreated, "POST", "/admin/users", adminToken, map[string]any{"email": name + "@example.com", "displayName": name})
		id, tok = u["user"].(map[string]any)["id"].(string), u["token"].(string)
		role := store.RoleRead
		if err := store.AddMember(ctx, db, org, id, &role, time.Now()); err != nil {
			t.Fatal(err)
		}
		b.must(http.StatusOK, "GET", "/v1/orgs/"+org, tok, nil) // now in B's cache
		return id, tok
	}
	dave, daveToken := newMember("dave")
	a.must(http.StatusNoContent, "DELETE", "/v1/orgs/"+org+"/members/"+dave, token, nil)
	took := eventually(t, "B refuses a member removed through A", func() bool {
		status, _ := b.do("GET", "/v1/orgs/"+org, daveToken, nil)
		return status == http.StatusNotFound
	})
	t.Logf("B refused the removed member after %v", took)
	// No endpoint revokes a token: an operator deletes its row.
	carol, carolToken := newMember("carol")
	if _, err := db.NewRaw("DELETE FROM api_tokens WHERE user_id = ?", carol).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	took = eventually(t, "B refuses a revoked token", func() bool {
		status, _ := b.do("GET", "/v1/orgs/"+org, carolToken, nil)
		return status == http.StatusUnauthorized
	})
	t.Logf("B refused the revoked token after %v", took)

	// Every event recorded, by either instance, is delivered, once.
	var events struct {
		Items []struct{ ID, DeliveryStatus string }
	}
	eventually(t, "every event delivered", func() bool {
		_, raw := b.do("GET", hook+"/events?limit=1000", token, nil)
		if err := json.Unmarshal(raw, &events); err != nil {
			t.Fatal(err)
		}
		for _, e := range events.Items {
			if e.DeliveryStatus != "success" {
				return false
			}
		}
		return len(events.Items) > 0
	})
	received := rc.received()
	for _, e := range events.Items {
		if received[e.ID] != 1 {
			t.Errorf("event %s was delivered %d times", e.ID, received[e.ID])
		}
	}
	if len(received) != len(events.Items) {
		t.Errorf("%d events, %d delivered: %v", len(events.Items), len(received), received)
	}
	t.Logf("%d events, each delivered once", len(events.Items))
}

// wsConn is a graphql-transport-ws connection with one subscription.
type wsConn struct {
	t    *testing.T
	conn *websocket.Conn
	msgs chan map[string]any
}

// subscribe opens a websocket to the instance and subscribes to the
// space's events.
func subscribe(t *testing.T, in *instance, token, space string) *wsConn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(in.base, "http")+"/graphql",
		&websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}})
	if err != nil {
		t.Fatal(err)
	}
	conn.SetReadLimit(1 << 20)
	t.Cleanup(func() { _ = conn.CloseNow() })
	c := &wsConn{t: t, conn: conn, msgs: make(chan map[string]any, 100)}
	go func() {
		defer close(c.msgs)
		for {
			_, data, err := conn.Read(context.Background())
			if err != nil {
				return
			}
			var m map[string]any
			if json.Unmarshal(data, &m) == nil {
				c.msgs <- m
			}
		}
	}()
	send := func(m map[string]any) {
		raw, _ := json.Marshal(m)
		if err := conn.Write(ctx, websocket.MessageText, raw); err != nil {
			t.Fatal(err)
		}
	}
	send(map[string]any{"type": "connection_init", "payload": map[string]string{"Authorization": "Bearer " + token}})
	if m := <-c.msgs; m["type"] != "connection_ack" {
		t.Fatalf("connection_init on %s: %v", in.name, m)
	}
	send(map[string]any{"id": "s", "type": "subscribe", "payload": map[string]any{
		"query": `subscription($s: ID!) { spaceEvents(spaceId: $s) { type spaceId } }`, "variables": map[string]any{"s": space}}})
	return c
}

// heard reports whether an event of type typ arrives within wait.
func (c *wsConn) heard(typ string, wait time.Duration) bool {
	timeout := time.After(wait)
	for {
		select {
		case m, ok := <-c.msgs:
			if !ok {
				return false
			}
			var next struct {
				Type    string
				Payload struct {
					Data struct{ SpaceEvents struct{ Type string } }
				}
			}
			raw, _ := json.Marshal(m)
			if json.Unmarshal(raw, &next) != nil || next.Type != "next" {
				c.t.Fatalf("subscription message: %s", raw)
			}
			if next.Payload.Data.SpaceEvents.Type == typ {
				return true
			}
		case <-timeout:
			return false
		}
	}
}
