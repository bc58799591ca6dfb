package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/coder/websocket"

	"github.com/docsapi/docsapi/graph"
	"github.com/docsapi/docsapi/store"
)

// The fan-out scenario (-scenario fanout): -subscribers websockets over
// loopback, each subscribed to the spaceEvents of one space, then live
// events about that space recorded in the database (as a change records
// them, in their own transaction): one at a time (-fanout-reps times), then
// bursts of -burst back to back (-bursts times). Reported: the time from an
// event's commit until the last subscriber has it (p50 and max over the
// repetitions; for a burst, until the last subscriber has the last
// event), and the latency of a GET /v1/spaces/{id} probe sent one after
// another beside them: idle (subscribers connected, no event) and during
// the bursts. The clients run in the same process, sharing the CPUs with
// the server and PostgreSQL.

// fanoutQuery selects little: the figures are of delivery, not encoding.
const fanoutQuery = `subscription($s: ID!) { spaceEvents(spaceId: $s) { id type } }`

// fanoutWatch tracks the arrivals of the events being measured.
type fanoutWatch struct {
	mu      sync.Mutex
	waiting map[string]*fanoutEvent
}

type fanoutEvent struct {
	left atomic.Int64
	last atomic.Int64 // unix nanoseconds of the latest arrival
	done chan struct{}
}

func (w *fanoutWatch) expect(id string, n int) *fanoutEvent {
	e := &fanoutEvent{done: make(chan struct{})}
	e.left.Store(int64(n))
	w.mu.Lock()
	w.waiting[id] = e
	w.mu.Unlock()
	return e
}

func (w *fanoutWatch) arrived(id string) {
	w.mu.Lock()
	e := w.waiting[id]
	w.mu.Unlock()
	if e == nil {
		return
	}
	now := time.Now().UnixNano()
	for {
		last := e.last.Load()
		if now <= last || e.last.CompareAndSwap(last, now) {
			break
		}
	}
	if e.left.Add(-1) == 0 {
		close(e.done)
	}
}

// raiseFileLimit lifts the soft limit on open files to the hard one: each
// subscriber holds two descriptors in this process (client and server).
func raiseFileLimit(need uint64) error {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		return err
	}
	if l.Cur < l.Max {
		l.Cur = l.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
			return err
		}
	}
	if l.Cur < need {
		return fmt.Errorf("%d subscribers need about %d open files; the limit is %d (raise it with ulimit -n)", need/2, need, l.Cur)
	}
	return nil
}

func fanoutBench(ctx context.Context, o options, db *store.DB, live *graph.LiveHub, api *apiClient, url string, out io.Writer) ([]row, error) {
	if err := raiseFileLimit(uint64(2*o.subscribers + 200)); err != nil {
		return nil, err
	}
	org, err := api.create(ctx, "/v1/orgs", map[string]any{"title": "Fan-out"})
	if err != nil {
		return nil, err
	}
	space, err := api.create(ctx, "/v1/orgs/"+org+"/spaces", map[string]any{"title": "Watched"})
	if err != nil {
		return nil, err
	}

	watch := &fanoutWatch{waiting: map[string]*fanoutEvent{}}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var conns sync.WaitGroup
	defer conns.Wait()
	defer cancel()
	wsURL := "ws" + strings.TrimPrefix(url, "http") + "/graphql"
	start := time.Now()
	base := live.Subscribers()
	// The first message other than an event, ping or pong, to explain a
	// subscription that did not start.
	var unexpected atomic.Pointer[[]byte]
	// The connections outlive parallel's contexts: they use ctx.
	err = parallel(ctx, 32, o.subscribers, func(_ context.Context, i int) error {
		c, _, err := websocket.Dial(ctx, wsURL, &websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}})
		if err != nil {
			return err
		}
		send := func(m any) error {
			data, _ := json.Marshal(m)
			return c.Write(ctx, websocket.MessageText, data)
		}
		if err := send(map[string]any{"type": "connection_init", "payload": map[string]string{"Authorization": "Bearer " + api.token}}); err != nil {
			return err
		}
		if _, data, err := c.Read(ctx); err != nil || !bytes.Contains(data, []byte("connection_ack")) {
			return fmt.Errorf("subscriber %d: no ack: %s %v", i, data, err)
		}
		if err := send(map[string]any{"id": "s", "type": "subscribe", "payload": map[string]any{"query": fanoutQuery, "variables": map[string]any{"s": space}}}); err != nil {
			return err
		}
		conns.Go(func() {
			defer c.CloseNow()
			var m struct {
				Type    string
				Payload struct {
					Data struct{ SpaceEvents struct{ ID string } }
				}
			}
			for {
				_, data, err := c.Read(ctx)
				if err != nil {
					return
				}
				if bytes.Contains(data, []byte(`"ping"`)) {
					_ = send(map[string]any{"type": "pong"})
					continue
				}
				if json.Unmarshal(data, &m) == nil && m.Type == "next" {
					watch.arrived(m.Payload.Data.SpaceEvents.ID)
				} else if !bytes.Contains(data, []byte(`"pong"`)) {
					unexpected.CompareAndSwap(nil, &data)
				}
			}
		})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("subscribers: %w", err)
	}
	for live.Subscribers() < base+o.subscribers {
		if time.Since(start) > time.Minute {
			var msg []byte
			if p := unexpected.Load(); p != nil {
				msg = *p
			}
			return nil, fmt.Errorf("only %d of %d subscriptions in place after a minute (%s)", live.Subscribers()-base, o.subscribers, msg)
		}
		time.Sleep(10 * time.Millisecond)
	}
	fmt.Fprintf(out, "fan-out: %d subscribers connected and subscribed in %s\n", o.subscribers, time.Since(start).Round(time.Millisecond))

	record := func() (string, *fanoutEvent, time.Time, error) {
		id := store.NewID()
		e := watch.expect(id, o.subscribers)
		t0 := time.Now()
		ev := &store.LiveEvent{Type: store.LiveContentUpdated, OrganizationID: org, SpaceID: &space, CreatedAt: t0}
		err := recordLiveEventWithID(ctx, db, ev, id)
		return id, e, t0, err
	}
	wait := func(e *fanoutEvent) error {
		select {
		case <-e.done:
			return nil
		case <-time.After(time.Minute):
			return fmt.Errorf("an event reached %d of %d subscribers in a minute", int64(o.subscribers)-e.left.Load(), o.subscribers)
		case <-ctx.Done():
			return ctx.Err()
		}
	}

	// The GET probe, one request after another while probing is set.
	probeURL := url + "/v1/spaces/" + space
	get := httpRequester(api.client, "GET", func(int) string { return probeURL }, nil, api.token, func(status int, body []byte) error {
		if status != http.StatusOK {
			return fmt.Errorf("GET space: status %d: %s", status, body)
		}
		return nil
	})
	probe := func(until <-chan struct{}) ([]time.Duration, error) {
		var lat []time.Duration
		var buf bytes.Buffer
		for {
			select {
			case <-until:
				return lat, nil
			default:
			}
			t0 := time.Now()
			if err := get(ctx, &buf, 0); err != nil {
				return lat, err
			}
			lat = append(lat, time.Since(t0))
		}
	}

	// Idle probe: the subscribers connected, no event.
	idleStop := make(chan struct{})
	time.AfterFunc(2*time.Second, func() { close(idleStop) })
	idle, err := probe(idleStop)
	if err != nil {
		return nil, err
	}

	stopProfile, err := startCPUProfile(o.cpuProfile)
	if err != nil {
		return nil, err
	}
	defer stopProfile()

	// One event at a time.
	var single []time.Duration
	for range o.fanoutReps {
		_, e, t0, err := record()
		if err != nil {
			return nil, err
		}
		if err := wait(e); err != nil {
			return nil, err
		}
		single = append(single, time.Unix(0, e.last.Load()).Sub(t0))
		time.Sleep(200 * time.Millisecond) // let the system settle between repetitions
	}

	// Bursts, with the probe beside them.
	var bursts, during []time.Duration
	for range o.bursts {
		stop := make(chan struct{})
		var probed []time.Duration
		var probeErr error
		var probing sync.WaitGroup
		probing.Go(func() { probed, probeErr = probe(stop) })
		time.Sleep(20 * time.Millisecond)
		var events []*fanoutEvent
		var t0 time.Time
		for k := range o.burst {
			_, e, at, err := record()
			if err != nil {
				close(stop)
				return nil, err
			}
			if k == 0 {
				t0 = at
			}
			events = append(events, e)
		}
		var last int64
		for _, e := range events {
			if err := wait(e); err != nil {
				close(stop)
				return nil, err
			}
			last = max(last, e.last.Load())
		}
		close(stop)
		probing.Wait()
		if probeErr != nil {
			return nil, probeErr
		}
		bursts = append(bursts, time.Unix(0, last).Sub(t0))
		during = append(during, probed...)
		time.Sleep(500 * time.Millisecond)
	}

	if o.memProfile != "" {
		if err := writeHeapProfile(o.memProfile); err != nil {
			return nil, err
		}
	}

	sorted := func(d []time.Duration) loadResult {
		slices.Sort(d)
		return loadResult{n: len(d), lat: d}
	}
	s, b, idleR, duringR := sorted(single), sorted(bursts), sorted(idle), sorted(during)
	goalSingle := s.percentile(50) <= 150*time.Millisecond
	goalGet := duringR.percentile(99) <= 50*time.Millisecond
	return []row{
		{fmt.Sprintf("one event to %d subscribers, to the last (p50 of %d)", o.subscribers, s.n), fmtMs(s.percentile(50)), "", "", fmtMs(150 * time.Millisecond), passMiss(goalSingle)},
		{fmt.Sprintf("one event to %d subscribers, to the last (max)", o.subscribers), fmtMs(s.percentile(100)), "", "", "", ""},
		{fmt.Sprintf("burst of %d events to %d subscribers, to the last (p50 of %d)", o.burst, o.subscribers, b.n), fmtMs(b.percentile(50)), "", "", "", ""},
		{fmt.Sprintf("burst of %d events, to the last (max)", o.burst), fmtMs(b.percentile(100)), "", "", "", ""},
		{fmt.Sprintf("GET /v1/spaces/{id} idle, %d subscribers connected: p50 / p99 (%d requests)", o.subscribers, idleR.n), fmtMs(idleR.percentile(50)) + " / " + fmtMs(idleR.percentile(99)), "", "", "", ""},
		{fmt.Sprintf("GET /v1/spaces/{id} during the bursts: p50 / p99 (%d requests)", duringR.n), fmtMs(duringR.percentile(50)) + " / " + fmtMs(duringR.percentile(99)), "", "", "p99 " + fmtMs(50*time.Millisecond), passMiss(goalGet)},
	}, nil
}

// recordLiveEventWithID records e under id, as store.RecordLiveEvent does
// (which chooses the id itself): the bench knows the id before the commit
// announces it.
func recordLiveEventWithID(ctx context.Context, db *store.DB, e *store.LiveEvent, id string) error {
	e.ID = id
	_, err := db.NewInsert().Model(e).Exec(ctx)
	return err
}

func printFanoutTable(w io.Writer, rows []row) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "measurement\tdocsapi\ttarget\tresult")
	fmt.Fprintln(tw, "-----------\t-------\t------\t------")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.what, r.docsapi, r.target, r.result)
	}
	tw.Flush()
}

// writeHeapProfile writes the heap profile (live objects as of the last
// collection, allocations since the start) to path.
func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	runtime.GC()
	return pprof.Lookup("heap").WriteTo(f, 0)
}
