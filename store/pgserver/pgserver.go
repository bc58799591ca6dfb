// Package pgserver runs a PostgreSQL server from the binaries installed on the
// machine, in a data directory it owns. It is what makes "one command starts
// the server" true on a machine with no database configured, and it is the
// cluster the tests run against.
//
// PostgreSQL refuses to run as root (initdb and postgres both check), so when
// this process is root the server processes run as an unprivileged OS user
// ("postgres" if it exists, otherwise "nobody"), and the directories they use
// are handed to that user.
//
// SECURITY: the server listens on loopback and on a Unix socket, and any
// local process can reach loopback. So no connection is trusted: the
// "postgres" role has a random password, set at initdb (or, for a cluster
// an older version initialised with trust, at the first start of this one),
// every connection, TCP or socket, must prove it with SCRAM-SHA-256, and the
// password is kept in PasswordFile, readable only by the OS user that runs
// docsapi. The socket directory is private to the server's OS user besides.
package pgserver

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
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
	"github.com/jackc/pgx/v5/pgconn"
)

// PasswordFile, in the data directory, holds the password of the "postgres"
// role, mode 0600, owned by the OS user that runs docsapi (root's when root:
// the server's OS user has no need of it). Clients of the embedded server
// (this process's pool, the CLI commands attached to a running server, the
// tests) read it from there, through Start.
const PasswordFile = "postgres-password"

// Options configure a server. DataDir is required; the zero value of the rest
// is a sensible default.
type Options struct {
	// DataDir holds the cluster ("pgdata") and its password (PasswordFile).
	// It is created if missing; initdb runs only when the cluster is missing.
	DataDir string
	// Port is the TCP port on 127.0.0.1. Zero picks a free one.
	Port int
	// BinDir holds initdb and postgres. Empty means: search the usual places.
	BinDir string
	// Durable runs the server with fsync, synchronous_commit and
	// full_page_writes on, pinned on its command line (see durability): no
	// write it acknowledged is lost to a crash. Tests turn them off: they
	// never need the data after a crash and fsync dominates their run time.
	Durable bool
	// Settings are extra "-c name=value" server settings.
	Settings map[string]string
	// Log receives the server's output. Nil discards it.
	Log *os.File
	// Password is the postgres role's password when the cluster is
	// initialised (empty: a random one). The nodes of a Citus cluster share
	// one, which they present to each other (store/pgtest's Citus cluster).
	Password string
	// Supervise, when set, restarts the server whenever its process exits
	// without Stop asking it to (see Supervision). Nil leaves a dead
	// server dead, as the tests want.
	Supervise *Supervision
	// Replication lets the postgres role open streaming replication
	// connections from loopback (pg_hba.conf's "replication" lines, which
	// "all" does not cover), with the same password: what StartStandby's
	// pg_basebackup and the standby it starts need of their primary.
	Replication bool
}

// Supervision restarts a server whose process died (a crash, the kernel's
// OOM killer, kill -9): on the same data directory, port and password, so
// the clients' connection strings stay right and their pools reconnect;
// PostgreSQL replays its WAL at the start, and every commit it acknowledged
// (synchronous_commit, fsync: Options.Durable) is there again. A restart
// is PostgreSQL alone, never initdb: a data directory gone missing is an
// error, not a new empty cluster.
//
// Only the postmaster's death is the supervisor's business: when one of
// its children dies, PostgreSQL restarts them itself.
type Supervision struct {
	// Attempts is how many restarts in a row are tried before the
	// supervisor gives up (0: the default, 5; negative: none, the first
	// death is the end). A restart that fails, and one whose server dies
	// again before StableAfter, count; one that stays up for StableAfter
	// starts the count afresh.
	Attempts int
	// Backoff is the pause before the first restart, doubled before each
	// next one up to MaxBackoff (default 250ms; MaxBackoff 4s).
	Backoff, MaxBackoff time.Duration
	// StableAfter is how long a restarted server must stay up for its
	// restart to be forgotten (default one minute).
	StableAfter time.Duration
	// Log receives what the supervisor sees and does (default slog.Default()).
	Log *slog.Logger
}

func (sv Supervision) withDefaults() Supervision {
	switch {
	case sv.Attempts == 0:
		sv.Attempts = 5
	case sv.Attempts < 0:
		sv.Attempts = 0
	}
	if sv.Backoff <= 0 {
		sv.Backoff = 250 * time.Millisecond
	}
	if sv.MaxBackoff <= 0 {
		sv.MaxBackoff = 4 * time.Second
	}
	if sv.StableAfter <= 0 {
		sv.StableAfter = time.Minute
	}
	if sv.Log == nil {
		sv.Log = slog.Default()
	}
	return sv
}

// Server is a running PostgreSQL server.
type Server struct {
	opts Options
	// attached is set when another process runs the server on this data
	// directory (docsapi serve, while a CLI command runs): Stop leaves it
	// running, and there is nothing to supervise.
	attached bool
	// bin and args start the postgres process, the same every time.
	bin, dir string
	args     []string
	owner    *osUser
	sockDir  string
	port     int
	password string

	// ctx ends when Stop is called: a start under way gives up.
	ctx    context.Context
	cancel context.CancelFunc

	mu sync.Mutex
	// proc is the current postgres process.
	proc *process
	// down says why the server is not serving, nil while it is.
	down error
	// stopping is set by Stop: an exit is expected, not restarted.
	stopping bool
	// failure is why the supervisor gave up; failed is closed then.
	failure error
	failed  chan struct{}
	// supervised is closed when the supervisor returns (nil: none runs).
	supervised chan struct{}

	stop sync.Once
}

// process is one run of postgres.
type process struct {
	cmd     *exec.Cmd
	started time.Time
	exited  chan struct{}
	// err is Wait's, set before exited is closed.
	err error
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
	pwPath := filepath.Join(dataDir, PasswordFile)
	// The socket path must stay under ~107 bytes, so it lives in a short
	// directory of its own rather than under a possibly deep data dir.
	// SECURITY: prepareDir makes it 0700 and the server user's: local
	// processes of other users cannot even reach the socket.
	sockDir, err := os.MkdirTemp("", "docsapi-pg-")
	if err != nil {
		return nil, err
	}
	for _, dir := range []string{dataDir, sockDir} {
		if err := prepareDir(dir, owner); err != nil {
			_ = os.RemoveAll(sockDir)
			return nil, err
		}
	}
	s, err := start(ctx, opts, binDir, dataDir, pgdata, pwPath, sockDir, owner)
	if s == nil || s.attached {
		_ = os.RemoveAll(sockDir)
	}
	return s, err
}

func start(ctx context.Context, opts Options, binDir, dataDir, pgdata, pwPath, sockDir string, owner *osUser) (*Server, error) {
	if _, err := os.Stat(filepath.Join(pgdata, "PG_VERSION")); errors.Is(err, os.ErrNotExist) {
		if err := prepareDir(pgdata, owner); err != nil {
			return nil, err
		}
		password, err := opts.Password, error(nil)
		if password == "" {
			password, err = newPassword()
		}
		if err != nil {
			return nil, err
		}
		if err := initdb(ctx, owner, binDir, dataDir, pgdata, password); err != nil {
			return nil, err
		}
		// Written once the cluster has the password: a failure in between
		// leaves a cluster without a password file, which the next start
		// gives a new password (below), never a file that does not open it.
		if err := writePassword(pwPath, password); err != nil {
			return nil, err
		}
	}
	if s, err := attach(ctx, pgdata, pwPath); s != nil || err != nil {
		return s, err
	}
	password, err := readPassword(pwPath)
	if errors.Is(err, fs.ErrNotExist) {
		// A cluster an older docsapi initialised with trust authentication,
		// or whose password file was lost: give the role a new password
		// before the server accepts any connection.
		if password, err = newPassword(); err != nil {
			return nil, err
		}
		if err := setPassword(ctx, owner, binDir, dataDir, pgdata, password); err != nil {
			return nil, err
		}
		err = writePassword(pwPath, password)
	}
	if err != nil {
		return nil, err
	}
	// Every start, not only initdb, writes the access rules: the clusters
	// of older versions trusted every local connection.
	if err := writeHBA(pgdata, owner, opts.Replication); err != nil {
		return nil, err
	}
	port := opts.Port
	if port == 0 {
		if port, err = freePort(); err != nil {
			return nil, err
		}
	}
	args := []string{"-D", pgdata, "-k", sockDir, "-p", strconv.Itoa(port),
		"-c", "listen_addresses=127.0.0.1"}
	settings, err := serverSettings(opts)
	if err != nil {
		return nil, err
	}
	keys := make([]string, 0, len(settings))
	for k := range settings {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		args = append(args, "-c", k+"="+settings[k])
	}
	runCtx, cancel := context.WithCancel(context.Background())
	s := &Server{opts: opts, bin: filepath.Join(binDir, "postgres"), dir: dataDir, args: args, owner: owner,
		sockDir: sockDir, port: port, password: password, ctx: runCtx, cancel: cancel, failed: make(chan struct{})}
	if err := s.launch(ctx); err != nil {
		s.Stop()
		return nil, err
	}
	if opts.Supervise != nil {
		s.supervised = make(chan struct{})
		go s.supervise(opts.Supervise.withDefaults())
	}
	return s, nil
}

// durability are the settings that make an acknowledged commit survive a
// crash: the server's defaults, which Durable pins on the command line, where
// neither postgresql.conf nor ALTER SYSTEM can turn them off.
var durability = map[string]string{"fsync": "on", "synchronous_commit": "on", "full_page_writes": "on"}

// serverSettings are the -c settings of the server opts describe.
func serverSettings(opts Options) (map[string]string, error) {
	settings := map[string]string{"max_connections": "200"}
	for k, v := range durability {
		if opts.Durable {
			settings[k] = v
		} else {
			// Tests: they never need the data after a crash of the
			// machine, and fsync dominates their run time.
			settings[k] = "off"
		}
	}
	for k, v := range opts.Settings {
		if want, ok := durability[k]; ok && opts.Durable && v != want {
			return nil, fmt.Errorf("pgserver: %s=%s would lose acknowledged writes in a crash; a durable server keeps %s=%s", k, v, k, want)
		}
		settings[k] = v
	}
	return settings, nil
}

// launch starts a postgres process, returning once it accepts connections.
// It fails when the process exits first, and when Stop is called meanwhile.
func (s *Server) launch(ctx context.Context) error {
	cmd := command(s.owner, s.dir, s.bin, s.args...)
	if s.opts.Log != nil {
		cmd.Stdout, cmd.Stderr = s.opts.Log, s.opts.Log
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("pgserver: start postgres: %w", err)
	}
	p := &process{cmd: cmd, started: time.Now(), exited: make(chan struct{})}
	go func() {
		err := cmd.Wait()
		s.mu.Lock()
		p.err = err
		if s.proc == p && !s.stopping {
			s.down = fmt.Errorf("the embedded PostgreSQL (pid %d) exited: %s", cmd.Process.Pid, exitStatus(p))
		}
		s.mu.Unlock()
		close(p.exited)
	}()
	s.mu.Lock()
	if s.stopping {
		s.mu.Unlock()
		_ = cmd.Process.Kill()
		<-p.exited
		return errors.New("pgserver: stopped")
	}
	s.proc = p
	s.down = errors.New("the embedded PostgreSQL is starting")
	s.mu.Unlock()

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stopWatch := context.AfterFunc(s.ctx, cancel)
	defer stopWatch()
	if err := waitReady(ctx, s.URL("postgres"), p); err != nil {
		// Not ready in time, or Stop was called: end it as a crashed
		// server ends (SIGQUIT: immediate shutdown of every backend).
		_ = cmd.Process.Signal(syscall.SIGQUIT)
		select {
		case <-p.exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-p.exited
		}
		return err
	}
	s.mu.Lock()
	if s.proc == p && !s.stopping {
		s.down = nil
	}
	s.mu.Unlock()
	return nil
}

// waitReady polls until a connection to url succeeds, failing fast when the
// server process p exits (a bad socket path or a port in use ends it at once).
func waitReady(ctx context.Context, url string, p *process) error {
	deadline := time.Now().Add(60 * time.Second)
	for {
		conn, err := pgx.Connect(ctx, url)
		if err == nil {
			return conn.Close(ctx)
		}
		// The server answered with an error other than "starting up": a
		// password that does not open the cluster, say. Waiting won't help.
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code != "57P03" {
			return fmt.Errorf("pgserver: connect: %w", err)
		}
		select {
		case <-p.exited:
			return fmt.Errorf("pgserver: postgres exited during start: %s (see the server log)", exitStatus(p))
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("pgserver: not ready after 60s: %w", err)
		}
	}
}

// exitStatus says how p ended: its exit status, or the signal that killed
// it. Call it once p.exited is closed.
func exitStatus(p *process) string {
	st := p.cmd.ProcessState
	if st == nil {
		return fmt.Sprint(p.err)
	}
	ws, ok := st.Sys().(syscall.WaitStatus)
	switch {
	case ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL:
		return "killed by signal 9 (SIGKILL: the kernel's out-of-memory killer, or kill -9)"
	case ok && ws.Signaled():
		return fmt.Sprintf("killed by signal %d (%v)", int(ws.Signal()), ws.Signal())
	case ok && ws.Exited():
		return fmt.Sprintf("exit status %d", ws.ExitStatus())
	}
	return st.String()
}

// supervise restarts the server each time its process exits, until Stop,
// or until sv.Attempts restarts in a row have failed: then Health and Err
// say why, and Failed is closed.
func (s *Server) supervise(sv Supervision) {
	defer close(s.supervised)
	log := sv.Log.With("dataDir", s.dir)
	failures := 0
	for {
		p := s.current()
		select {
		case <-p.exited:
		case <-s.ctx.Done():
			return
		}
		if s.ctx.Err() != nil {
			return
		}
		up := time.Since(p.started)
		if up >= sv.StableAfter {
			failures = 0
		}
		status := exitStatus(p)
		log.Error("the embedded PostgreSQL exited", "pid", p.cmd.Process.Pid, "status", status,
			"up", up.Round(time.Millisecond).String(), "log", s.logName())
		var err error
		for {
			if failures == sv.Attempts {
				why := fmt.Errorf("pgserver: the embedded PostgreSQL exited (%s), again, after %d restarts in a row", status, sv.Attempts)
				if sv.Attempts == 0 {
					why = fmt.Errorf("pgserver: the embedded PostgreSQL exited (%s); restarts are off", status)
				} else if err != nil {
					why = fmt.Errorf("pgserver: the embedded PostgreSQL exited (%s) and could not be restarted (%d restarts in a row; the last: %w)", status, sv.Attempts, err)
				}
				s.giveUp(why, log)
				return
			}
			pause := sv.Backoff
			for i := 0; i < failures && pause < sv.MaxBackoff; i++ {
				pause *= 2
			}
			pause = min(pause, sv.MaxBackoff)
			failures++
			s.setDown(fmt.Errorf("the embedded PostgreSQL exited (%s); restart %d of %d in %s", status, failures, sv.Attempts, pause))
			select {
			case <-time.After(pause):
			case <-s.ctx.Done():
				return
			}
			if err = s.launch(s.ctx); err == nil {
				log.Info("the embedded PostgreSQL is back", "pid", s.PID(), "restart", failures, "of", sv.Attempts)
				break
			}
			if s.ctx.Err() != nil {
				return
			}
			log.Error("restarting the embedded PostgreSQL failed", "restart", failures, "of", sv.Attempts, "err", err)
		}
	}
}

// giveUp records why the supervisor stopped restarting the server.
func (s *Server) giveUp(err error, log *slog.Logger) {
	log.Error("giving up on the embedded PostgreSQL", "err", err)
	s.mu.Lock()
	s.failure, s.down = err, err
	s.mu.Unlock()
	close(s.failed)
}

func (s *Server) current() *process {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.proc
}

func (s *Server) setDown(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.stopping {
		s.down = err
	}
}

// logName is the server log's file name, for messages that send people there.
func (s *Server) logName() string {
	if s.opts.Log == nil {
		return "(discarded)"
	}
	return s.opts.Log.Name()
}

// Health is nil while the server accepts connections, or why it does not:
// its process exited (and is being restarted, when supervised), the
// supervisor gave up, or Stop was called. An attached server is another
// process's, whose health this one does not watch: nil.
func (s *Server) Health() error {
	if s.attached {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.down
}

// Failed is closed when the supervisor gave up restarting the server (Err
// says why): what was built on it cannot go on. It is never closed for a
// server started without Options.Supervise, nor after Stop.
func (s *Server) Failed() <-chan struct{} { return s.failed }

// Err is why the supervisor gave up, once Failed is closed; nil before.
func (s *Server) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.failure
}

// Attached reports whether another process runs the server (Start joined
// it): this one neither stops nor supervises it.
func (s *Server) Attached() bool { return s.attached }

// PID is the process id of the current postgres (the postmaster); 0 when
// attached.
func (s *Server) PID() int {
	if p := s.current(); p != nil {
		return p.cmd.Process.Pid
	}
	return 0
}

// URL is a connection string for database dbname over TCP on loopback, as
// the superuser "postgres", with its password.
func (s *Server) URL(dbname string) string {
	return fmt.Sprintf("postgres://postgres:%s@127.0.0.1:%d/%s?sslmode=disable", s.password, s.port, dbname)
}

// Port is the TCP port the server listens on.
func (s *Server) Port() int { return s.port }

// Stop shuts the server down (fast shutdown: open sessions are ended). An
// exit it causes is not restarted.
func (s *Server) Stop() {
	s.stop.Do(func() {
		if s.attached {
			return
		}
		s.mu.Lock()
		s.stopping = true
		s.down = errors.New("the embedded PostgreSQL was stopped")
		p := s.proc
		s.mu.Unlock()
		s.cancel()
		if p != nil {
			_ = p.cmd.Process.Signal(syscall.SIGINT)
			select {
			case <-p.exited:
			case <-time.After(30 * time.Second):
				_ = p.cmd.Process.Kill()
				<-p.exited
			}
		}
		if s.supervised != nil {
			<-s.supervised
		}
		_ = os.RemoveAll(s.sockDir)
	})
}

// Runs tells whether a postgres process runs on dataDir (Options.DataDir),
// by the pid it recorded there.
func Runs(dataDir string) bool {
	_, _, ok := postmaster(filepath.Join(dataDir, "pgdata"))
	return ok
}

// postmaster reads the pid and port postgres recorded in pgdata's
// postmaster.pid, when the process it names is alive.
func postmaster(pgdata string) (pid, port int, ok bool) {
	b, err := os.ReadFile(filepath.Join(pgdata, "postmaster.pid"))
	if err != nil {
		return 0, 0, false
	}
	lines := strings.Split(string(b), "\n")
	if len(lines) < 4 {
		return 0, 0, false
	}
	pid, err1 := strconv.Atoi(strings.TrimSpace(lines[0]))
	port, err2 := strconv.Atoi(strings.TrimSpace(lines[3]))
	if err1 != nil || err2 != nil || syscall.Kill(pid, 0) != nil {
		return 0, 0, false
	}
	return pid, port, true
}

// attach returns the server already running on pgdata, if any: postgres
// records its pid and port in postmaster.pid. It fails when a server runs
// there but will not let us in, rather than let Start try to run a second one.
func attach(ctx context.Context, pgdata, pwPath string) (*Server, error) {
	pid, port, ok := postmaster(pgdata)
	if !ok {
		return nil, nil
	}
	password, err := readPassword(pwPath)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("pgserver: the PostgreSQL server running on %s (pid %d) has no password file: an older docsapi started it; stop that docsapi, then start this one, which secures the cluster", pgdata, pid)
	}
	if err != nil {
		return nil, err
	}
	s := &Server{attached: true, port: port, password: password, failed: make(chan struct{})}
	conn, err := pgx.Connect(ctx, s.URL("postgres"))
	if err != nil {
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) {
			return nil, fmt.Errorf("pgserver: the PostgreSQL server running on %s (pid %d) refused us: %w", pgdata, pid, err)
		}
		// Nothing answers on that port: a stale pid file whose pid was
		// reused. Starting a server deals with the stale file.
		return nil, nil
	}
	_ = conn.Close(ctx)
	return s, nil
}

// initdb creates the cluster with password as the superuser's password and
// no trust anywhere, even before the first start rewrites pg_hba.conf.
func initdb(ctx context.Context, owner *osUser, binDir, dataDir, pgdata, password string) error {
	// initdb runs as the server's OS user, who cannot read PasswordFile
	// (root's when root): it gets a copy of its own, removed at once.
	pwfile, err := writeTemp(dataDir, ".initdb-password-*", password+"\n", owner)
	if err != nil {
		return err
	}
	defer os.Remove(pwfile)
	out, err := run(ctx, owner, dataDir, nil, filepath.Join(binDir, "initdb"),
		"-D", pgdata, "-U", "postgres", "--auth-local=scram-sha-256", "--auth-host=scram-sha-256",
		"--pwfile="+pwfile, "--encoding=UTF8", "--locale=C.UTF-8", "--no-instructions", "--no-sync")
	if err != nil {
		return fmt.Errorf("pgserver: initdb: %w: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}

// setPassword gives the superuser a new password with the server stopped, in
// single-user mode: no connection is ever let in without one to do it, and
// the password goes through stdin, not the command line others can read.
func setPassword(ctx context.Context, owner *osUser, binDir, dataDir, pgdata, password string) error {
	stmt := "ALTER ROLE postgres WITH PASSWORD '" + strings.ReplaceAll(password, "'", "''") + "';\n"
	out, err := run(ctx, owner, dataDir, strings.NewReader(stmt), filepath.Join(binDir, "postgres"),
		"--single", "-D", pgdata, "-c", "password_encryption=scram-sha-256", "-c", "log_min_error_statement=panic", "postgres")
	// Single-user mode reports a failed statement on its output and still
	// exits 0.
	text := strings.ReplaceAll(string(out), password, "********")
	if err != nil || strings.Contains(text, "ERROR:") || strings.Contains(text, "FATAL:") {
		return fmt.Errorf("pgserver: set the password of the postgres role: %v: %s", err, strings.TrimSpace(text))
	}
	return nil
}

// hbaConf is the cluster's whole pg_hba.conf.
const hbaConf = `# Written by docsapi (store/pgserver) at every start of its embedded server:
# changes here are lost. The password of the postgres role is in the data
# directory's ` + PasswordFile + `.
local all all               scram-sha-256
host  all all 127.0.0.1/32  scram-sha-256
host  all all ::1/128       scram-sha-256
`

// hbaReplication are the lines of a server of Options.Replication.
const hbaReplication = `host  replication postgres 127.0.0.1/32 scram-sha-256
host  replication postgres ::1/128      scram-sha-256
`

// writeHBA writes hbaConf (with hbaReplication when replication is allowed)
// as the cluster's pg_hba.conf, for the server's OS user to read.
func writeHBA(pgdata string, owner *osUser, replication bool) error {
	path := filepath.Join(pgdata, "pg_hba.conf")
	conf := hbaConf
	if replication {
		conf += hbaReplication
	}
	tmp, err := writeTemp(pgdata, ".pg_hba.conf-*", conf, owner)
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	return nil
}

// newPassword is 32 random bytes in hex: nothing to escape in a URL or SQL.
func newPassword() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// writePassword replaces PasswordFile atomically, mode 0600, owned by this
// process's user.
func writePassword(path, password string) error {
	tmp, err := writeTemp(filepath.Dir(path), "."+PasswordFile+"-*", password+"\n", nil)
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	return nil
}

// readPassword reads PasswordFile.
func readPassword(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", err
	}
	// SECURITY: the password makes anyone a superuser of the cluster, who
	// can run programs as the server's OS user (COPY ... TO PROGRAM). A file
	// others can read has leaked it: refuse it, as ssh refuses such a key.
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return "", fmt.Errorf("pgserver: %s is readable by others (mode %#o): run chmod 600 on it; if others could read it, delete it instead and docsapi sets a new password at its next start", path, perm)
	}
	b, err := io.ReadAll(io.LimitReader(f, 1024))
	if err != nil {
		return "", err
	}
	password := strings.TrimSpace(string(b))
	if password == "" {
		return "", fmt.Errorf("pgserver: %s is empty", path)
	}
	return password, nil
}

// writeTemp writes content to a new file in dir (mode 0600) and returns its
// path; the file belongs to owner when owner is not nil.
func writeTemp(dir, pattern, content string, owner *osUser) (string, error) {
	f, err := os.CreateTemp(dir, pattern) // mode 0600
	if err != nil {
		return "", err
	}
	path := f.Name()
	_, err = f.WriteString(content)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && owner != nil {
		err = os.Chown(path, int(owner.uid), int(owner.gid))
	}
	if err != nil {
		_ = os.Remove(path)
		return "", err
	}
	return path, nil
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

func run(ctx context.Context, owner *osUser, dir string, stdin io.Reader, bin string, args ...string) ([]byte, error) {
	return runWith(ctx, owner, dir, nil, stdin, bin, args...)
}

// runWith is run with env added to the command's environment.
func runWith(ctx context.Context, owner *osUser, dir string, env []string, stdin io.Reader, bin string, args ...string) ([]byte, error) {
	cmd := command(owner, dir, bin, args...)
	cmd.Env = append(cmd.Env, env...)
	cmd.Stdin = stdin
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
