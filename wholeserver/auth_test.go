package wholeserver_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/docsapi/docsapi/cmd/docsapi/server"

	"github.com/uptrace/bun"

	"github.com/docsapi/docsapi/cmd/docsapi/server/servertest"
	"github.com/docsapi/docsapi/store"
)

// Tokens are answered from a cache (store.CallerCache). A change to who a
// caller is — a membership removed, a token revoked — is seen at once by the
// process that made it, and by another server process on the same database
// as soon as PostgreSQL delivers its notification.
func TestCallerCacheSeesChanges(t *testing.T) {
	t.Parallel()
	env := servertest.New(t)
	alice := env.NewUser("Alice")
	bob := env.NewUser("Bob")
	org := alice.NewOrg("Acme")
	bob.Join(org, store.RoleRead)

	// A second server process on the same database.
	db2, err := store.Open(context.Background(), env.DB.Pool.Config().ConnString(), 4)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db2.Close)
	srv2, err := server.New(db2, server.Config{PublicURL: "http://other.example", Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	other := httptest.NewServer(srv2)
	t.Cleanup(other.Close)
	getOrg := func(base, token string) int {
		req, _ := http.NewRequest("GET", base+"/v1/orgs/"+org, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	// eventually polls the other process: its cache is emptied when the
	// notification arrives, a few milliseconds after the commit.
	eventually := func(token string, want int) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for getOrg(other.URL, token) != want {
			if time.Now().After(deadline) {
				t.Fatalf("the other process still answers %d, want %d", getOrg(other.URL, token), want)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}

	// Both processes know Bob (and cache him).
	for range 2 {
		if got := getOrg(env.URL, bob.Token); got != http.StatusOK {
			t.Fatalf("this process: %d, want 200", got)
		}
		eventually(bob.Token, http.StatusOK)
	}

	// Bob leaves the organization.
	if _, err := env.DB.NewDelete().Model((*store.Member)(nil)).
		Where("organization_id = ? AND user_id = ?", org, bob.ID).Exec(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := getOrg(env.URL, bob.Token); got != http.StatusNotFound {
		t.Errorf("this process, right after the removal: %d, want 404", got)
	}
	eventually(bob.Token, http.StatusNotFound)

	// Bob's token is revoked, inside a transaction this time.
	err = store.RunInTx(context.Background(), env.DB, func(ctx context.Context, tx bun.Tx) error {
		_, err := tx.NewDelete().Model((*store.APIToken)(nil)).Where("user_id = ?", bob.ID).Exec(ctx)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := getOrg(env.URL, bob.Token); got != http.StatusUnauthorized {
		t.Errorf("this process, right after the revocation: %d, want 401", got)
	}
	eventually(bob.Token, http.StatusUnauthorized)

	// Alice, whose rows did not change, is still served.
	if got := getOrg(env.URL, alice.Token); got != http.StatusOK {
		t.Errorf("Alice: %d, want 200", got)
	}
}
