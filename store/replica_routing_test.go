package store_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/docsapi/docsapi/store"
	"github.com/docsapi/docsapi/store/pgtest"
)

// The store's reads under a route, on a real streaming replica made to lag:
// bun's reads and the pgx path's go to the replica for a caller who has not
// written, to the primary for one who has (until the replica passes the
// write), and after a write in the same operation, whether it is known as
// one (INSERT) or only the replica finds out (a WITH that inserts). With the
// replica killed, the same reads answer from the primary.
func TestReadsOfARoute(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := pgtest.NewReplicated(t)
	db := r.Open(r.NewDatabase(), store.ReplicaOptions{MaxLag: time.Minute, CheckEvery: 20 * time.Millisecond,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	older := &store.User{ID: store.NewID(), Email: "older@example.com", DisplayName: "Older"}
	if err := store.CreateUser(ctx, db, older); err != nil {
		t.Fatal(err)
	}
	r.WaitCaughtUp()
	waitForCheck(t, db)
	r.SetApplyDelay(15 * time.Second)
	newer := &store.User{ID: store.NewID(), Email: "newer@example.com", DisplayName: "Newer"}
	if err := store.CreateUser(ctx, db, newer); err != nil {
		t.Fatal(err)
	}

	// sees reports what reads under ctx see of newer (bun: GetUser,
	// CountUsers; pgx: UsersByIDs), failing unless they agree.
	sees := func(ctx context.Context) bool {
		t.Helper()
		_, err := store.GetUser(ctx, db, newer.ID)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			t.Fatal(err)
		}
		found := err == nil
		users, err := store.UsersByIDs(ctx, db, []string{newer.ID, older.ID})
		if err != nil {
			t.Fatal(err)
		}
		n, err := store.CountUsers(ctx, db)
		if err != nil {
			t.Fatal(err)
		}
		bun, pgx, count := found, len(users) == 2, n == 2
		if bun != pgx || pgx != count {
			t.Fatalf("reads disagree: GetUser %v, UsersByIDs %v, CountUsers %v", bun, pgx, count)
		}
		return pgx
	}
	replicaReads := func() int64 {
		stats, _ := db.ReplicaStats()
		return stats.Replicas[0].Reads
	}

	before := replicaReads()
	if sees(db.RouteReads(ctx, "ada")) {
		t.Error("a caller who has not written sees the newer user: not read on the lagging replica")
	}
	if got := replicaReads() - before; got != 3 {
		t.Errorf("%d reads on the replica, want 3", got)
	}
	if !sees(ctx) {
		t.Error("reads without a route do not see the newer user")
	}
	db.RecordWrite(ctx, "ada")
	if !sees(db.RouteReads(ctx, "ada")) {
		t.Error("a caller who wrote does not see the newer user")
	}
	client := store.NewClientPosition(0, false)
	db.RecordWrite(store.WithClientPosition(ctx, client), "")
	if !sees(db.RouteReads(store.WithClientPosition(ctx, store.NewClientPosition(client.Position(), false)), "bob")) {
		t.Error("a client that sent its position back does not see the newer user")
	}
	if !sees(db.RouteReads(store.WithClientPosition(ctx, store.NewClientPosition(0, true)), "bob")) {
		t.Error("a request that writes does not read on the primary")
	}

	for name, write := range map[string]func(context.Context) error{
		"an INSERT": func(ctx context.Context) error {
			_, err := store.ServerSecret(ctx, db, "routing-test")
			return err
		},
		"a WITH that inserts": func(ctx context.Context) error {
			var name string
			return db.NewRaw(`WITH s AS (INSERT INTO server_secrets (name, value) VALUES ('routing-test-2', '\x00') RETURNING name) SELECT name FROM s`).Scan(ctx, &name)
		},
		"a transaction": func(ctx context.Context) error {
			return store.RunInTx(ctx, db, func(context.Context, bun.Tx) error { return nil })
		},
	} {
		routed := db.RouteReads(ctx, "cy")
		if sees(routed) {
			t.Fatalf("%s: the route does not read on the replica", name)
		}
		if err := write(routed); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !store.WroteUnder(routed) || !sees(routed) {
			t.Errorf("%s: the route's reads after it are not on the primary", name)
		}
	}

	r.KillStandby()
	if !sees(db.RouteReads(ctx, "")) {
		t.Error("with the replica killed, reads do not see the newer user")
	}
	stats, _ := db.ReplicaStats()
	if stats.Replicas[0].Up || stats.Fallbacks["read_failed"]+stats.Fallbacks["down"] == 0 {
		t.Errorf("the killed replica: %+v", stats)
	}
}

// waitForCheck waits until db's checks have seen its replica up and past
// everything written so far: a read for a caller who wrote now goes there.
func waitForCheck(t *testing.T, db *store.DB) {
	t.Helper()
	ctx := context.Background()
	db.RecordWrite(ctx, "waiting")
	deadline := time.Now().Add(10 * time.Second)
	for {
		stats, _ := db.ReplicaStats()
		if _, err := store.CountUsers(db.RouteReads(ctx, "waiting"), db); err != nil {
			t.Fatal(err)
		}
		if after, _ := db.ReplicaStats(); after.Replicas[0].Reads > stats.Replicas[0].Reads {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the replica did not catch up")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
