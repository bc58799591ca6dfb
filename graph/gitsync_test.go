package graph

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// go-git's http(s) connections go through the outbound guard, checked as
// they connect: a clone on a context that does not allow private addresses
// never reaches a loopback server, even though nothing checked its URL
// before (as when a name resolves differently at connect time).
func TestGitTransfersAreGuarded(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.NotFound(w, r)
	}))
	defer srv.Close()
	for _, allow := range []bool{false, true} {
		r := &Resolver{GitAllowPrivate: allow}
		ctx, cancel := r.gitContext(context.Background())
		_, _, err := cloneTree(ctx, srv.URL+"/repo.git", "refs/heads/main")
		cancel()
		if err == nil {
			t.Fatalf("allow %v: a clone of a server that is not git succeeded", allow)
		}
		blocked := strings.Contains(err.Error(), "not allowed")
		if blocked == allow || (hits.Load() > 0) != allow {
			t.Errorf("allow %v: %d requests reached the server; the clone failed with %v", allow, hits.Load(), err)
		}
	}
}
