// Package pgserver runs a PostgreSQL server from the binaries installed on the
// machine, in a data directory it owns. It is what makes "one command starts
// the server" true on a machine with no database configured, and it is the
// cluster the tests run against.
//
// PostgreSQL refuses to run as root (initdb and postgres both check), so when
// this process is root the server processes run as an unprivileged OS user
// ("postgres" if it exists, otherwise "nobody"), and the directories they use
// are handed to that user.
package pgserver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// Options configure a server. DataDir is required; the zero value of the rest
// is a sensible default.
type Options struct {
	// DataDir holds the cluster ("pgdata") and the Unix socket ("run").
	// It is created if missing; initdb runs only when the cluster is missing.
	DataDir string
	// Port is the TCP port on 127.0.0.1. Zero picks a free one.
	Port int
	// BinDir holds initdb and postgres. Empty means: search the usual places.
	BinDir string
	// Durable keeps fsync on. Tests turn it off: they never need the data after
	// a crash and fsync dominates their run time.
	Durable bool
	// Settings are extra "-c name=value" server settings.
	Settings map[string]string
	// Log receives the server's output. Nil discards it.
	Log *os.File
}

// Server is a running PostgreSQL server.
type Server struct {
	opts Options
	// attached is set when another process runs the server on this data
	// directory (docsapi serve, while a CLI command runs): Stop leaves it running.
	attached bool
	cmd      *exec.Cmd
	sockDir  string
	port     int
	exited   chan struct{}
	waitErr  error
	stop     sync.Once
}

// Start initialises the cluster if needed and starts the server, returning
// once it accepts connections.
func Start(ctx context.Context, opts Options) (*Server, error) {
	if opts.DataDir == "" {
		return nil, errors.New("pgserver: DataDir is required")
	}
	binDir, err := findBinDir(opts.BinDir)
	if err != nil {
		return nil, err
	}
	dataDir, err := filepath.Abs(opts.DataDir)
	if err != nil {
		return nil, err
	}
	owner, err := serverUser()
	if err != nil {
		return nil, err
	}
	pgdata := filepath.Join(dataDir, "pgdata")
	// The socket path must stay under ~107 bytes, so it lives in a short
	// directory of its own rather than under a possibly deep data dir.
	sockDir, err := os.MkdirTemp("", "docsapi-pg-")
	if err != nil {
		return nil, err
	}
	for _, dir := range []string{dataDir, sockDir} {
		if err := prepareDir(dir, owner); err != nil {
			return nil, err
		}
	}
	if _, err := os.Stat(filepath.Join(pgdata, "PG_VERSION")); errors.Is(err, os.ErrNotExist) {
		if err := prepareDir(pgdata, owner); err != nil {
			return nil, err
		}
		out, err := run(ctx, owner, dataDir, filepath.Join(binDir, "initdb"),
			"-D", pgdata, "-U", "postgres", "--auth=trust", "--encoding=UTF8",
			"--locale=C.UTF-8", "--no-instructions", "--no-sync")
		if err != nil {
			return nil, fmt.Errorf("pgserver: initdb: %w: %s", err, strings.TrimSpace(string(out)))
		}
	}
	if s := attach(ctx, pgdata); s != nil {
		return s, nil
	}
	port := opts.Port
	if port == 0 {
		if port, err = freePort(); err != nil {
			return nil, err
		}
	}
	args := []string{"-D", pgdata, "-k", sockDir, "-p", strconv.Itoa(port),
		"-c", "listen_addresses=127.0.0.1"}
	settings := map[string]string{"max_connections": "200"}
	if !opts.Durable {
		settings["fsync"] = "off"
		settings["synchronous_commit"] = "off"
		settings["full_page_writes"] = "off"
	}
	for k, v := range opts.Settings {
		settings[k] = v
	}
	keys := make([]string, 0, len(settings))
	for k := range settings {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		args = append(args, "-c", k+"="+settings[k])
	}
	cmd := command(owner, dataDir, filepath.Join(binDir, "postgres"), args...)
	if opts.Log != nil {
		cmd.Stdout, cmd.Stderr = opts.Log, opts.Log
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("pgserver: start postgres: %w", err)
	}
	s := &Server{opts: opts, cmd: cmd, sockDir: sockDir, port: port, exited: make(chan struct{})}
	go func() { s.waitErr = cmd.Wait(); close(s.exited) }()
	if err := s.waitReady(ctx); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

// waitReady polls until a connection succeeds, failing fast when the server
// process exits (a bad socket path or a port in use ends it at once).
func (s *Server) waitReady(ctx context.Context) error {
	deadline := time.Now().Add(60 * time.Second)
	for {
		conn, err := pgx.Connect(ctx, s.URL("postgres"))
		if err == nil {
			return conn.Close(ctx)
		}
		select {
		case <-s.exited:
			return fmt.Errorf("pgserver: postgres exited during start: %v (see the server log)", s.waitErr)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("pgserver: not ready after 60s: %w", err)
		}
	}
}

// URL is a connection string for database dbname over TCP on loopback.
func (s *Server) URL(dbname string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", s.port, dbname)
}

// Port is the TCP port the server listens on.
func (s *Server) Port() int { return s.port }

// Stop shuts the server down (fast shutdown: open sessions are ended).
func (s *Server) Stop() {
	s.stop.Do(func() {
		if s.attached {
			return
		}
		if s.cmd.Process != nil {
			_ = s.cmd.Process.Signal(syscall.SIGINT)
			select {
			case <-s.exited:
			case <-time.After(30 * time.Second):
				_ = s.cmd.Process.Kill()
				<-s.exited
			}
		}
		_ = os.RemoveAll(s.sockDir)
	})
}

// attach returns the server already running on pgdata, if any: postgres
// records its pid and port in postmaster.pid.
func attach(ctx context.Context, pgdata string) *Server {
	b, err := os.ReadFile(filepath.Join(pgdata, "postmaster.pid"))
	if err != nil {
		return nil
	}
	lines := strings.Split(string(b), "\n")
	if len(lines) < 4 {
		return nil
	}
	pid, err1 := strconv.Atoi(strings.TrimSpace(lines[0]))
	port, err2 := strconv.Atoi(strings.TrimSpace(lines[3]))
	if err1 != nil || err2 != nil || syscall.Kill(pid, 0) != nil {
		return nil
	}
	s := &Server{attached: true, port: port, exited: make(chan struct{})}
	conn, err := pgx.Connect(ctx, s.URL("postgres"))
	if err != nil {
		return nil
	}
	_ = conn.Close(ctx)
	return s
}

// osUser is the account the server processes run as; nil means "this process's".
type osUser struct{ uid, gid uint32 }

func serverUser() (*osUser, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, _ := strconv.ParseUint(u.Uid, 10, 32)
		gid, _ := strconv.ParseUint(u.Gid, 10, 32)
		return &osUser{uid: uint32(uid), gid: uint32(gid)}, nil
	}
	return nil, errors.New("pgserver: running as root and neither a postgres nor a nobody user exists")
}

// prepareDir creates dir for the server user with mode 0700 (MkdirAll's mode
// is masked by the umask, hence the explicit chmod). The server user must be
// able to traverse every parent; postgres otherwise fails with a misleading
// "permission denied" on its own binary, so this says which directory is at
// fault instead of changing permissions the operator did not ask to change.
func prepareDir(dir string, owner *osUser) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if owner == nil {
		return os.Chmod(dir, 0o700)
	}
	if err := os.Chown(dir, int(owner.uid), int(owner.gid)); err != nil {
		return err
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return err
	}
	for p := filepath.Dir(dir); p != "/" && p != "."; p = filepath.Dir(p) {
		fi, err := os.Stat(p)
		if err != nil {
			return err
		}
		if !traversable(fi, owner) {
			return fmt.Errorf("pgserver: the postgres user cannot reach %s because %s is not traversable by others: choose a data directory elsewhere or run chmod o+x %s", dir, p, p)
		}
	}
	return nil
}

// traversable reports whether owner may enter the directory fi describes.
func traversable(fi os.FileInfo, owner *osUser) bool {
	perm := fi.Mode().Perm()
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		if st.Uid == owner.uid {
			return perm&0o100 != 0
		}
		if st.Gid == owner.gid {
			return perm&0o010 != 0
		}
	}
	return perm&0o001 != 0
}

func command(owner *osUser, dir, bin string, args ...string) *exec.Cmd {
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = []string{"HOME=" + dir, "LANG=C.UTF-8", "LC_ALL=C.UTF-8", "PATH=/usr/bin:/bin"}
	// Setpgid keeps a terminal's Ctrl-C from reaching postgres directly: the
	// parent decides how it stops.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	if owner != nil {
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: owner.uid, Gid: owner.gid}
	}
	return cmd
}

func run(ctx context.Context, owner *osUser, dir, bin string, args ...string) ([]byte, error) {
	cmd := command(owner, dir, bin, args...)
	cmd.SysProcAttr.Pdeathsig = 0
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-ctx.Done():
			if cmd.Process != nil {
				_ = cmd.Process.Kill()
			}
		case <-done:
		}
	}()
	return cmd.CombinedOutput()
}

// findBinDir locates initdb and postgres: the given dir, $PG_BINDIR,
// pg_config --bindir, then the newest /usr/lib/postgresql/*/bin.
func findBinDir(dir string) (string, error) {
	candidates := []string{dir, os.Getenv("PG_BINDIR")}
	if out, err := exec.Command("pg_config", "--bindir").Output(); err == nil {
		candidates = append(candidates, strings.TrimSpace(string(out)))
	}
	versions, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(versions, func(i, j int) bool { return pgMajor(versions[i]) > pgMajor(versions[j]) })
	candidates = append(candidates, versions...)
	candidates = append(candidates, "/usr/local/pgsql/bin", "/usr/pgsql/bin")
	for _, c := range candidates {
		if c == "" {
			continue
		}
		if fileExists(filepath.Join(c, "initdb")) && fileExists(filepath.Join(c, "postgres")) {
			return c, nil
		}
	}
	return "", errors.New("pgserver: PostgreSQL server binaries (initdb, postgres) not found; install them (Debian: apt-get install postgresql) or set PG_BINDIR, or set DATABASE_URL to use an existing server")
}

func pgMajor(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
}

func fileExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir()
}
