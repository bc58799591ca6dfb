package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/docsapi/docsapi/store/pgtest"
)

// Serialize runs one fn at a time per key, and fns of other keys meanwhile.
func TestSerialize(t *testing.T) {
	db := pgtest.NewDB(t) // 10 connections: 2 may hold locks at once
	ctx := context.Background()
	holding, release := make(chan struct{}), make(chan struct{})
	first := make(chan error, 1)
	go func() {
		first <- db.Serialize(ctx, "a", func(context.Context) error {
			close(holding)
			<-release
			return nil
		})
	}()
	<-holding
	second := make(chan time.Time, 1)
	go func() {
		_ = db.Serialize(ctx, "a", func(context.Context) error {
			second <- time.Now()
			return nil
		})
	}()
	other := make(chan struct{})
	go func() {
		_ = db.Serialize(ctx, "b", func(context.Context) error { close(other); return nil })
	}()
	select {
	case <-other:
	case <-time.After(10 * time.Second):
		t.Fatal("a fn of another key waited for the held one")
	}
	select {
	case <-second:
		t.Fatal("a second fn of the same key ran while the first held it")
	case <-time.After(300 * time.Millisecond):
	}
	released := time.Now()
	close(release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	select {
	case at := <-second:
		if at.Before(released) {
			t.Fatal("the second fn ran before the first released the lock")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the second fn never ran")
	}
}
