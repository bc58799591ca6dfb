package pgserver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// StartStandby makes a streaming replica of primary (a server started with
// Options.Replication) in opts.DataDir and starts it, returning once it
// accepts connections (a hot standby: reads only). The first time, the
// data directory is a copy of the primary taken by pg_basebackup -R, which
// also writes the standby's primary_conninfo (the primary's loopback
// address, the postgres role and its password) and standby.signal; later
// starts on the same directory start the standby it holds. It runs as the
// server's OS user, like everything pgserver runs, and its postgres role
// has the primary's password (the copy has the same roles).
//
// Settings that a standby takes at a reload, such as
// recovery_min_apply_delay, are better set with ALTER SYSTEM than in
// opts.Settings: those are on the command line, which nothing overrides.
func StartStandby(ctx context.Context, primary *Server, opts Options) (*Server, error) {
	if opts.DataDir == "" {
		return nil, errors.New("pgserver: DataDir is required")
	}
	if primary.attached {
		return nil, errors.New("pgserver: a standby needs a primary this process started")
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
	if _, err := os.Stat(filepath.Join(pgdata, "PG_VERSION")); errors.Is(err, os.ErrNotExist) {
		if err := baseBackup(ctx, primary, owner, binDir, dataDir, pgdata); err != nil {
			_ = os.RemoveAll(sockDir)
			return nil, err
		}
		if err := writePassword(pwPath, primary.password); err != nil {
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

// baseBackup copies primary's cluster into pgdata as a standby's, with
// pg_basebackup -R (streaming the WAL written meanwhile, after a fast
// checkpoint). The password goes through the environment of a process of
// the server's OS user, never its command line, which others can read.
func baseBackup(ctx context.Context, primary *Server, owner *osUser, binDir, dataDir, pgdata string) error {
	if err := prepareDir(pgdata, owner); err != nil {
		return err
	}
	bin := filepath.Join(binDir, "pg_basebackup")
	if !fileExists(bin) {
		return fmt.Errorf("pgserver: %s not found: a standby is copied with pg_basebackup", bin)
	}
	out, err := runWith(ctx, owner, dataDir, []string{"PGPASSWORD=" + primary.password}, nil, bin,
		"-D", pgdata, "-R", "-X", "stream", "-c", "fast", "--no-sync",
		"-h", "127.0.0.1", "-p", strconv.Itoa(primary.port), "-U", "postgres")
	if err != nil {
		return fmt.Errorf("pgserver: pg_basebackup: %w: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}

// Kill ends the server as a crash of its machine would: SIGKILL to the
// postmaster and every process it started, no shutdown, no restart even
// when supervised (as after Stop). Tests use it to take a server away
// under its clients.
func (s *Server) Kill() {
	if s.attached {
		return
	}
	s.mu.Lock()
	s.stopping = true
	s.down = errors.New("the PostgreSQL server was killed")
	p := s.proc
	s.mu.Unlock()
	if p == nil {
		return
	}
	signalAll(p.cmd.Process.Pid, syscall.SIGKILL)
	<-p.exited
}

// Pause stops every process of the server (SIGSTOP) until Resume: its
// connections stay open and answer nothing, as a server whose machine or
// network went silent. Tests use it.
func (s *Server) Pause() { s.signal(syscall.SIGSTOP) }

// Resume lets a paused server go on (SIGCONT).
func (s *Server) Resume() { s.signal(syscall.SIGCONT) }

func (s *Server) signal(sig syscall.Signal) {
	if p := s.current(); p != nil && !s.attached {
		signalAll(p.cmd.Process.Pid, sig)
	}
}

// signalAll sends sig to the postmaster pid and to every process it
// started (the backends, in sessions of their own: PostgreSQL puts each
// child in its own process group, so the postmaster's group is not theirs).
func signalAll(pid int, sig syscall.Signal) {
	children := childrenOf(pid) // before a killed postmaster orphans them
	_ = syscall.Kill(pid, sig)
	for _, child := range children {
		_ = syscall.Kill(child, sig)
	}
}

// childrenOf lists the processes whose parent is pid (from /proc).
func childrenOf(pid int) []int {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var out []int
	for _, path := range stats {
		raw, err := os.ReadFile(path)
		if err != nil {
			continue // ended meanwhile
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses.
		end := strings.LastIndexByte(string(raw), ')')
		fields := strings.Fields(string(raw[end+1:]))
		if end < 0 || len(fields) < 2 {
			continue
		}
		if ppid, err := strconv.Atoi(fields[1]); err == nil && ppid == pid {
			if child, err := strconv.Atoi(filepath.Base(filepath.Dir(path))); err == nil {
				out = append(out, child)
			}
		}
	}
	return out
}
