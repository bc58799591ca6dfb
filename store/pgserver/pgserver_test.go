package pgserver

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// dataDir is a fresh data directory the server's OS user can reach (t.TempDir
// nests it in a directory only root may enter).
func dataDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "pgserver-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

func startServer(t *testing.T, dir string) *Server {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := Start(ctx, Options{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return s
}

// connect opens and closes a connection to url, returning why it failed.
func connect(url string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return err
	}
	return conn.Close(ctx)
}

// withPassword is u with its password replaced (removed when empty).
func withPassword(t *testing.T, u, password string) string {
	t.Helper()
	parsed, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	if password == "" {
		parsed.User = url.User(parsed.User.Username())
	} else {
		parsed.User = url.UserPassword(parsed.User.Username(), password)
	}
	return parsed.String()
}

// refused fails unless err is the server refusing the password.
func refused(t *testing.T, what string, err error) {
	t.Helper()
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "28P01" {
		t.Errorf("%s: want password authentication failed (28P01), got %v", what, err)
	}
}

// checkPasswordFile returns the password in dir's password file, failing
// unless only its owner may read it.
func checkPasswordFile(t *testing.T, dir string) string {
	t.Helper()
	fi, err := os.Stat(filepath.Join(dir, PasswordFile))
	if err != nil {
		t.Fatal(err)
	}
	if perm := fi.Mode().Perm(); perm != 0o600 {
		t.Errorf("password file mode %#o, want 0600", perm)
	}
	if st := fi.Sys().(*syscall.Stat_t); int(st.Uid) != os.Geteuid() {
		t.Errorf("password file owned by uid %d, want this process's %d", st.Uid, os.Geteuid())
	}
	b, err := os.ReadFile(filepath.Join(dir, PasswordFile))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// checkLockedDown asserts what any local process may do with s: nothing
// without the password, over TCP or the Unix socket.
func checkLockedDown(t *testing.T, s *Server, password string) {
	t.Helper()
	if err := connect(s.URL("postgres")); err != nil {
		t.Fatalf("with the password: %v", err)
	}
	if u, err := url.Parse(s.URL("postgres")); err != nil || !strings.Contains(u.User.String(), ":"+password) {
		t.Errorf("the server's URL does not carry the password file's password")
	}
	refused(t, "TCP without a password", connect(withPassword(t, s.URL("postgres"), "")))
	refused(t, "TCP with a wrong password", connect(withPassword(t, s.URL("postgres"), "not-"+password)))
	if s.sockDir != "" {
		socket := fmt.Sprintf("postgres://postgres@/postgres?host=%s&port=%d&sslmode=disable", url.QueryEscape(s.sockDir), s.port)
		refused(t, "Unix socket without a password", connect(socket))
	}

	ctx := context.Background()
	conn, err := pgx.Connect(ctx, s.URL("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var rules, trusting int
	if err := conn.QueryRow(ctx, "SELECT count(*), count(*) FILTER (WHERE auth_method NOT IN ('scram-sha-256')) FROM pg_hba_file_rules").Scan(&rules, &trusting); err != nil {
		t.Fatal(err)
	}
	if rules == 0 || trusting != 0 {
		t.Errorf("pg_hba.conf: %d rules, %d without scram-sha-256", rules, trusting)
	}
}

// A new cluster lets no one in without the password, which only this
// process's OS user can read; a second Start attaches with it.
func TestNoConnectionWithoutThePassword(t *testing.T) {
	dir := dataDir(t)
	s := startServer(t, dir)
	password := checkPasswordFile(t, dir)
	if len(password) < 32 {
		t.Fatalf("password %q is short", password)
	}
	checkLockedDown(t, s, password)

	// The socket directory is private to the server's OS user.
	fi, err := os.Stat(s.sockDir)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o700 {
		t.Errorf("socket directory mode %#o, want 0700", fi.Mode().Perm())
	}

	// A CLI command while the server runs: it attaches with the password,
	// and its Stop leaves the server running.
	attached := startServer(t, dir)
	if !attached.attached || attached.Port() != s.Port() {
		t.Fatalf("second Start did not attach: attached %v, port %d", attached.attached, attached.Port())
	}
	if err := connect(attached.URL("postgres")); err != nil {
		t.Fatal(err)
	}
	attached.Stop()
	if err := connect(s.URL("postgres")); err != nil {
		t.Fatalf("the server stopped with the attached handle: %v", err)
	}

	// A password file others can read is refused.
	if err := os.Chmod(filepath.Join(dir, PasswordFile), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Start(context.Background(), Options{DataDir: dir}); err == nil || !strings.Contains(err.Error(), "readable by others") {
		t.Fatalf("Start with a world-readable password file: %v", err)
	}
}

// A data directory an older docsapi created (trust for every connection, no
// password file) keeps its data and is secured at the first start.
func TestOldTrustClusterIsSecured(t *testing.T) {
	dir := dataDir(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	binDir, err := findBinDir("")
	if err != nil {
		t.Fatal(err)
	}
	owner, err := serverUser()
	if err != nil {
		t.Fatal(err)
	}
	pgdata := filepath.Join(dir, "pgdata")
	sockDir := dataDir(t)
	for _, d := range []string{dir, pgdata, sockDir} {
		if err := prepareDir(d, owner); err != nil {
			t.Fatal(err)
		}
	}
	// What the older version ran.
	if out, err := run(ctx, owner, dir, nil, filepath.Join(binDir, "initdb"), "-D", pgdata, "-U", "postgres",
		"--auth=trust", "--encoding=UTF8", "--locale=C.UTF-8", "--no-instructions", "--no-sync"); err != nil {
		t.Fatalf("initdb: %v: %s", err, out)
	}
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	old := command(owner, dir, filepath.Join(binDir, "postgres"), "-D", pgdata, "-k", sockDir, "-p", strconv.Itoa(port),
		"-c", "listen_addresses=127.0.0.1", "-c", "fsync=off")
	if err := old.Start(); err != nil {
		t.Fatal(err)
	}
	oldURL := fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port)
	deadline := time.Now().Add(time.Minute)
	for connect(oldURL) != nil {
		if time.Now().After(deadline) {
			t.Fatal("the old-style server never accepted connections")
		}
		time.Sleep(20 * time.Millisecond)
	}
	conn, err := pgx.Connect(ctx, oldURL)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "CREATE DATABASE kept"); err != nil {
		t.Fatal(err)
	}
	_ = conn.Close(ctx)

	// A CLI command of this version while the old server runs cannot secure
	// it under the old server's feet: it says what to do.
	if _, err := Start(ctx, Options{DataDir: dir}); err == nil || !strings.Contains(err.Error(), "older docsapi") {
		t.Fatalf("Start beside a running old-style server: %v", err)
	}
	_ = old.Process.Signal(syscall.SIGINT)
	_ = old.Wait()

	s := startServer(t, dir)
	password := checkPasswordFile(t, dir)
	checkLockedDown(t, s, password)
	if err := connect(s.URL("kept")); err != nil {
		t.Fatalf("the old cluster's data: %v", err)
	}

	// The next start reads the password file rather than setting another.
	s.Stop()
	s = startServer(t, dir)
	if again := checkPasswordFile(t, dir); again != password {
		t.Fatal("a second start changed the password")
	}
	checkLockedDown(t, s, password)
}
