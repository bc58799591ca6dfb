package store_test

import (
	"context"
	"errors"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/docsapi/docsapi/store"
	"github.com/docsapi/docsapi/store/pgtest"
)

// secretKey is what NewSecret makes: 32 random bytes, base64url unpadded.
var secretKey = regexp.MustCompile(`^[A-Za-z0-9_-]{43}$`)

// A share link is found by its key in its own site only, turned off or
// not; a site's visitor authentication settings are there from its
// creation, with a private key of its own; both go with the site.
func TestSiteShareLinksAndPublishingAuth(t *testing.T) {
	db := pgtest.NewDB(t)
	ctx := context.Background()
	if _, err := db.Pool.Exec(ctx, `INSERT INTO organizations (id, title, created_at, updated_at)
		VALUES ('mine', 'Mine', now(), now()), ('other', 'Other', now(), now())`); err != nil {
		t.Fatal(err)
	}
	now := store.Now(time.Now)
	site := func(id, org string) *store.Site {
		s := &store.Site{ID: id, OrganizationID: org, Type: store.SiteTypeBasic, Title: id, Visibility: store.SiteVisibilityShareLink,
			ShareKey: store.NewSecret(), AgentsContext: store.AgentsContextIncluded, CreatedAt: now, UpdatedAt: now}
		if err := store.CreateSite(ctx, db, s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	one, two, theirs := site("one", "mine"), site("two", "mine"), site("theirs", "other")

	keys := map[string]bool{}
	for _, s := range []*store.Site{one, two, theirs} {
		a, err := store.GetSitePublishingAuth(ctx, db, s.OrganizationID, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		if a.Backend != store.VisitorAuthCustom || !secretKey.MatchString(a.PrivateKey) || a.FallbackURL != nil || keys[a.PrivateKey] {
			t.Errorf("site %s's settings: %+v", s.ID, a)
		}
		keys[a.PrivateKey] = true
	}
	if _, err := store.GetSitePublishingAuth(ctx, db, "mine", "theirs"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("another organization's site's settings: %v", err)
	}

	link := func(id string, s *store.Site, active bool) *store.SiteShareLink {
		l := &store.SiteShareLink{ID: id, OrganizationID: s.OrganizationID, SiteID: s.ID, Name: id, Key: store.NewSecret(),
			Active: active, CreatedAt: now}
		if err := store.CreateSiteShareLink(ctx, db, l); err != nil {
			t.Fatal(err)
		}
		return l
	}
	on, off, other := link("on", one, true), link("off", one, false), link("other", two, true)
	for _, c := range []struct {
		site, key string
		want      *store.SiteShareLink
	}{{"one", on.Key, on}, {"one", off.Key, off}, {"two", other.Key, other}, {"two", on.Key, nil}, {"one", one.ShareKey, nil}, {"one", "", nil}} {
		got, err := store.SiteShareLinkByKey(ctx, db, "mine", c.site, c.key)
		switch {
		case c.want == nil && !errors.Is(err, store.ErrNotFound):
			t.Errorf("site %s, key %q: %+v, %v; want ErrNotFound", c.site, c.key, got, err)
		case c.want != nil && (err != nil || !sameShareLink(got, c.want)):
			t.Errorf("site %s, key %q: %+v, %v; want %+v", c.site, c.key, got, err, c.want)
		}
	}
	if _, err := store.SiteShareLinkByKey(ctx, db, "other", "one", on.Key); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a key looked up in another organization: %v", err)
	}

	// Deleting a site takes its links and settings along.
	if _, err := store.DeleteSite(ctx, db, "mine", "one"); err != nil {
		t.Fatal(err)
	}
	if _, err := store.SiteShareLinkByKey(ctx, db, "mine", "one", on.Key); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a link of a deleted site: %v", err)
	}
	if _, err := store.GetSitePublishingAuth(ctx, db, "mine", "one"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the settings of a deleted site: %v", err)
	}
	var left int
	if err := db.Pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM site_share_links WHERE site_id = 'one') +
		(SELECT count(*) FROM site_publishing_auths WHERE site_id = 'one')`).Scan(&left); err != nil || left != 0 {
		t.Errorf("%d rows of the deleted site are left (%v)", left, err)
	}
}

// sameShareLink tells whether a and b are the same link, read or written.
func sameShareLink(a, b *store.SiteShareLink) bool {
	return a.ID == b.ID && a.OrganizationID == b.OrganizationID && a.SiteID == b.SiteID && a.Name == b.Name &&
		a.Key == b.Key && a.Active == b.Active && a.CreatedAt.Equal(b.CreatedAt)
}

// Migration 0050 gives every site of before it a private key of its own,
// as store.NewSecret makes them.
func TestPublishingAuthMigrationGivesEverySiteAKey(t *testing.T) {
	if pgtest.Citus() {
		t.Skip("runs the migrations on one PostgreSQL, as TestOrganizationIDMigrationFillsExistingRows does")
	}
	ctx := context.Background()
	db := databaseBefore(t, "0050")
	for _, q := range []string{
		`INSERT INTO organizations (id, title, created_at, updated_at) VALUES ('oa', 'A', now(), now()), ('ob', 'B', now(), now())`,
		`INSERT INTO sites (id, organization_id, title, share_key, created_at, updated_at)
			SELECT 's' || i, CASE WHEN i % 2 = 0 THEN 'oa' ELSE 'ob' END, 'S', 'k' || i, now(), now() FROM generate_series(1, 20) i`,
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%v\n%s", err, q)
		}
	}
	if err := db.Migrate(ctx, nil); err != nil {
		t.Fatal(err)
	}
	keys := map[string]bool{}
	for i := 1; i <= 20; i++ {
		org := "ob"
		if i%2 == 0 {
			org = "oa"
		}
		id := "s" + strconv.Itoa(i)
		a, err := store.GetSitePublishingAuth(ctx, db, org, id)
		if err != nil {
			t.Fatalf("site %s: %v", id, err)
		}
		if a.Backend != store.VisitorAuthCustom || !secretKey.MatchString(a.PrivateKey) || a.FallbackURL != nil || keys[a.PrivateKey] {
			t.Errorf("site %s after the migration: %+v", id, a)
		}
		keys[a.PrivateKey] = true
	}
}
