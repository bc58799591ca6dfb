package main_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/docsapi/docsapi/store/pgtest"
)

func TestMain(m *testing.M) {
	code := pgtest.Run(m)
	if binaryDir != "" {
		_ = os.RemoveAll(binaryDir)
	}
	os.Exit(code)
}

// The server binary, as an operator runs it: it migrates, bootstraps an owner
// from DOCSAPI_BOOTSTRAP_TOKEN, serves, and on SIGTERM finishes the requests
// in flight before it exits.
func TestServeBootstrapAndDrain(t *testing.T) {
	t.Parallel()
	bin := buildDocsapi(t)
	checkOpenAPICommand(t, bin)
	addr := freeAddr(t)
	token := "bootstrap-token-for-tests-0123456789"
	cmd := exec.Command(bin, "serve")
	cmd.Env = append(os.Environ(), "DATABASE_URL="+pgtest.NewDatabase(t), "DOCSAPI_ADDR="+addr,
		"DOCSAPI_BOOTSTRAP_TOKEN="+token, "DOCSAPI_LOG_FORMAT=json")
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	logs := make(chan string, 1000)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			logs <- sc.Text()
		}
		close(logs)
	}()
	base := "http://" + addr
	waitFor(t, base+"/readyz")

	get := func(path string) (int, string) {
		req, _ := http.NewRequest("GET", base+path, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	status, body := get("/v1/orgs")
	if status != 200 || !strings.Contains(body, `"My organization"`) {
		t.Fatalf("GET /v1/orgs with the bootstrap token: %d %s", status, body)
	}
	orgID := body[strings.Index(body, `"id":"`)+6:]
	orgID = orgID[:strings.Index(orgID, `"`)]
	if status, _ := get("/healthz"); status != 200 {
		t.Fatalf("healthz: %d", status)
	}
	if _, metrics := get("/metrics"); !strings.Contains(metrics, `docsapi_http_requests_total{method="GET",route="GET /v1/orgs",status="200"} 1`) {
		t.Fatalf("metrics do not count the request:\n%s", metrics)
	}

	// A request whose body is still arriving when SIGTERM comes completes.
	pr, pw := io.Pipe()
	req, _ := http.NewRequest("PATCH", base+"/v1/orgs/"+orgID, pr)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("X-Request-Id", "drain-test-1")
	done := make(chan *http.Response, 1)
	go func() {
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	_, _ = pw.Write([]byte(`{"title": "Drained`))
	time.Sleep(200 * time.Millisecond)
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	_, _ = pw.Write([]byte(` org"}`))
	_ = pw.Close()
	res := <-done
	if res == nil || res.StatusCode != 200 {
		t.Fatalf("the in-flight request did not complete: %v", res)
	}
	// Every log line is read before Wait, which closes the pipe once the
	// process has exited and would lose the lines not read yet.
	var sawRequest, sawStopped bool
	for line := range logs {
		sawRequest = sawRequest || (strings.Contains(line, `"request_id":"drain-test-1"`) && strings.Contains(line, `"status":200`))
		sawStopped = sawStopped || strings.Contains(line, `"msg":"stopped"`)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit: %v", err)
	}
	if !sawRequest || !sawStopped {
		t.Fatalf("logs lack the drained request (%v) or the stop (%v)", sawRequest, sawStopped)
	}
}

// buildDocsapi returns the server binary, built at the first call. The
// tests that run it as an operator does share one: each build links a
// binary of some 120 MB, 5 s of CPU, and they start at once.
func buildDocsapi(t *testing.T) string {
	t.Helper()
	bin, err := docsapiBinary()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// binaryDir holds the binary; TestMain removes it.
var binaryDir string

var docsapiBinary = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "docsapi-binary-")
	if err != nil {
		return "", err
	}
	binaryDir = dir
	bin := filepath.Join(dir, "docsapi")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		return "", fmt.Errorf("build: %v\n%s", err, out)
	}
	return bin, nil
})

func freeAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func waitFor(t *testing.T, url string) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for ctx.Err() == nil {
		if res, err := http.Get(url); err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s never answered", url)
}

// checkOpenAPICommand runs `docsapi openapi`, which needs no database: the
// document it prints is the one the server serves, for DOCSAPI_PUBLIC_URL.
func checkOpenAPICommand(t *testing.T, bin string) {
	t.Helper()
	cmd := exec.Command(bin, "openapi")
	cmd.Env = append(os.Environ(), "DOCSAPI_PUBLIC_URL=https://docs.example.com")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("docsapi openapi: %v", err)
	}
	var doc struct {
		OpenAPI string `json:"openapi"`
		Servers []struct {
			URL string `json:"url"`
		} `json:"servers"`
		Paths map[string]any `json:"paths"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatalf("docsapi openapi printed no JSON document: %v", err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.1") || len(doc.Servers) != 1 || doc.Servers[0].URL != "https://docs.example.com" ||
		doc.Paths["/v1/spaces/{spaceId}"] == nil {
		t.Errorf("docsapi openapi: openapi %q, servers %+v, %d paths", doc.OpenAPI, doc.Servers, len(doc.Paths))
	}
}

// The embedded PostgreSQL dies under `docsapi serve` (SIGKILL, as the OOM
// killer kills): the server says so, restarts it and goes on. When it cannot
// come back (its data directory made unusable), the server exits non-zero,
// saying why, for its own supervisor to restart it.
func TestServeSupervisesTheEmbeddedDatabase(t *testing.T) {
	t.Parallel()
	bin := buildDocsapi(t)
	dir := pgtest.NewDataDir(t)
	addr := freeAddr(t)
	token := "bootstrap-token-for-tests-0123456789"
	cmd := exec.Command(bin, "serve", "--shutdown-timeout=5s")
	cmd.Env = append(os.Environ(), "DATABASE_URL=", "DOCSAPI_DATA_DIR="+dir, "DOCSAPI_ADDR="+addr,
		"DOCSAPI_BOOTSTRAP_TOKEN="+token, "DOCSAPI_LOG_FORMAT=json", "DOCSAPI_PG_RESTARTS=2")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	base := "http://" + addr
	waitFor(t, base+"/readyz")
	get := func(path string) int {
		req, _ := http.NewRequest("GET", base+path, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	// postmaster is the pid in postmaster.pid (0 while it cannot be read:
	// a new server may be writing it).
	postmaster := func() int {
		b, _ := os.ReadFile(filepath.Join(dir, "pgdata", "postmaster.pid"))
		pid, _ := strconv.Atoi(strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0]))
		return pid
	}
	if status := get("/v1/orgs"); status != 200 {
		t.Fatalf("GET /v1/orgs: %d", status)
	}

	pid := postmaster()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// Back: another postmaster, and requests succeed. (The old server's
	// sessions may answer a moment after the kill, before they notice.)
	deadline := time.Now().Add(15 * time.Second)
	for postmaster() == pid || postmaster() == 0 || get("/v1/orgs") != 200 || get("/healthz") != 200 {
		if time.Now().After(deadline) {
			t.Fatalf("not back 15s after the kill:\n%s", stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}

	pgdata := filepath.Join(dir, "pgdata")
	if err := os.Rename(filepath.Join(pgdata, "PG_VERSION"), filepath.Join(pgdata, "PG_VERSION.moved")); err != nil {
		t.Fatal(err)
	}
	if pid = postmaster(); pid == 0 {
		t.Fatal("no postmaster.pid")
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	var err error
	select {
	case err = <-exited:
		exited <- err
	case <-time.After(20 * time.Second):
		t.Fatalf("docsapi still runs 20s after its database died for good:\n%s", stderr.String())
	}
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Errorf("exit: %v, want status 1", err)
	}
	logs := stderr.String()
	for _, want := range []string{
		`"msg":"the embedded PostgreSQL exited"`, "killed by signal 9", `"msg":"the embedded PostgreSQL is back"`,
		`"msg":"giving up on the embedded PostgreSQL"`, `"msg":"cannot go on without the database"`,
		"docsapi: pgserver: the embedded PostgreSQL exited (killed by signal 9",
	} {
		if !strings.Contains(logs, want) {
			t.Errorf("stderr lacks %s:\n%s", want, logs)
		}
	}
}
