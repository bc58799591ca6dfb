package pgtest

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/docsapi/docsapi/store"
	"github.com/docsapi/docsapi/store/pgserver"
)

// Replicated is a primary with a streaming replica of its own, both on
// loopback, for tests of reads on replicas: the primary is a Cluster (a
// server of the test's own) that allows replication, the standby a copy
// of it made by pg_basebackup -R (pgserver.StartStandby). Commits on the
// primary wait for their WAL to be written (synchronous_commit on, fsync
// still off), so the standby streams them at once, unless delayed
// (SetApplyDelay). Both stop when the test ends.
type Replicated struct {
	*Cluster
	Standby    *pgserver.Server
	standbyDir string
}

// NewReplicated starts a primary and its standby (a few seconds: initdb,
// a base backup, two starts).
func NewReplicated(t testing.TB) *Replicated {
	t.Helper()
	primary := NewCluster(t, pgserver.Options{Replication: true, Settings: map[string]string{"synchronous_commit": "on"}})
	r := &Replicated{Cluster: primary, standbyDir: NewDataDir(t)}
	r.StartStandby()
	return r
}

// StartStandby starts the standby (again, after KillStandby: on its data
// directory and port, where it catches up).
func (r *Replicated) StartStandby() {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	opts := pgserver.Options{DataDir: r.standbyDir}
	if r.Standby != nil {
		opts.Port = r.Standby.Port()
	}
	standby, err := pgserver.StartStandby(ctx, r.Server, opts)
	if err != nil {
		r.t.Fatalf("pgtest: %v", err)
	}
	r.Standby = standby
	r.t.Cleanup(standby.Stop)
}

// KillStandby kills the standby's processes, as a crash of its machine.
func (r *Replicated) KillStandby() { r.Standby.Kill() }

// PauseStandby stops the standby's processes (SIGSTOP): it holds its
// connections and answers nothing, as a machine gone silent. It is
// resumed when the test ends, or by ResumeStandby.
func (r *Replicated) PauseStandby() {
	r.Standby.Pause()
	r.t.Cleanup(r.Standby.Resume) // before its Stop, registered earlier
}

// ResumeStandby lets a paused standby go on.
func (r *Replicated) ResumeStandby() { r.Standby.Resume() }

// NewDatabase creates a migrated database on the primary, waits until the
// standby has it too, and returns its name.
func (r *Replicated) NewDatabase() string {
	r.t.Helper()
	name := databaseName(r.Cluster.NewDatabase())
	r.WaitCaughtUp()
	return name
}

// Open opens the database name on the primary with the standby as its
// replica; it is closed when the test ends.
func (r *Replicated) Open(name string, opts store.ReplicaOptions) *store.DB {
	r.t.Helper()
	ctx := context.Background()
	db, err := store.OpenWith(ctx, r.Server.URL(name), store.Options{MaxConns: 10, StatementTimeout: store.DefaultStatementTimeout})
	if err != nil {
		r.t.Fatalf("pgtest: %v", err)
	}
	r.t.Cleanup(db.Close)
	if err := db.AttachReplicas(ctx, []string{r.Standby.URL(name)}, opts); err != nil {
		r.t.Fatalf("pgtest: %v", err)
	}
	return db
}

// SetApplyDelay makes the standby apply each commit d after the primary
// made it (recovery_min_apply_delay; 0: at once). The standby still
// receives the WAL at once: only its replay waits.
func (r *Replicated) SetApplyDelay(d time.Duration) {
	r.t.Helper()
	r.execOnStandby(fmt.Sprintf("ALTER SYSTEM SET recovery_min_apply_delay = '%dms'", d.Milliseconds()), "SELECT pg_reload_conf()")
	if d >= time.Second {
		r.waitDelayed()
	}
}

// waitDelayed returns once the standby's replay holds commits back: the
// reload reaches its startup process some time after pg_reload_conf
// returns, and a commit replayed before then is visible at once, which a
// busy machine made a test see. A commit made on the primary and not
// replayed a moment later is the delay at work (and holds back every
// later one).
func (r *Replicated) waitDelayed() {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	primary, standby := r.connectBoth(ctx)
	defer primary.Close(ctx)
	defer standby.Close(ctx)
	for ctx.Err() == nil {
		var at string
		// txid_current gives the statement a transaction id, so that its
		// end writes a commit record, which the delay applies to.
		if err := primary.QueryRow(ctx, "SELECT txid_current(), pg_current_wal_insert_lsn()::text").Scan(new(int64), &at); err != nil {
			r.t.Fatalf("pgtest: %v", err)
		}
		time.Sleep(300 * time.Millisecond)
		var replayed bool
		if err := standby.QueryRow(ctx, "SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn", at).Scan(&replayed); err != nil {
			r.t.Fatalf("pgtest: %v", err)
		}
		if !replayed {
			return
		}
	}
	r.t.Fatal("pgtest: the standby's replay is not delayed after a minute")
}

// connectBoth connects to the primary's and the standby's postgres
// databases.
func (r *Replicated) connectBoth(ctx context.Context) (primary, standby *pgx.Conn) {
	r.t.Helper()
	primary, err := pgx.Connect(ctx, r.Server.URL("postgres"))
	if err != nil {
		r.t.Fatalf("pgtest: %v", err)
	}
	standby, err = pgx.Connect(ctx, r.Standby.URL("postgres"))
	if err != nil {
		primary.Close(ctx)
		r.t.Fatalf("pgtest: %v", err)
	}
	return primary, standby
}

// WaitCaughtUp waits until the standby has replayed everything the primary
// had written when it was called.
func (r *Replicated) WaitCaughtUp() {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	primary, standby := r.connectBoth(ctx)
	defer primary.Close(ctx)
	defer standby.Close(ctx)
	var at string
	if err := primary.QueryRow(ctx, "SELECT pg_current_wal_insert_lsn()::text").Scan(&at); err != nil {
		r.t.Fatalf("pgtest: %v", err)
	}
	for {
		var done bool
		if err := standby.QueryRow(ctx, "SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn", at).Scan(&done); err != nil {
			r.t.Fatalf("pgtest: %v", err)
		}
		if done {
			return
		}
		select {
		case <-ctx.Done():
			r.t.Fatalf("pgtest: the standby has not replayed %s after a minute", at)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func (r *Replicated) execOnStandby(statements ...string) {
	r.t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, r.Standby.URL("postgres"))
	if err != nil {
		r.t.Fatalf("pgtest: %v", err)
	}
	defer conn.Close(ctx)
	for _, s := range statements {
		if _, err := conn.Exec(ctx, s); err != nil {
			r.t.Fatalf("pgtest: %s: %v", s, err)
		}
	}
}

// databaseName is the database a URL names.
func databaseName(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		panic(err)
	}
	return strings.TrimPrefix(u.Path, "/")
}
