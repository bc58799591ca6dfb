package engine

import (
	"context"
	"testing"
	"time"
)

// A subscription takes a turn only while its executor waits, and only
// with a free slot; the slot returns when the response is made, or when
// the operation ends before.
func TestTakeTurn(t *testing.T) {
	p := NewPacer(1)
	ctxA, endA := context.WithCancel(context.Background())
	defer endA()
	ctxA, a := newTurn(ctxA, p)
	ctxB, endB := context.WithCancel(context.Background())
	defer endB()
	ctxB, b := newTurn(ctxB, p)

	took := func(ctx context.Context) <-chan error {
		c := make(chan error, 1)
		go func() { c <- TakeTurn(ctx) }()
		return c
	}
	waits := func(c <-chan error, what string) {
		t.Helper()
		select {
		case err := <-c:
			t.Fatalf("%s: took a turn (%v)", what, err)
		case <-time.After(50 * time.Millisecond):
		}
	}
	gets := func(c <-chan error, what string) {
		t.Helper()
		select {
		case err := <-c:
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: no turn", what)
		}
	}

	// A's executor is busy (writing): no turn, whatever the slots.
	ta := took(ctxA)
	waits(ta, "A while its executor is busy")
	a.waiting()
	gets(ta, "A once its executor waits")

	// B's executor waits, but A holds the only slot.
	b.waiting()
	tb := took(ctxB)
	waits(tb, "B while A holds the slot")
	a.done()
	gets(tb, "B once A's response is made")

	// B's operation ends while it holds the slot: the slot is freed.
	endB()
	a.waiting()
	gets(took(ctxA), "A after B ended")

	// A turn is not taken once the operation has ended.
	endA()
	if err := TakeTurn(ctxA); err == nil {
		t.Fatal("a turn was taken after the operation ended")
	}
	// Outside a subscription, no pacing.
	if err := TakeTurn(context.Background()); err != nil {
		t.Fatal(err)
	}
}
