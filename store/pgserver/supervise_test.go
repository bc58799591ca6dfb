package pgserver

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// logBuffer collects a supervisor's log lines.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func startSupervised(t *testing.T, dir string, sv Supervision) (*Server, *logBuffer) {
	t.Helper()
	logs := &logBuffer{}
	sv.Log = slog.New(slog.NewTextHandler(logs, nil))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := Start(ctx, Options{DataDir: dir, Durable: true, Supervise: &sv})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return s, logs
}

// waitUntil polls cond every 10ms for up to d.
func waitUntil(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
	return true
}

// A supervised server killed with SIGKILL (as the OOM killer kills) is
// restarted on the same port and data; a commit acknowledged just before the
// kill is there after it. Stop is not fought: the server stays down.
func TestSupervisorRestartsAKilledServer(t *testing.T) {
	dir := dataDir(t)
	s, logs := startSupervised(t, dir, Supervision{Backoff: 100 * time.Millisecond})
	if err := s.Health(); err != nil {
		t.Fatalf("health of a running server: %v", err)
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, s.URL("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "CREATE TABLE kept (v text)"); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "INSERT INTO kept VALUES ('acknowledged')"); err != nil {
		t.Fatal(err)
	}
	pid, port := s.PID(), s.Port()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if !waitUntil(2*time.Second, func() bool { return s.Health() != nil }) {
		t.Fatal("Health still nil after the server was killed")
	}
	if err := s.Health(); !strings.Contains(err.Error(), "signal 9") {
		t.Errorf("Health while down: %v", err)
	}
	start := time.Now()
	if !waitUntil(30*time.Second, func() bool { return s.Health() == nil }) {
		t.Fatalf("not restarted: %v\n%s", s.Health(), logs)
	}
	t.Logf("back after %s", time.Since(start))
	if s.PID() == pid || s.Port() != port {
		t.Errorf("pid %d -> %d, port %d -> %d", pid, s.PID(), port, s.Port())
	}
	// The old connection died with the server; a new one finds the row.
	_ = conn.Close(ctx)
	conn, err = pgx.Connect(ctx, s.URL("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var v string
	if err := conn.QueryRow(ctx, "SELECT v FROM kept").Scan(&v); err != nil || v != "acknowledged" {
		t.Fatalf("the acknowledged row after the restart: %q, %v", v, err)
	}
	for _, want := range []string{"the embedded PostgreSQL exited", "signal 9", "the embedded PostgreSQL is back"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("logs lack %q:\n%s", want, logs)
		}
	}
	select {
	case <-s.Failed():
		t.Fatalf("Failed closed: %v", s.Err())
	default:
	}

	// An intentional stop is not restarted.
	_ = conn.Close(ctx)
	pid = s.PID()
	s.Stop()
	if syscall.Kill(pid, 0) == nil {
		t.Fatal("postgres still runs after Stop")
	}
	time.Sleep(300 * time.Millisecond)
	if err := connect(s.URL("postgres")); err == nil {
		t.Fatal("the server is up again after Stop")
	}
	if err := s.Health(); err == nil || !strings.Contains(err.Error(), "stopped") {
		t.Errorf("Health after Stop: %v", err)
	}
	if strings.Count(logs.String(), "exited") != 1 {
		t.Errorf("Stop was seen as an exit:\n%s", logs)
	}
}

// When the server cannot come back (its data directory made unusable), the
// supervisor tries Attempts restarts, then gives up: Failed is closed, Err
// and Health say why.
func TestSupervisorGivesUp(t *testing.T) {
	dir := dataDir(t)
	s, logs := startSupervised(t, dir, Supervision{Attempts: 3, Backoff: 20 * time.Millisecond})
	pgdata := filepath.Join(dir, "pgdata")
	if err := os.Rename(filepath.Join(pgdata, "PG_VERSION"), filepath.Join(pgdata, "PG_VERSION.moved")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(s.PID(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	select {
	case <-s.Failed():
	case <-time.After(20 * time.Second):
		t.Fatalf("the supervisor did not give up: %v\n%s", s.Health(), logs)
	}
	t.Logf("gave up after %s", time.Since(start))
	err := s.Err()
	if err == nil || !strings.Contains(err.Error(), "could not be restarted (3 restarts") || !strings.Contains(err.Error(), "signal 9") {
		t.Errorf("Err: %v", err)
	}
	if h := s.Health(); !errors.Is(h, err) && h != err {
		t.Errorf("Health %v, want Err", h)
	}
	if n := strings.Count(logs.String(), "restarting the embedded PostgreSQL failed"); n != 3 {
		t.Errorf("%d failed restarts logged, want 3:\n%s", n, logs)
	}
	if _, err := os.Stat(filepath.Join(pgdata, "PG_VERSION")); err == nil {
		t.Error("a restart ran initdb over the data directory")
	}
	done := make(chan struct{})
	go func() { s.Stop(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Stop hangs after the supervisor gave up")
	}
}

// A durable server runs with fsync, synchronous_commit and full_page_writes
// on, pinned on its command line; asking it for less is refused.
func TestDurableSettings(t *testing.T) {
	settings, err := serverSettings(Options{Durable: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"fsync", "synchronous_commit", "full_page_writes"} {
		if settings[k] != "on" {
			t.Errorf("durable %s=%q", k, settings[k])
		}
	}
	if _, err := serverSettings(Options{Durable: true, Settings: map[string]string{"synchronous_commit": "off"}}); err == nil {
		t.Error("a durable server accepted synchronous_commit=off")
	}
	if settings, _ := serverSettings(Options{}); settings["fsync"] != "off" {
		t.Errorf("a test server keeps fsync %q", settings["fsync"])
	}
}
