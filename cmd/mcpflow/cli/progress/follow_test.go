package progress

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"

	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/api/client"
	p "github.com/mcpflow/mcpflow/api/protocol"
	"github.com/mcpflow/mcpflow/fakes/poll"
)

// wait bounds every wait of these tests.
const wait = 10 * time.Second

// request is one JSON-RPC request the fake server got.
type request struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// script says how the fake server answers: the nth subscription (from 1)
// with subs[n-1] (the last one past the end), runs.inspect with inspect, anything else with an empty
// object; hangUp closes the connection after the first answer.
type script struct {
	subs    []answer
	inspect any
	hangUp  bool
}

// answer answers subscription n, asked for after after, with frames: the
// first is the reply, the next are notifications.
type answer func(send func(any), n int, after int64)

// events answers a subscription as active, the run's last event being
// last, then sends the events of s numbered from..to (to 0: the last);
// from 0 sends those after the subscription's after_sequence.
func events(s *stream, last, from, to int64) answer {
	return func(send func(any), n int, after int64) {
		send(p.SubscribeRunResult{SubscriptionID: subID(n), RunID: s.run, Status: "running", LastSequence: last, Active: true})
		from, to := cmp.Or(from, after+1), cmp.Or(to, int64(len(s.events)))
		for _, e := range s.events[from-1 : to] {
			send(notification(p.NotifyRunEvent, p.RunEventNotification{SubscriptionID: subID(n), RunEvent: e}))
		}
	}
}

// then is first followed by more frames.
func then(first answer, more ...func(n int) any) answer {
	return func(send func(any), n int, after int64) {
		first(send, n, after)
		for _, m := range more {
			send(m(n))
		}
	}
}

func notification(method string, params any) map[string]any {
	return map[string]any{"jsonrpc": "2.0", "method": method, "params": params}
}

func subID(n int) string { return "sub_" + strconv.Itoa(n) }

// fakeServer answers WebSocket connections as a script says; it keeps
// the after_sequence of each subscription asked for (-1 for none).
type fakeServer struct {
	url string

	mu     sync.Mutex
	afters []int64
}

// serve starts a fake server that answers each request as sc says, on
// the connection's goroutine. The first frame a subscription sends is
// taken as its reply.
func serve(t *testing.T, sc script) *fakeServer {
	t.Helper()
	fs := &fakeServer{}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := (&websocket.Upgrader{}).Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer ws.Close()
		for {
			var req request
			if err := ws.ReadJSON(&req); err != nil {
				return
			}
			replied := false
			send := func(frame any) {
				if !replied {
					frame, replied = map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": frame}, true
				}
				_ = ws.WriteJSON(frame)
			}
			switch n, after := fs.subscribed(req); {
			case n > 0 && len(sc.subs) > 0:
				sc.subs[min(n, len(sc.subs))-1](send, n, after)
			case req.Method == p.MethodRunsInspect && sc.inspect != nil:
				send(sc.inspect)
			default:
				send(map[string]any{})
			}
			if sc.hangUp {
				return
			}
		}
	}))
	t.Cleanup(hs.Close)
	fs.url = "ws" + strings.TrimPrefix(hs.URL, "http")
	return fs
}

// subscribed notes a subscription request: its number from 1 (0 for
// another request) and its after_sequence (0 for none).
func (fs *fakeServer) subscribed(req request) (int, int64) {
	if req.Method != p.MethodRunsSubscribe {
		return 0, 0
	}
	var params p.SubscribeRunParams
	_ = json.Unmarshal(req.Params, &params)
	after := int64(-1)
	if params.AfterSequence != nil {
		after = *params.AfterSequence
	}
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.afters = append(fs.afters, after)
	return len(fs.afters), max(after, 0)
}

func (fs *fakeServer) subscriptions() []int64 {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return append([]int64(nil), fs.afters...)
}

func (fs *fakeServer) dial(t *testing.T) *client.Client {
	t.Helper()
	c, err := client.Dial(bounded(t), fs.url)
	is.New(t).NoErr(err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// follow runs Follow on run_1 of sc's server in plain mode.
func follow(t *testing.T, sc script) (*fakeServer, string, Final, error) {
	t.Helper()
	fs := serve(t, sc)
	var out bytes.Buffer
	final, err := Follow(bounded(t), fs.dial(t), "run_1", &out, Options{})
	return fs, out.String(), final, err
}

func bounded(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	t.Cleanup(cancel)
	return ctx
}

func TestFollowSubscribesAgainAfterALag(t *testing.T) {
	is := is.New(t)
	s := sequential()
	lagged := func(n int) any {
		return notification(p.NotifyRunLagged, p.LaggedNotification{SubscriptionID: subID(n), Cursor: 3, Reason: p.LagBufferFull})
	}
	stale := func(n int) any { // nothing a lagged subscription sends counts
		return notification(p.NotifyRunEvent, p.RunEventNotification{SubscriptionID: subID(n), RunEvent: s.events[5]})
	}
	fs, out, final, err := follow(t, script{subs: []answer{then(events(s, 0, 1, 3), lagged, stale), events(s, 3, 0, 0)}})
	is.NoErr(err)
	is.Equal(fs.subscriptions(), []int64{-1, 3}) // from the start, then after the lag's cursor
	is.Equal(out, s.play(Options{}))             // each event once, in order
	is.Equal(final, Final{Status: "completed", Outcome: "ok", Output: map[string]any{"x": map[string]any{"slept_ms": float64(300)}, "n": float64(2)}})
}

func TestFollowFillsAGapBySubscribingAgain(t *testing.T) {
	is := is.New(t)
	s := sequential()
	after4 := func(n int) any { // 3 went missing
		return notification(p.NotifyRunEvent, p.RunEventNotification{SubscriptionID: subID(n), RunEvent: s.events[3]})
	}
	fs, out, final, err := follow(t, script{subs: []answer{then(events(s, 0, 1, 2), after4), events(s, 5, 0, 0)}})
	is.NoErr(err)
	is.Equal(fs.subscriptions(), []int64{-1, 2}) // again after the last event in order
	is.Equal(out, s.play(Options{}))             // each event once, in order
	is.Equal(final.Status, "completed")
}

// gate is a writer whose writes wait until it is opened.
type gate struct {
	open chan struct{}
	mu   sync.Mutex
	buf  bytes.Buffer
}

func (g *gate) Write(b []byte) (int, error) {
	<-g.open
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.buf.Write(b)
}

func TestFollowSubscribesAgainAfterDroppingNotifications(t *testing.T) {
	is := is.New(t)
	defer func(n int) { queueSize = n }(queueSize)
	queueSize = 2
	s := foreach() // 15 events
	fs := serve(t, script{subs: []answer{events(s, int64(len(s.events)), 0, 0)}})
	out := &gate{open: make(chan struct{})}
	f := newFollower(fs.dial(t), s.run, out, Options{})
	type result struct {
		final Final
		err   error
	}
	done := make(chan result, 1)
	go func() {
		final, err := f.run(bounded(t))
		done <- result{final, err}
	}()
	// The first event's line waits at the gate while the queue fills.
	poll.For(t, "notifications dropped once the queue is full", wait, f.lost.Load)
	close(out.open)
	var res result
	select {
	case res = <-done:
	case <-time.After(wait):
		is.Fail() // Follow ends once the gate opens
	}
	is.NoErr(res.err)
	is.Equal(res.final.Status, "completed")
	is.Equal(out.buf.String(), s.play(Options{})) // nothing missing, nothing twice
	afters := fs.subscriptions()
	is.True(len(afters) >= 2) // subscribed again after the drop
	for i := 1; i < len(afters); i++ {
		is.True(afters[i] > afters[i-1]) // each subscription made again gets further than the one before
	}
}

func TestFollowInspectsARunThatHasNoEventsToSend(t *testing.T) {
	is := is.New(t)
	over := func(send func(any), n int, _ int64) {
		send(p.SubscribeRunResult{SubscriptionID: subID(n), RunID: "run_1", Status: "failed", Active: false})
	}
	fs := serve(t, script{subs: []answer{over}, inspect: map[string]any{"run_id": "run_1", "status": "failed", "error": "step a: boom", "output": nil}})
	var out bytes.Buffer
	final, err := Follow(bounded(t), fs.dial(t), "run_1", &out, Options{Terminal: true})
	is.NoErr(err)
	is.Equal(final, Final{Status: "failed", Error: "step a: boom"})
	is.Equal(out.String(), "run run_1: failed\nerror: step a: boom\n") // the end from the run's record
}

func TestFollowProbesASilentRunAndCatchesUp(t *testing.T) {
	is := is.New(t)
	defer func(d time.Duration) { idleProbe = d }(idleProbe)
	idleProbe = 300 * time.Millisecond // event 1 comes right after the reply, well before
	s := sequential()
	silent := events(s, 0, 1, 1) // then nothing more
	fs, out, final, err := follow(t, script{subs: []answer{silent, events(s, 9, 0, 0)}, inspect: map[string]any{"run_id": "run_1", "status": "completed"}})
	is.NoErr(err)
	is.Equal(fs.subscriptions(), []int64{-1, 1}) // the probe saw the run had moved on
	is.Equal(out, s.play(Options{}))
	is.Equal(final.Status, "completed")
}

func TestFollowReportsALostConnection(t *testing.T) {
	is := is.New(t)
	defer func(d time.Duration) { idleProbe = d }(idleProbe)
	idleProbe = 20 * time.Millisecond
	_, _, _, err := follow(t, script{subs: []answer{events(sequential(), 0, 1, 1)}, hangUp: true})
	is.True(errors.Is(err, client.ErrClosed)) // the probe finds the connection gone
}

// signal is a writer that says when it was first written to.
type signal struct {
	once    sync.Once
	written chan struct{}
}

func (s *signal) Write(b []byte) (int, error) {
	s.once.Do(func() { close(s.written) })
	return len(b), nil
}

func TestFollowStopsWithItsContext(t *testing.T) {
	is := is.New(t)
	fs := serve(t, script{subs: []answer{events(sequential(), 0, 1, 1)}})
	ctx, cancel := context.WithCancel(bounded(t))
	out := &signal{written: make(chan struct{})}
	go func() {
		select {
		case <-out.written:
		case <-time.After(wait):
		}
		cancel()
	}()
	final, err := Follow(ctx, fs.dial(t), "run_1", out, Options{Terminal: true})
	is.True(errors.Is(err, context.Canceled)) // the caller's context ends it
	is.Equal(final.Status, "running")         // as far as it got
}

// interrupted is a run that paused at an interrupt, was resumed and
// completed.
func interrupted() *stream {
	return (&stream{run: "run_1"}).status(0, "running", "", "", nil).
		add(10, p.RunEvent{Kind: store.RunEventInterrupted, Interrupt: interruptAt("approve")}).
		status(10, "interrupted", "", "", nil).
		status(500, "running", "", "", nil).
		status(500, "completed", "ok", "", map[string]any{})
}

func TestFollowEndsAtTheInterruptTheRunWaitsIn(t *testing.T) {
	for _, tc := range []struct {
		last   int64 // the run's last event when subscribed
		status string
		end    string
	}{
		{3, "interrupted", "run run_1: interrupted, in 10ms\n"},                       // waiting: Follow ends there
		{5, "completed", "run run_1: completed, outcome ok, in 500ms\noutput:\n{}\n"}, // resumed since: the interrupt is history
	} {
		t.Run(tc.status, func(t *testing.T) {
			is := is.New(t)
			_, out, final, err := follow(t, script{subs: []answer{events(interrupted(), tc.last, 0, 0)}})
			is.NoErr(err)
			is.Equal(final.Status, tc.status)
			is.True(strings.Contains(out, "approve: interrupt interrupt:approve (approval) waits for a resume\n"))
			is.True(strings.HasSuffix(out, tc.end)) // the end it reports
		})
	}
}
