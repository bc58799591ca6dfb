package engine

import (
	"context"
	"runtime"
	"sync/atomic"
)

// Delivery pacing. One event to thousands of subscribers makes thousands
// of goroutines runnable at once, each executing its subscription's
// selection on the event; Go's scheduler has no priorities, so a request
// arriving meanwhile waits in the run queue behind all of them (a GET of
// 0.2 ms answered in hundreds of milliseconds during a burst). The
// executions are therefore paced: a subscription hands an event to its
// executor only with one of a few delivery slots (as many as there are
// CPUs), held while the executor makes the event's response and freed
// before it is written. The others wait parked, not runnable, so requests
// wait behind a handful of goroutines at most; the events are delivered at
// the same rate, since the CPUs are busy either way.
//
// A slot is taken only once the subscription's executor waits for its next
// event (TakeTurn), never while it is still writing the previous one: a
// client that does not read stalls its own subscription (until the write
// deadline), not the slots everyone shares.

// Pacer is the delivery slots the subscriptions of a server share.
type Pacer struct{ slots chan struct{} }

// NewPacer returns slots for n executions at once (n < 1: one per CPU).
func NewPacer(n int) *Pacer {
	if n < 1 {
		n = runtime.GOMAXPROCS(0)
	}
	return &Pacer{slots: make(chan struct{}, n)}
}

// turnKey carries a subscription's turn in its resolver's context.
type turnKey struct{}

// turn is one subscription's place in the pacing.
type turn struct {
	pacer *Pacer
	// idle holds a token while the executor waits for the next event.
	idle chan struct{}
	// held is set while the subscription holds a slot.
	held atomic.Bool
}

func newTurn(ctx context.Context, p *Pacer) (context.Context, *turn) {
	t := &turn{pacer: p, idle: make(chan struct{}, 1)}
	// A slot taken for an event the executor never made (the operation
	// ended first) is freed.
	context.AfterFunc(ctx, t.done)
	return context.WithValue(ctx, turnKey{}, t), t
}

// waiting tells that the executor is about to wait for the next event.
func (t *turn) waiting() {
	select {
	case t.idle <- struct{}{}:
	default:
	}
}

// done frees the slot held for the event whose response was just made.
func (t *turn) done() {
	if t.held.CompareAndSwap(true, false) {
		<-t.pacer.slots
	}
}

// TakeTurn waits until the subscription of ctx may hand its executor an
// event: its executor waits for one, and a delivery slot is free. Outside
// a paced subscription (no websocket) it returns at once. It fails only
// when ctx ends; the slot is freed once the event's response is made, or
// when the operation ends.
func TakeTurn(ctx context.Context) error {
	t, ok := ctx.Value(turnKey{}).(*turn)
	if !ok {
		return nil
	}
	select {
	case <-t.idle:
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case t.pacer.slots <- struct{}{}:
		t.held.Store(true)
		if err := ctx.Err(); err != nil {
			// Ended as the slot was taken: done may have run already.
			t.done()
			return err
		}
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
