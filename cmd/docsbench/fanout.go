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
//
// The limits, measured in the same run (fanoutbare.go): each single event
// alternates with one of a bare broadcast loop writing the bytes docsapi
// wrote for an event to as many websockets, of a second subscribers'
// process; the probe during the bursts is compared with the same probe
// idle (2 s before the events, 400 ms after each burst). Goals:
// fanoutGoalP50, fanoutGoalMax, fanoutGoalGet.

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
		conn, send, err := subscribe(ctx, c.URL, c.Token, c.Space)
		if err != nil {
			return fmt.Errorf("subscriber %d: %w", i, err)
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

// subscribe dials url and subscribes to space's events with fanoutQuery
// (id "s"), as a client of graphql-transport-ws; send writes a message
// of the protocol.
func subscribe(ctx context.Context, url, token, space string) (conn *websocket.Conn, send func(m any) error, err error) {
	conn, _, err = websocket.Dial(ctx, url, &websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}})
	if err != nil {
		return nil, nil, err
	}
	send = func(m any) error {
		data, _ := json.Marshal(m)
		return conn.Write(ctx, websocket.MessageText, data)
	}
	err = send(map[string]any{"type": "connection_init", "payload": map[string]string{"Authorization": "Bearer " + token}})
	if err == nil {
		var data []byte
		if _, data, err = conn.Read(ctx); err == nil && !bytes.Contains(data, []byte("connection_ack")) {
			err = fmt.Errorf("no ack: %s", data)
		}
	}
	if err == nil {
		err = send(map[string]any{"id": "s", "type": "subscribe", "payload": map[string]any{"query": fanoutQuery, "variables": map[string]any{"s": space}}})
	}
	if err != nil {
		conn.CloseNow()
		return nil, nil, err
	}
	return conn, send, nil
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

// fanoutClients is a subscribers' process, its arrivals reported to watch.
type fanoutClients struct {
	stdin      io.WriteCloser
	cmd        *exec.Cmd
	unexpected atomic.Pointer[string] // the first message other than an event, ping or pong
}

// startFanoutClients starts a subscribers' process (this program again)
// of n websockets to url.
func startFanoutClients(ctx context.Context, url, token, space string, n int, watch *fanoutWatch) (*fanoutClients, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	config, _ := json.Marshal(fanoutClientsConfig{URL: url, Token: token, Space: space, Subscribers: n})
	c := &fanoutClients{cmd: exec.CommandContext(ctx, self)}
	c.cmd.Env = append(os.Environ(), fanoutClientsEnv+"="+string(config))
	c.cmd.Stderr = os.Stderr
	if c.stdin, err = c.cmd.StdinPipe(); err != nil {
		return nil, err
	}
	stdout, err := c.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := c.cmd.Start(); err != nil {
		return nil, err
	}
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
				c.unexpected.CompareAndSwap(nil, &rest)
			}
		}
	}()
	return c, nil
}

// waitFor waits until subscribed() reaches n, a minute at most.
func (c *fanoutClients) waitFor(what string, n int, subscribed func() int) error {
	start := time.Now()
	for subscribed() < n {
		if time.Since(start) > time.Minute {
			msg := ""
			if p := c.unexpected.Load(); p != nil {
				msg = *p
			}
			return fmt.Errorf("%s: only %d of %d subscriptions in place after a minute (%s)", what, subscribed(), n, msg)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return nil
}

// stop ends the process (it ends with its input).
func (c *fanoutClients) stop() {
	c.stdin.Close()
	_ = c.cmd.Wait()
}

func fanoutBench(ctx context.Context, o options, db *store.DB, live *graph.LiveHub, api *apiClient, url string, out io.Writer) ([]row, error) {
	// Each subscriber holds a descriptor in the server's process (docsapi's
	// and the bare broadcast's) and one in a subscribers' process.
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
	wsURL := "ws" + strings.TrimPrefix(url, "http") + "/graphql"
	// One subscriber in this process, to read the bytes of an event.
	sample, err := subscribeSample(ctx, wsURL, api.token, space)
	if err != nil {
		return nil, err
	}
	defer sample.close()
	start := time.Now()
	base := live.Subscribers() + 1 // the sample, once subscribed

	// The subscribers' process.
	clients, err := startFanoutClients(ctx, wsURL, api.token, space, o.subscribers, watch)
	if err != nil {
		return nil, err
	}
	defer clients.stop()
	if err := clients.waitFor("docsapi", base+o.subscribers, live.Subscribers); err != nil {
		return nil, err
	}
	fmt.Fprintf(out, "fan-out: %d subscribers connected and subscribed in %s\n", o.subscribers, time.Since(start).Round(time.Millisecond))

	// The bare broadcast and its subscribers, the same program in a
	// process of its own.
	bare, err := startBareBroadcast()
	if err != nil {
		return nil, err
	}
	defer bare.close()
	start = time.Now()
	bareClients, err := startFanoutClients(ctx, bare.url, "", "", o.subscribers, watch)
	if err != nil {
		return nil, err
	}
	defer bareClients.stop()
	if err := bareClients.waitFor("bare broadcast", o.subscribers, func() int { return int(bare.ready.Load()) }); err != nil {
		return nil, err
	}
	fmt.Fprintf(out, "fan-out: %d subscribers of the bare broadcast connected in %s\n", o.subscribers, time.Since(start).Round(time.Millisecond))

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

	// A first event, untimed: the sample reads its bytes, the bare
	// broadcast's message, and every subscriber has it.
	sampleID, sampleEvent, _, err := record()
	if err != nil {
		return nil, err
	}
	message, err := sample.message(ctx, sampleID)
	if err != nil {
		return nil, err
	}
	sample.close()
	if err := wait(sampleEvent); err != nil {
		return nil, err
	}
	for gone := time.Now(); live.Subscribers() > base-1+o.subscribers; { // the sample unsubscribed
		if time.Since(gone) > 10*time.Second {
			return nil, fmt.Errorf("the sample subscriber still subscribed after 10 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	lanes := bareLanes(o.deliveryLanes)
	// One event of the bare broadcast: the same bytes, another id of the
	// same length, timed from before the first write to the last arrival.
	broadcast := func() (time.Duration, error) {
		id := store.NewID()
		msg := bytes.Replace(message, []byte(sampleID), []byte(id), 1)
		e := watch.expect(id)
		t0 := time.Now()
		if err := bare.send(ctx, msg, lanes); err != nil {
			return 0, err
		}
		if err := wait(e); err != nil {
			return 0, err
		}
		return time.Unix(0, e.last.Load()).Sub(t0), nil
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

	// One event at a time, alternating with one of the bare broadcast.
	var single, bareSingle []time.Duration
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
		d, err := broadcast()
		if err != nil {
			return nil, err
		}
		bareSingle = append(bareSingle, d)
		time.Sleep(200 * time.Millisecond)
	}

	// Bursts, with the probe beside them; between them, the probe idle
	// again.
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
		time.Sleep(100 * time.Millisecond)
		idleStop := make(chan struct{})
		time.AfterFunc(400*time.Millisecond, func() { close(idleStop) })
		more, err := probe(idleStop)
		if err != nil {
			return nil, err
		}
		idle = append(idle, more...)
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
	bs := sorted(bareSingle)
	p50 := ratio(ms(s.percentile(50)), ms(bs.percentile(50)))
	top := ratio(ms(s.percentile(100)), ms(bs.percentile(100)))
	getRatio := ratio(ms(duringR.percentile(99)), ms(idleR.percentile(99)))
	return []row{
		{fmt.Sprintf("one event to %d subscribers, to the last (p50 of %d)", o.subscribers, s.n), fmtMs(s.percentile(50)), fmtMs(bs.percentile(50)),
			fmtRatio(p50), fmt.Sprintf("<= %.2fx", fanoutGoalP50), passMiss(p50 <= fanoutGoalP50)},
		{fmt.Sprintf("one event to %d subscribers, to the last (max)", o.subscribers), fmtMs(s.percentile(100)), fmtMs(bs.percentile(100)),
			fmtRatio(top), fmt.Sprintf("<= %.2fx", fanoutGoalMax), passMiss(top <= fanoutGoalMax)},
		{fmt.Sprintf("burst of %d events to %d subscribers, to the last (p50 of %d)", o.burst, o.subscribers, b.n), fmtMs(b.percentile(50)), "", "", "", ""},
		{fmt.Sprintf("burst of %d events, to the last (max)", o.burst), fmtMs(b.percentile(100)), "", "", "", ""},
		{fmt.Sprintf("GET /v1/spaces/{id}, %d subscribers connected: during the bursts (%d requests) | idle (%d): p50", o.subscribers, duringR.n, idleR.n),
			fmtMs(duringR.percentile(50)), fmtMs(idleR.percentile(50)), fmtRatio(ratio(ms(duringR.percentile(50)), ms(idleR.percentile(50)))), "", ""},
		{"GET /v1/spaces/{id} during the bursts | idle: p99", fmtMs(duringR.percentile(99)), fmtMs(idleR.percentile(99)),
			fmtRatio(getRatio), fmt.Sprintf("<= %.0fx", fanoutGoalGet), passMiss(getRatio <= fanoutGoalGet)},
	}, nil
}

// The fan-out's goals, ratios to limits measured in the same run: issue
// 29's absolute goals (one event to 5,000 subscribers p50 <= 100 ms and
// slowest <= 150 ms; GET space during the bursts p99 <= 25 ms) divided by
// the limits as this project's 2-vCPU VM measured them, the median of three
// default runs (2026-11-29, load average 3-4): the bare broadcast's p50
// (73.4, 88.4, 68.8 ms: 100 / 73.4 = 1.36) and slowest (90.8, 133.4,
// 112.4 ms: 150 / 112.4 = 1.33), the idle GET's p99 (0.33, 0.32, 0.31 ms:
// 25 / 0.32 = 78). A machine twice as fast or slow moves both sides alike.
const (
	fanoutGoalP50 = 1.35 // docsapi's p50 ÷ the bare broadcast's
	fanoutGoalMax = 1.35 // docsapi's slowest ÷ the bare broadcast's
	fanoutGoalGet = 75.0 // GET space's p99 during the bursts ÷ idle
)

func printFanoutTable(w io.Writer, rows []row) {
	writeRows(w, "docsapi", "limit", rows)
	fmt.Fprintln(w)
	fmt.Fprintln(w, "ratio = docsapi / limit; events: the limit is a bare broadcast loop writing the same bytes to as many websockets of the same subscribers' program, alternating with docsapi's events; GET: the same probe while no event is delivered.")
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
