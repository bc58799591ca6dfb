package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/coder/websocket"
	"github.com/uptrace/bun"

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
// the bursts. The subscribers run in a process of their own (this program
// again, fanoutClientsEnv set), as clients would on other machines: on the
// same 2 CPUs, but not in the server's scheduler, where thousands of
// client goroutines woken by their sockets would queue the probe's
// request behind them. The probe runs in the bench's process, beside the
// server, as a client of the API would.

// fanoutQuery selects little: the figures are of delivery, not encoding.
const fanoutQuery = `subscription($s: ID!) { spaceEvents(spaceId: $s) { id type } }`

// fanoutWatch is the bench's side: the events being measured, each done
// once the subscribers' process reports its last arrival.
type fanoutWatch struct {
	mu      sync.Mutex
	waiting map[string]*fanoutEvent
}

type fanoutEvent struct {
	last atomic.Int64 // unix nanoseconds of the last subscriber's arrival
	done chan struct{}
}

func (w *fanoutWatch) expect(id string) *fanoutEvent {
	e := &fanoutEvent{done: make(chan struct{})}
	w.mu.Lock()
	w.waiting[id] = e
	w.mu.Unlock()
	return e
}

// arrived records that every subscriber had event id at last (unix
// nanoseconds: the two processes share the machine's clock).
func (w *fanoutWatch) arrived(id string, last int64) {
	w.mu.Lock()
	e := w.waiting[id]
	delete(w.waiting, id)
	w.mu.Unlock()
	if e != nil {
		e.last.Store(last)
		close(e.done)
	}
}

// fanoutClientsEnv holds, in the subscribers' process, its
// fanoutClientsConfig as JSON.
const fanoutClientsEnv = "DOCSBENCH_FANOUT_CLIENTS"

type fanoutClientsConfig struct {
	URL, Token, Space string
	Subscribers       int
}

// The subscribers' process reports on its standard output, a line each:
// "subscribed" once every subscription is sent, "arrived <event id> <unix
// nanoseconds>" once every subscriber has an event (with the time of the
// last arrival), "unexpected <message>" for the first message that is
// neither an event nor a ping or pong. It ends when its standard input
// closes.

// runFanoutClients is the subscribers' process.
func runFanoutClients(config string) error {
	var c fanoutClientsConfig
	if err := json.Unmarshal([]byte(config), &c); err != nil {
		return err
	}
	if err := raiseFileLimit(uint64(c.Subscribers + 100)); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { // the bench closes standard input when it is done
		_, _ = io.Copy(io.Discard, os.Stdin)
		cancel()
	}()
	var mu sync.Mutex
	report := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(os.Stdout, format+"\n", args...)
	}
	type arrivals struct {
		left atomic.Int64
		last atomic.Int64
	}
	var seen sync.Map // event id -> *arrivals
	arrived := func(id string) {
		now := time.Now().UnixNano()
		v, _ := seen.LoadOrStore(id, new(arrivals))
		a := v.(*arrivals)
		for {
			last := a.last.Load()
			if now <= last || a.last.CompareAndSwap(last, now) {
				break
			}
		}
		if a.left.Add(1) == int64(c.Subscribers) {
			report("arrived %s %d", id, a.last.Load())
			seen.Delete(id)
		}
	}
	var unexpected atomic.Bool
	var conns sync.WaitGroup
	defer conns.Wait()
	defer cancel()
	err := parallel(ctx, 32, c.Subscribers, func(_ context.Context, i int) error {
		conn, _, err := websocket.Dial(ctx, c.URL, &websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}})
		if err != nil {
			return err
		}
		send := func(m any) error {
			data, _ := json.Marshal(m)
			return conn.Write(ctx, websocket.MessageText, data)
		}
		if err := send(map[string]any{"type": "connection_init", "payload": map[string]string{"Authorization": "Bearer " + c.Token}}); err != nil {
			return err
		}
		if _, data, err := conn.Read(ctx); err != nil || !bytes.Contains(data, []byte("connection_ack")) {
			return fmt.Errorf("subscriber %d: no ack: %s %v", i, data, err)
		}
		if err := send(map[string]any{"id": "s", "type": "subscribe", "payload": map[string]any{"query": fanoutQuery, "variables": map[string]any{"s": c.Space}}}); err != nil {
			return err
		}
		conns.Go(func() {
			defer conn.CloseNow()
			var m struct {
				Type    string
				Payload struct {
					Data struct{ SpaceEvents struct{ ID string } }
				}
			}
			for {
				_, data, err := conn.Read(ctx)
				if err != nil {
					return
				}
				if bytes.Contains(data, []byte(`"ping"`)) {
					_ = send(map[string]any{"type": "pong"})
					continue
				}
				if json.Unmarshal(data, &m) == nil && m.Type == "next" {
					arrived(m.Payload.Data.SpaceEvents.ID)
				} else if !bytes.Contains(data, []byte(`"pong"`)) && unexpected.CompareAndSwap(false, true) {
					report("unexpected %s", bytes.ReplaceAll(data, []byte("\n"), nil))
				}
			}
		})
		return nil
	})
	if err != nil {
		return fmt.Errorf("subscribers: %w", err)
	}
	report("subscribed")
	<-ctx.Done()
	return nil
}

// raiseFileLimit lifts the soft limit on open files to the hard one: each
// subscriber holds a descriptor in the server's process and one in the
// subscribers'.
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
		return fmt.Errorf("the subscribers need about %d open files; the limit is %d (raise it with ulimit -n)", need, l.Cur)
	}
	return nil
}

func fanoutBench(ctx context.Context, o options, db *store.DB, live *graph.LiveHub, api *apiClient, url string, out io.Writer) ([]row, error) {
	if err := raiseFileLimit(uint64(o.subscribers + 200)); err != nil {
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
	start := time.Now()
	base := live.Subscribers()

	// The subscribers' process.
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	config, _ := json.Marshal(fanoutClientsConfig{URL: "ws" + strings.TrimPrefix(url, "http") + "/graphql",
		Token: api.token, Space: space, Subscribers: o.subscribers})
	clients := exec.CommandContext(ctx, self)
	clients.Env = append(os.Environ(), fanoutClientsEnv+"="+string(config))
	clients.Stderr = os.Stderr
	stdin, err := clients.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := clients.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := clients.Start(); err != nil {
		return nil, err
	}
	defer func() {
		stdin.Close() // the process ends with its input
		_ = clients.Wait()
	}()
	// The first message other than an event, ping or pong, to explain a
	// subscription that did not start.
	var unexpected atomic.Pointer[string]
	go func() {
		lines := bufio.NewScanner(stdout)
		lines.Buffer(nil, 1<<20)
		for lines.Scan() {
			what, rest, _ := strings.Cut(lines.Text(), " ")
			switch what {
			case "arrived":
				id, at, _ := strings.Cut(rest, " ")
				if last, err := strconv.ParseInt(at, 10, 64); err == nil {
					watch.arrived(id, last)
				}
			case "unexpected":
				unexpected.CompareAndSwap(nil, &rest)
			}
		}
	}()
	for live.Subscribers() < base+o.subscribers {
		if time.Since(start) > time.Minute {
			msg := ""
			if p := unexpected.Load(); p != nil {
				msg = *p
			}
			return nil, fmt.Errorf("only %d of %d subscriptions in place after a minute (%s)", live.Subscribers()-base, o.subscribers, msg)
		}
		time.Sleep(10 * time.Millisecond)
	}
	fmt.Fprintf(out, "fan-out: %d subscribers connected and subscribed in %s\n", o.subscribers, time.Since(start).Round(time.Millisecond))

	record := func() (string, *fanoutEvent, time.Time, error) {
		var e *fanoutEvent
		t0 := time.Now()
		ev := &store.LiveEvent{Type: store.LiveContentUpdated, OrganizationID: org, SpaceID: &space, CreatedAt: t0}
		// In a transaction, as a change records it: the event's id is
		// known (and expected) before the commit announces it.
		err := store.RunInTx(ctx, db, func(ctx context.Context, tx bun.Tx) error {
			if err := store.RecordLiveEvent(ctx, tx, ev); err != nil {
				return err
			}
			e = watch.expect(ev.ID)
			return nil
		})
		return ev.ID, e, t0, err
	}
	wait := func(e *fanoutEvent) error {
		select {
		case <-e.done:
			return nil
		case <-time.After(time.Minute):
			return fmt.Errorf("an event did not reach all %d subscribers in a minute", o.subscribers)
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
	// Issue 29's goals.
	goalSingle := s.percentile(50) <= 100*time.Millisecond
	goalSingleMax := s.percentile(100) <= 150*time.Millisecond
	goalGet := duringR.percentile(99) <= 25*time.Millisecond
	return []row{
		{fmt.Sprintf("one event to %d subscribers, to the last (p50 of %d)", o.subscribers, s.n), fmtMs(s.percentile(50)), "", "", fmtMs(100 * time.Millisecond), passMiss(goalSingle)},
		{fmt.Sprintf("one event to %d subscribers, to the last (max)", o.subscribers), fmtMs(s.percentile(100)), "", "", fmtMs(150 * time.Millisecond), passMiss(goalSingleMax)},
		{fmt.Sprintf("burst of %d events to %d subscribers, to the last (p50 of %d)", o.burst, o.subscribers, b.n), fmtMs(b.percentile(50)), "", "", "", ""},
		{fmt.Sprintf("burst of %d events, to the last (max)", o.burst), fmtMs(b.percentile(100)), "", "", "", ""},
		{fmt.Sprintf("GET /v1/spaces/{id} idle, %d subscribers connected: p50 / p99 (%d requests)", o.subscribers, idleR.n), fmtMs(idleR.percentile(50)) + " / " + fmtMs(idleR.percentile(99)), "", "", "", ""},
		{fmt.Sprintf("GET /v1/spaces/{id} during the bursts: p50 / p99 (%d requests)", duringR.n), fmtMs(duringR.percentile(50)) + " / " + fmtMs(duringR.percentile(99)), "", "", "p99 " + fmtMs(25*time.Millisecond), passMiss(goalGet)},
	}, nil
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
