package graph

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/docsapi/docsapi/graph/engine"
)

// Delivering one event to a process's subscribers. The hub (live.go)
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

// liveBatchNote is one event for a lane's subscribers, with the responses
// made for it so far (shared by the lanes).
type liveBatchNote struct {
	note      liveNote
	responses *liveResponses
}

// liveBatch is one event and the subscribers of one lane it is for.
type liveBatch struct {
	liveBatchNote
	subs []*liveSub
}

// liveLane delivers its batches in order, in a goroutine that runs while
// there are batches to deliver.
type liveLane struct {
	queue   chan liveBatch
	running atomic.Bool
}

// laneQueue bounds the events waiting in a lane: the hub waits for room
// (its events are read in order, and the changes to access heard between
// them too).
const laneQueue = 64

func newLiveLane(*LiveHub) *liveLane { return &liveLane{queue: make(chan liveBatch, laneQueue)} }

// fanOut hands the event of n, about keys, to the lanes of its
// subscribers.
func (h *LiveHub) fanOut(ctx context.Context, n liveNote, keys []string) {
	shares := make([][]*liveSub, len(h.lanes))
	h.mu.Lock()
	for _, key := range keys {
		for s := range h.subs[key] {
			shares[s.lane] = append(shares[s.lane], s)
		}
	}
	h.mu.Unlock()
	note := liveBatchNote{note: n, responses: &liveResponses{made: map[liveShare]*liveResponse{}}}
	for i, subs := range shares {
		if len(subs) == 0 {
			continue
		}
		select {
		case h.lanes[i].queue <- liveBatch{liveBatchNote: note, subs: subs}:
		case <-ctx.Done():
			return
		}
		h.lanes[i].wake()
	}
}

// wake starts the lane's goroutine unless it runs.
func (l *liveLane) wake() {
	if l.running.CompareAndSwap(false, true) {
		go l.run()
	}
}

// laneYield is how many subscribers a lane serves between two yields of
// its CPU: a request woken meanwhile runs before the lane goes on.
const laneYield = 64

func (l *liveLane) run() {
	served := 0
	for {
		select {
		case b := <-l.queue:
			for _, s := range b.subs {
				s.offer(b.liveBatchNote)
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
func (s *liveSub) offer(b liveBatchNote) {
	caller, kept := s.conn.kept()
	s.mu.Lock()
	switch {
	case s.ended:
		s.mu.Unlock()
		return
	case s.catchingUp || !kept:
		if len(s.behind) >= engine.MaxEventsBehind {
			s.mu.Unlock()
			s.r.Log.Warn("live updates: a subscriber fell behind; closing its connection", "key", s.key)
			s.stream.CloseTooSlow()
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
func (s *liveSub) catchUp() {
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
		caller, err := s.conn.current(s.ctx)
		if errors.Is(err, ErrUnauthenticated) {
			s.conn.Revoke()
			s.end()
			continue
		}
		if err != nil {
			s.logEnd("resolving the caller", err)
			s.end()
			continue
		}
		s.deliver(caller, b)
	}
}

// deliver sends s what caller may receive of the event of b, if anything,
// or ends s when caller may no longer read what it is about.
func (s *liveSub) deliver(caller *Caller, b liveBatchNote) {
	// SECURITY: decided for this subscriber, before any response is shared.
	v, err := s.check(s.ctx, caller, b.note)
	if err != nil {
		s.logEnd("checking an event", err)
		s.end()
		return
	}
	if v == nil {
		return
	}
	// With replicas: what the subscriber reads next, over this connection
	// or through this instance, sees the event.
	s.r.DB.RecordPosition(s.ctx, caller.User.ID, b.note.position)
	share := liveShare{shape: s.stream.Shape(), event: v}
	if !s.stream.Plain() {
		// SECURITY: a response that may depend on who reads it is shared
		// only by the subscribers running as the same caller.
		share.caller = caller
	}
	payload, err := b.responses.get(share, func() ([]byte, error) {
		s.r.Live.responses.Add(1)
		return s.encode(caller, v)
	})
	if err != nil {
		s.r.Log.Error("live updates: making a subscription's response failed", "key", s.key, "err", err)
		return
	}
	if err := s.stream.Send(payload); err != nil {
		if errors.Is(err, engine.ErrTooSlow) {
			s.r.Log.Warn("live updates: a subscriber fell behind; closing its connection", "key", s.key)
		}
		s.end()
		return
	}
	s.r.Live.sent.Add(1)
}

// end has s's subscription end (its goroutine, subscribeLive's, finishes
// it); nothing more is delivered to it.
func (s *liveSub) end() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.ended {
		s.ended = true
		close(s.done)
	}
}

// liveShare is what subscribers sharing a response have in common.
type liveShare struct {
	shape [32]byte
	// event is what check let through (the same for every subscriber
	// allowed the event).
	event any
	// caller is the caller the response is made as, unless the selection
	// is plain.
	caller *Caller
}

// liveResponses are the responses made for one event, by share: each is
// made once, by the first subscriber that needs it, and the others wait
// for it.
type liveResponses struct {
	mu   sync.Mutex
	made map[liveShare]*liveResponse
}

type liveResponse struct {
	ready   chan struct{}
	payload []byte
	err     error
}

func (r *liveResponses) get(share liveShare, respond func() ([]byte, error)) ([]byte, error) {
	r.mu.Lock()
	if m := r.made[share]; m != nil {
		r.mu.Unlock()
		<-m.ready
		return m.payload, m.err
	}
	m := &liveResponse{ready: make(chan struct{})}
	r.made[share] = m
	r.mu.Unlock()
	m.payload, m.err = respond()
	close(m.ready)
	return m.payload, m.err
}
