package main_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/docsapi/docsapi/cmd/docsapi/server"
	"github.com/docsapi/docsapi/store/pgtest"
)

// Two `docsapi serve` processes with DOCSAPI_REPLICA_URLS naming a
// streaming replica that lags 15 s: a space created through A reads back at
// once through A, and through B when the client sends back A's
// X-Write-Position; B without it reads from the replica, which has not
// replayed the create yet. /metrics counts the reads of each pool.
func TestInstancesWithAReplica(t *testing.T) {
	t.Parallel()
	bin := buildDocsapi(t)
	r := pgtest.NewReplicated(t)
	name := r.NewDatabase()
	const token = "bootstrap-token-with-a-replica"
	instances := startInstances(t, bin, 2, "DATABASE_URL="+r.Server.URL(name), "DOCSAPI_REPLICA_URLS="+r.Standby.URL(name),
		"DOCSAPI_REPLICA_MAX_LAG=1m", "DOCSAPI_BOOTSTRAP_TOKEN="+token)
	a, b := instances[0], instances[1]
	orgs := a.must(http.StatusOK, "GET", "/v1/orgs", token, nil)["items"].([]any)
	org := orgs[0].(map[string]any)["id"].(string)
	r.WaitCaughtUp()
	r.SetApplyDelay(15 * time.Second)

	status, header, body := request(t, a, "POST", "/v1/orgs/"+org+"/spaces", token, `{"title":"Docs"}`, "")
	if status != http.StatusCreated || header.Get(server.WritePositionHeader) == "" {
		t.Fatalf("create: %d %s, position %q", status, body, header.Get(server.WritePositionHeader))
	}
	var space struct{ ID string }
	_ = json.Unmarshal(body, &space)
	position := header.Get(server.WritePositionHeader)
	for _, c := range []struct {
		name     string
		in       *instance
		position string
		want     int
	}{
		{"A", a, "", http.StatusOK},
		{"B, the position sent back", b, position, http.StatusOK},
		{"B, no position", b, "", http.StatusNotFound},
	} {
		if status, _, body := request(t, c.in, "GET", "/v1/spaces/"+space.ID, token, "", c.position); status != c.want {
			t.Errorf("%s: GET space: %d %s, want %d", c.name, status, body, c.want)
		}
	}
	_, _, metrics := request(t, b, "GET", "/metrics", "", "", "")
	if want := `docsapi_db_reads_total{pool="127.0.0.1:`; !strings.Contains(string(metrics), want) {
		t.Errorf("B's /metrics lacks %s...", want)
	}
}

// request sends a request to in (position, when set, as X-Write-Position)
// and returns the answer's status, header and body.
func request(t *testing.T, in *instance, method, path, token, body, position string) (int, http.Header, []byte) {
	t.Helper()
	req, _ := http.NewRequest(method, in.base+path, strings.NewReader(body))
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if position != "" {
		req.Header.Set(server.WritePositionHeader, position)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header, raw
}
