package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/docsapi/docsapi/store"
	"github.com/docsapi/docsapi/store/pgtest"
)

// TestPublishedNotificationsNameTheirOrigin: a change to a site is told to
// the DB that made it at its commit, plain, and delivered by PostgreSQL to
// every listener naming the DB it came from, so that a process skips the
// delivery of its own change (it already heard it) but hears another's.
func TestPublishedNotificationsNameTheirOrigin(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := pgtest.NewDatabase(t)
	open := func() *store.DB {
		db, err := store.Open(ctx, url, 4)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(db.Close)
		return db
	}
	a, b := open(), open()
	if a.Origin() == "" || a.Origin() == b.Origin() {
		t.Fatalf("origins %q and %q", a.Origin(), b.Origin())
	}
	told := make(chan string, 8)
	a.OnNotified = func(channel, payload string) {
		if channel == store.PublishedChannel {
			told <- payload
		}
	}
	delivered := make(chan string, 8)
	ready := make(chan struct{})
	listenCtx, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		_ = a.ListenOnce(listenCtx, []string{store.PublishedChannel}, func() { close(ready) }, func(_, payload string) { delivered <- payload })
	}()
	<-ready
	if _, err := a.ExecContext(ctx, `INSERT INTO organizations (id, title, created_at, updated_at) VALUES ('o', 'O', now(), now())`); err != nil {
		t.Fatal(err)
	}
	next := func(c chan string) store.PublishedChange {
		t.Helper()
		select {
		case p := <-c:
			change, ok := store.ParsePublishedPayload(p)
			if !ok {
				t.Fatalf("payload %q does not parse", p)
			}
			return change
		case <-time.After(10 * time.Second):
			t.Fatal("nothing heard")
			return store.PublishedChange{}
		}
	}
	for _, tc := range []struct {
		name   string
		by     *store.DB
		siteID string
	}{{"this DB's change", a, "s1"}, {"another DB's change", b, "s2"}} {
		site := &store.Site{ID: tc.siteID, OrganizationID: "o", Type: store.SiteTypeBasic, Title: "S", Visibility: store.SiteVisibilityPublic}
		if err := store.CreateSite(ctx, tc.by, site); err != nil {
			t.Fatal(err)
		}
		want := store.PublishedChange{Kind: "site", OrgID: "o", ID: tc.siteID, Origin: tc.by.Origin()}
		if got := next(delivered); got != want {
			t.Errorf("%s: delivered %+v, want %+v", tc.name, got, want)
		}
		if tc.by == a {
			// Told at commit without an origin: it is this process's own.
			if got := next(told); got != (store.PublishedChange{Kind: "site", OrgID: "o", ID: tc.siteID}) {
				t.Errorf("%s: told %+v", tc.name, got)
			}
		}
	}
	select {
	case p := <-told:
		t.Errorf("told of another DB's change at its commit: %q", p)
	default:
	}
}
