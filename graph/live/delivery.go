package live

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/docsapi/docsapi/graph/engine"
)

// Delivering one event to a process's subscribers. The hub (hub.go)
// hands each event, with the subscribers of what it is about, to a few
// delivery lanes, each of which goes through its share of the subscribers
// in one goroutine: for each, it decides from memory what the subscriber
// may receive (the subscription's check, as its caller is now), and writes
// the response, made once for all the subscribers that share it, without
// waiting for the client (engine.Stream). So an event costs a few wake-ups
// however many subscribe, not a hand-off per subscriber, and the lanes
// (one fewer than the CPUs) leave a CPU to requests during a burst.
//
// A response is shared by the subscribers of one event whose
// subscriptions have the same shape (document, operation and variables)
// and the same visibility: subscribers who may receive the event, when
// the selection is plain data of the event (engine.Stream.Plain: the same
// bytes for everyone the event is for); else those running as the very
// same caller, whose response is made as that caller. Who may receive an
// event is decided for each subscriber before any response is shared: a
// subscriber never gets bytes made for someone who may see more.
//
// A subscriber's events stay in order: it belongs to one lane, which takes
// events in order. One whose connection must resolve its caller again
// (callers changed since) catches up in a goroutine of its own, which may
// read the database, while its lane goes on; the events that arrive
// meanwhile wait for it, in order (at most engine.MaxEventsBehind, past
// which its connection is closed as too slow).

// batchNote is one event for a lane's subscribers, with the responses
// made for it so far (shared by the lanes).
type batchNote[A any] struct {
	note      Note[A]
	responses *responses
}

// batch is one event and the subscribers of one lane it is for.
type batch[C Caller[C], A any] struct {
	batchNote[A]
	subs []*Subscriber[C, A]
}

// lane delivers its batches in order, in a goroutine that runs while
// there are batches to deliver.
type lane[C Caller[C], A any] struct {
	queue   chan batch[C, A]
	running atomic.Bool
}

// laneQueue bounds the events waiting in a lane: the hub waits for room
// (its events are read in order, and the changes to access heard between
// them too).
const laneQueue = 64

func newLane[C Caller[C], A any]() *lane[C, A] {
	return &lane[C, A]{queue: make(chan batch[C, A], laneQueue)}
}

// fanOut hands the event of n, about keys, to the lanes of its
// subscribers.
func (h *Hub[C, A]) fanOut(ctx context.Context, n Note[A], keys []string) {
	shares := make([][]*Subscriber[C, A], len(h.lanes))
	h.mu.Lock()
	for _, key := range keys {
		for s := range h.subs[key] {
			shares[s.lane] = append(shares[s.lane], s)
		}
	}
	h.mu.Unlock()
	note := batchNote[A]{note: n, responses: &responses{made: map[share]*response{}}}
	for i, subs := range shares {
		if len(subs) == 0 {
			continue
		}
		select {
		case h.lanes[i].queue <- batch[C, A]{batchNote: note, subs: subs}:
		case <-ctx.Done():
			return
		}
		h.lanes[i].wake()
	}
}

// wake starts the lane's goroutine unless it runs.
func (l *lane[C, A]) wake() {
	if l.running.CompareAndSwap(false, true) {
		go l.run()
	}
}

// laneYield is how many subscribers a lane serves between two yields of
// its CPU: a request woken meanwhile runs before the lane goes on.
const laneYield = 64

func (l *lane[C, A]) run() {
	served := 0
	for {
		select {
		case b := <-l.queue:
			for _, s := range b.subs {
				s.offer(b.batchNote)
				if served++; served%laneYield == 0 {
					runtime.Gosched()
				}
			}
		default:
			l.running.Store(false)
			// A batch queued after the queue was found empty, whose wake
			// found the lane still running, is the lane's to deliver.
			if len(l.queue) == 0 || !l.running.CompareAndSwap(false, true) {
				return
			}
		}
	}
}

// offer delivers the event to s, in its lane; or, while s catches up or
// must resolve its caller again, queues it for s's own goroutine.
func (s *Subscriber[C, A]) offer(b batchNote[A]) {
	caller, kept := s.Conn.kept()
	s.mu.Lock()
	switch {
	case s.ended:
		s.mu.Unlock()
		return
	case s.catchingUp || !kept:
		if len(s.behind) >= engine.MaxEventsBehind {
			s.mu.Unlock()
			s.hub.log.Warn("live updates: a subscriber fell behind; closing its connection", "key", s.Key)
			s.Stream.CloseTooSlow()
			s.end()
			return
		}
		s.behind = append(s.behind, b)
		if !s.catchingUp {
			s.catchingUp = true
			go s.catchUp()
		}
		s.mu.Unlock()
		return
	}
	s.mu.Unlock()
	s.deliver(caller, b)
}

// catchUp delivers the events waiting for s, resolving its caller as of
// now for each (as a request does), until none is left.
func (s *Subscriber[C, A]) catchUp() {
	for {
		s.mu.Lock()
		if s.ended || len(s.behind) == 0 {
			s.behind, s.catchingUp = nil, false
			s.mu.Unlock()
			return
		}
		b := s.behind[0]
		s.behind = s.behind[1:]
		s.mu.Unlock()
		// SECURITY: as the caller is now: kept while no change to callers
		// is heard, resolved again after one.
		caller, err := s.Conn.Current(s.Ctx)
		if errors.Is(err, engine.ErrTokenInvalid) {
			s.Conn.Revoke()
			s.end()
			continue
		}
		if err != nil {
			s.LogEnd("resolving the caller", err)
			s.end()
			continue
		}
		s.deliver(caller, b)
	}
}

// deliver sends s what caller may receive of the event of b, if anything,
// or ends s when caller may no longer read what it is about.
func (s *Subscriber[C, A]) deliver(caller C, b batchNote[A]) {
	// SECURITY: decided for this subscriber, before any response is shared
	// (Check also records, with replicas, that what the subscriber reads
	// next sees the event).
	v, err := s.Check(s.Ctx, caller, b.note)
	if err != nil {
		s.LogEnd("checking an event", err)
		s.end()
		return
	}
	if v == nil {
		return
	}
	sh := share{shape: s.Stream.Shape(), event: v}
	if !s.Stream.Plain() {
		// SECURITY: a response that may depend on who reads it is shared
		// only by the subscribers running as the same caller.
		sh.caller = caller
	}
	payload, err := b.responses.get(sh, func() ([]byte, error) {
		s.hub.responses.Add(1)
		return s.Encode(caller, v)
	})
	if err != nil {
		s.hub.log.Error("live updates: making a subscription's response failed", "key", s.Key, "err", err)
		return
	}
	if err := s.Stream.Send(payload); err != nil {
		if errors.Is(err, engine.ErrTooSlow) {
			s.hub.log.Warn("live updates: a subscriber fell behind; closing its connection", "key", s.Key)
		}
		s.end()
		return
	}
	s.hub.sent.Add(1)
}

// end has s's subscription end (its goroutine, graph's subscribeLive,
// finishes it); nothing more is delivered to it.
func (s *Subscriber[C, A]) end() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.ended {
		s.ended = true
		close(s.done)
	}
}

// share is what subscribers sharing a response have in common.
type share struct {
	shape [32]byte
	// event is what check let through (the same for every subscriber
	// allowed the event).
	event any
	// caller is the caller the response is made as, unless the selection
	// is plain (a C, compared as the same pointer).
	caller any
}

// responses are the responses made for one event, by share: each is
// made once, by the first subscriber that needs it, and the others wait
// for it.
type responses struct {
	mu   sync.Mutex
	made map[share]*response
}

type response struct {
	ready   chan struct{}
	payload []byte
	err     error
}

func (r *responses) get(sh share, respond func() ([]byte, error)) ([]byte, error) {
	r.mu.Lock()
	if m := r.made[sh]; m != nil {
		r.mu.Unlock()
		<-m.ready
		return m.payload, m.err
	}
	m := &response{ready: make(chan struct{})}
	r.made[sh] = m
	r.mu.Unlock()
	m.payload, m.err = respond()
	close(m.ready)
	return m.payload, m.err
}
