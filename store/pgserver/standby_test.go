package pgserver

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// A standby made by StartStandby is a hot standby streaming from its
// primary: it answers reads, refuses writes, and shows what the primary
// commits; killed, it takes no connection, and started again on its data
// directory it catches up.
func TestStandbyStreamsFromItsPrimary(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	primary, err := Start(ctx, Options{DataDir: dataDir(t), Replication: true,
		Settings: map[string]string{"synchronous_commit": "on"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(primary.Stop)
	standbyDir := dataDir(t)
	standby, err := StartStandby(ctx, primary, Options{DataDir: standbyDir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(standby.Stop)

	execSQL(t, primary.URL("postgres"), "CREATE TABLE notes (n int)", "INSERT INTO notes VALUES (1)")
	waitFor(t, standby.URL("postgres"), "SELECT count(*) = 1 FROM notes")
	var recovering bool
	query(t, standby.URL("postgres"), "SELECT pg_is_in_recovery()", &recovering)
	if !recovering {
		t.Fatal("the standby is not in recovery")
	}
	conn, err := pgx.Connect(ctx, standby.URL("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "INSERT INTO notes VALUES (2)"); err == nil {
		t.Error("the standby took a write")
	}
	conn.Close(ctx)

	standby.Kill()
	if err := connect(standby.URL("postgres")); err == nil {
		t.Fatal("a killed standby took a connection")
	}
	execSQL(t, primary.URL("postgres"), "INSERT INTO notes VALUES (3)")
	again, err := StartStandby(ctx, primary, Options{DataDir: standbyDir, Port: standby.Port()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(again.Stop)
	waitFor(t, again.URL("postgres"), "SELECT count(*) = 2 FROM notes")
}

func execSQL(t *testing.T, url string, statements ...string) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, s := range statements {
		if _, err := conn.Exec(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

func query(t *testing.T, url, sql string, dest ...any) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if err := conn.QueryRow(ctx, sql).Scan(dest...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// waitFor polls url with sql, a boolean query, until it answers true; an
// error (the table not replayed yet) is not yet true.
func waitFor(t *testing.T, url, sql string) {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(30 * time.Second)
	var err error
	for {
		var conn *pgx.Conn
		ok := false
		if conn, err = pgx.Connect(ctx, url); err == nil {
			err = conn.QueryRow(ctx, sql).Scan(&ok)
			conn.Close(ctx)
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("still not true after 30s: %s (%v)", sql, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
