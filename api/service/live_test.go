package service_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/metrics"
	"github.com/mcpflow/mcpflow/actors/metrics/metricstest"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/store/sqlite"
	"github.com/mcpflow/mcpflow/actors/workflow"
	"github.com/mcpflow/mcpflow/api/contract"
	"github.com/mcpflow/mcpflow/api/jsonrpc"
	"github.com/mcpflow/mcpflow/api/live"
	"github.com/mcpflow/mcpflow/api/protocol"
	"github.com/mcpflow/mcpflow/api/rpc"
	"github.com/mcpflow/mcpflow/api/service"
	"github.com/mcpflow/mcpflow/fakes/poll"
)

// errGone is what a fake connection's Notify answers once it has ended.
var errGone = errors.New("connection ended")

// note is one notification a fake connection got.
type note struct {
	method string
	params map[string]any
}

// seq is the sequence number of an event notification.
func (n note) seq() int64 { f, _ := n.params["sequence"].(float64); return int64(f) }

// fakeConn is a client connection as the edge gives it to handlers. It
// records the notifications pushed to it and checks each: its params
// match the contract, and it comes after the reply that gave its
// subscription id. With a gate, Notify blocks until the gate is closed:
// a client that does not read.
type fakeConn struct {
	done      chan struct{}
	closeOnce sync.Once
	gate      chan struct{}
	arrived   chan struct{} // signalled after each notification

	mu       sync.Mutex
	notes    []note
	replied  map[string]bool // subscription ids whose reply is queued
	problems []string
}

func newConn(t *testing.T) *fakeConn {
	c := &fakeConn{done: make(chan struct{}), arrived: make(chan struct{}, 1), replied: map[string]bool{}}
	t.Cleanup(func() {
		c.close()
		c.mu.Lock()
		defer c.mu.Unlock()
		is.New(t).Equal(c.problems, nil) // every notification is well formed and after its reply
	})
	return c
}

func (c *fakeConn) Done() <-chan struct{} { return c.done }

func (c *fakeConn) close() { c.closeOnce.Do(func() { close(c.done) }) }

func (c *fakeConn) Notify(ctx context.Context, method string, params any) error {
	if c.gate != nil {
		select {
		case <-c.gate:
		case <-ctx.Done():
			return ctx.Err()
		case <-c.done:
			return errGone
		}
	}
	select {
	case <-c.done:
		return errGone
	default:
	}
	var problems []string
	if err := contract.Default().ValidateNotification(method, params); err != nil {
		problems = append(problems, fmt.Sprintf("%s: %v", method, err))
	}
	data, err := json.Marshal(params)
	var decoded map[string]any
	if err == nil {
		err = json.Unmarshal(data, &decoded)
	}
	if err != nil {
		problems = append(problems, fmt.Sprintf("%s: %v", method, err))
	}
	c.mu.Lock()
	if id, _ := decoded["subscription_id"].(string); !c.replied[id] {
		problems = append(problems, fmt.Sprintf("%s of subscription %q before its reply", method, id))
	}
	c.problems = append(c.problems, problems...)
	c.notes = append(c.notes, note{method: method, params: decoded})
	c.mu.Unlock()
	select {
	case c.arrived <- struct{}{}:
	default:
	}
	return nil
}

// call invokes a method as the edge does on this connection: the reply
// is queued (the subscription id noted) before release.
func (c *fakeConn) call(t *testing.T, svc *service.Service, method, params string) (json.RawMessage, error) {
	t.Helper()
	ctx, release := rpc.WithNotifier(bounded(t), c)
	defer release()
	h, ok := svc.Methods()[method]
	is.New(t).True(ok) // the method is in the table
	res, err := h.Handler(ctx, json.RawMessage(params))
	if err != nil {
		return nil, err
	}
	data, err := json.Marshal(res)
	if err != nil {
		return nil, err
	}
	if err := contract.Default().ValidateResult(method, res); err != nil {
		t.Errorf("%s: result %s: %v", method, data, err)
	}
	var r struct {
		SubscriptionID string `json:"subscription_id"`
	}
	if json.Unmarshal(data, &r) == nil && r.SubscriptionID != "" {
		c.mu.Lock()
		c.replied[r.SubscriptionID] = true
		c.mu.Unlock()
	}
	return data, nil
}

// must calls a method that must succeed and decodes its answer.
func must[T any](t *testing.T, c *fakeConn, svc *service.Service, method, params string) T {
	t.Helper()
	is := is.New(t)
	is.Helper()
	data, err := c.call(t, svc, method, params)
	is.NoErr(err) // the method succeeds
	var out T
	is.NoErr(json.Unmarshal(data, &out))
	return out
}

// until waits, up to patience, for the notifications to satisfy done and
// returns them.
func (c *fakeConn) until(t *testing.T, what string, done func([]note) bool) []note {
	t.Helper()
	deadline := time.After(patience)
	for {
		c.mu.Lock()
		notes := slices.Clone(c.notes)
		c.mu.Unlock()
		if done(notes) {
			return notes
		}
		select {
		case <-c.arrived:
		case <-deadline:
			t.Fatalf("no %s after %s; got %d notifications: %v", what, patience, len(notes), notes)
		}
	}
}

// untilEnd waits for the event that ends the run, or a lag notification.
func (c *fakeConn) untilEnd(t *testing.T) []note {
	t.Helper()
	return c.until(t, "end of the run or lag", func(notes []note) bool {
		return len(notes) > 0 && (ends(notes[len(notes)-1]) || notes[len(notes)-1].method == protocol.NotifyRunLagged)
	})
}

// ends reports whether n is the event that ends a run.
func ends(n note) bool {
	st, _ := n.params["status"].(map[string]any)
	return n.method == protocol.NotifyRunEvent && st["terminal"] == true
}

// seqs lists the sequence numbers of event notifications.
func seqs(notes []note) []int64 {
	out := []int64{}
	for _, n := range notes {
		if n.method == protocol.NotifyRunEvent || n.method == protocol.NotifyAdminEvent {
			out = append(out, n.seq())
		}
	}
	return out
}

// span is from, from+1, ..., to.
func span(from, to int64) []int64 {
	out := []int64{}
	for i := from; i <= to; i++ {
		out = append(out, i)
	}
	return out
}

// eventKinds lists "kind node" or "kind status" of run event notifications.
func runEventKinds(notes []note) []string {
	out := []string{}
	for _, n := range notes {
		kind, _ := n.params["kind"].(string)
		step, _ := n.params["step"].(map[string]any)
		st, _ := n.params["status"].(map[string]any)
		switch {
		case step != nil:
			out = append(out, fmt.Sprintf("%s %v", kind, step["node_id"]))
		case st != nil:
			out = append(out, fmt.Sprintf("%s %v", kind, st["status"]))
		default:
			out = append(out, kind)
		}
	}
	return out
}

// liveService is a Service over st, observed by a hub, and nothing else:
// enough for subscriptions to runs written straight to the store.
func liveService(t *testing.T, st store.Store, opts live.Options) (*service.Service, *live.Hub) {
	t.Helper()
	hub := live.NewHub(st, opts)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), patience)
		defer cancel()
		is.New(t).NoErr(hub.Close(ctx)) // every goroutine of the hub returns
	})
	return &service.Service{Store: store.Observed(st, hub, opts.Metrics), Hub: hub}, hub
}

// runWriter commits a run step by step, as a run actor does: one event
// per step, one for the start and one for the end.
type runWriter struct {
	t  *testing.T
	st store.Store
	r  store.Run
}

func newRun(t *testing.T, st store.Store, id string) *runWriter {
	t.Helper()
	w := &runWriter{t: t, st: st, r: store.Run{ID: id, Status: store.RunRunning, UpdatedAt: time.Now().UTC()}}
	is.New(t).NoErr(st.CreateRun(t.Context(), w.r, nil))
	return w
}

func (w *runWriter) step(node string) {
	w.t.Helper()
	w.r.TraceCount++
	entry := workflow.TraceEntry{FrameID: "root", NodeID: node, StepType: "node", Outcome: "ok", NextNodeID: "next",
		StateChanges: workflow.Object{"state." + node: 1.0}}
	is.New(w.t).NoErr(w.st.RecordProgress(w.t.Context(), w.r, []workflow.TraceEntry{entry}))
}

func (w *runWriter) steps(n int) {
	w.t.Helper()
	for i := range n {
		w.step(fmt.Sprintf("s%d", i))
	}
}

func (w *runWriter) finish() {
	w.t.Helper()
	w.r.Status, w.r.Outcome, w.r.Output = store.RunCompleted, ptr("ok"), workflow.Object{"done": true}
	is.New(w.t).NoErr(w.st.RecordProgress(w.t.Context(), w.r, nil))
}

// waitOpen polls until the hub holds n subscriptions.
func waitOpen(t *testing.T, hub *live.Hub, n int) {
	t.Helper()
	poll.For(t, fmt.Sprintf("%d subscriptions open", n), patience, func() bool { return hub.OpenSubscriptions() == n })
}

func TestARunSubscriptionDeliversEveryEventInOrderThenEnds(t *testing.T) {
	is := is.New(t)
	svc, hub := liveService(t, store.NewMemory(), live.Options{})
	w := newRun(t, svc.Store, "run-1")
	w.step("a")

	conn := newConn(t)
	res := must[protocol.SubscribeRunResult](t, conn, svc, protocol.MethodRunsSubscribe, `{"run_id":"run-1"}`)
	is.Equal(res.RunID, "run-1")
	is.Equal(res.Status, "running")
	is.Equal(res.LastSequence, int64(2))
	is.True(res.Active)
	w.step("b")
	w.step("c")
	w.finish()

	notes := conn.untilEnd(t)
	is.Equal(seqs(notes), span(1, 5)) // every event, in order, once
	is.Equal(runEventKinds(notes), []string{"status running", "step_finished a", "step_finished b", "step_finished c", "status completed"})
	is.Equal(notes[1].params["step"].(map[string]any)["state_changes"], []any{"state.a"}) // the state-change summary
	is.Equal(notes[4].params["status"].(map[string]any)["output"], map[string]any{"done": true})
	waitOpen(t, hub, 0) // the run's end ends the subscription
	gone := must[protocol.UnsubscribeResult](t, conn, svc, protocol.MethodRunsUnsubscribe, `{"subscription_id":"`+res.SubscriptionID+`"}`)
	is.True(!gone.Unsubscribed) // nothing left to unsubscribe
}

func TestAReconnectingSubscriberResumesWithNoGapOrDuplicate(t *testing.T) {
	is := is.New(t)
	svc, hub := liveService(t, store.NewMemory(), live.Options{})
	w := newRun(t, svc.Store, "run-1")
	w.steps(3)

	first := newConn(t)
	must[protocol.SubscribeRunResult](t, first, svc, protocol.MethodRunsSubscribe, `{"run_id":"run-1"}`)
	before := first.until(t, "four events", func(n []note) bool { return len(n) == 4 })
	first.close() // the connection drops mid-run
	waitOpen(t, hub, 0)
	w.steps(2) // committed while no one listens

	second := newConn(t)
	cursor := before[len(before)-1].seq()
	res := must[protocol.SubscribeRunResult](t, second, svc, protocol.MethodRunsSubscribe, fmt.Sprintf(`{"run_id":"run-1","after_sequence":%d}`, cursor))
	is.Equal(res.LastSequence, int64(6))
	w.step("last")
	w.finish()
	after := second.untilEnd(t)
	is.Equal(seqs(slices.Concat(before, after)), span(1, 8)) // no gap, no duplicate
}

func TestAFinishedRunReplaysFromTheStoreAfterARestart(t *testing.T) {
	is := is.New(t)
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "mcpflow.db")
	st, err := sqlite.Open(ctx, path)
	is.NoErr(err)
	w := newRun(t, st, "run-1")
	w.steps(3)
	w.finish()
	is.NoErr(st.Close())

	st, err = sqlite.Open(ctx, path) // a restart
	is.NoErr(err)
	t.Cleanup(func() { is.NoErr(st.Close()) })
	svc, hub := liveService(t, st, live.Options{Buffer: 2}) // replays page by page
	conn := newConn(t)
	res := must[protocol.SubscribeRunResult](t, conn, svc, protocol.MethodRunsSubscribe, `{"run_id":"run-1"}`)
	is.Equal(res.Status, "completed")
	is.True(res.Active)
	notes := conn.untilEnd(t)
	is.Equal(seqs(notes), span(1, 5))
	is.Equal(runEventKinds(notes), []string{"status running", "step_finished s0", "step_finished s1", "step_finished s2", "status completed"})
	waitOpen(t, hub, 0)

	again := newConn(t)
	res = must[protocol.SubscribeRunResult](t, again, svc, protocol.MethodRunsSubscribe, `{"run_id":"run-1","after_sequence":2}`)
	is.Equal(seqs(again.untilEnd(t)), span(3, 5)) // resumes after the cursor
	res = must[protocol.SubscribeRunResult](t, again, svc, protocol.MethodRunsSubscribe, `{"run_id":"run-1","after_sequence":5}`)
	is.True(!res.Active) // the client has everything: nothing more comes
	waitOpen(t, hub, 0)
}

func TestASlowSubscriberGetsOneLagNotificationAndResumesFromItsCursor(t *testing.T) {
	is := is.New(t)
	const buffer = 4
	m := metrics.New()
	svc, hub := liveService(t, store.NewMemory(), live.Options{Buffer: buffer, Metrics: m})
	w := newRun(t, svc.Store, "run-1")

	slow := newConn(t)
	slow.gate = make(chan struct{}) // reads nothing until opened
	res := must[protocol.SubscribeRunResult](t, slow, svc, protocol.MethodRunsSubscribe, `{"run_id":"run-1"}`)
	w.steps(40) // a flood

	poll.For(t, "the subscription lags", patience, func() bool {
		n, lagging, ok := hub.Buffered(res.SubscriptionID)
		is.True(ok)          // still open: it waits to tell the client
		is.True(n <= buffer) // memory stays bounded
		return lagging
	})
	close(slow.gate) // the client reads again
	notes := slow.untilEnd(t)
	is.Equal(len(notes), 2) // the event it was sending, then the lag
	is.Equal(notes[0].seq(), int64(1))
	lag := notes[1]
	is.Equal(lag.method, protocol.NotifyRunLagged)
	is.Equal(lag.params["reason"], protocol.LagBufferFull)
	is.Equal(lag.params["cursor"], 1.0) // the last sequence delivered
	is.Equal(lag.params["run_id"], "run-1")
	waitOpen(t, hub, 0) // the lag ends the subscription
	f := metricstest.Gather(t, m.Registry())
	lags, _ := f.Value("mcpflow_subscription_lag_total", "topic", "run")
	is.Equal(lags, 1.0) // counted once, by kind: never the run id
	commits, _ := f.Value("mcpflow_store_commit_duration_seconds", "operation", "record_progress")
	is.True(commits >= 40) // every step went through the observed store

	// It subscribes again after its cursor: the rest comes from the store.
	again := newConn(t)
	must[protocol.SubscribeRunResult](t, again, svc, protocol.MethodRunsSubscribe, `{"run_id":"run-1","after_sequence":1}`)
	w.finish()
	is.Equal(seqs(again.untilEnd(t)), span(2, 42))
}

func TestUnsubscribeAndTheConnectionsEndEndSubscriptions(t *testing.T) {
	is := is.New(t)
	svc, hub := liveService(t, store.NewMemory(), live.Options{MaxSubscriptions: 2})
	newRun(t, svc.Store, "run-1")
	conn, other := newConn(t), newConn(t)
	sub := func(c *fakeConn) string {
		return must[protocol.SubscribeRunResult](t, c, svc, protocol.MethodRunsSubscribe, `{"run_id":"run-1"}`).SubscriptionID
	}
	unsub := func(c *fakeConn, method, id string) bool {
		return must[protocol.UnsubscribeResult](t, c, svc, method, `{"subscription_id":"`+id+`"}`).Unsubscribed
	}
	a, b := sub(conn), sub(conn)
	_, err := conn.call(t, svc, protocol.MethodRunsSubscribe, `{"run_id":"run-1"}`)
	var e *jsonrpc.Error
	is.True(errors.As(err, &e))
	is.Equal(e.Code, jsonrpc.Overloaded) // a connection's subscriptions are bounded

	is.True(!unsub(other, protocol.MethodRunsUnsubscribe, a))       // not another connection's
	is.True(!unsub(conn, protocol.MethodAdminEventsUnsubscribe, a)) // not a run subscription
	is.True(unsub(conn, protocol.MethodRunsUnsubscribe, a))
	is.True(!unsub(conn, protocol.MethodRunsUnsubscribe, a)) // once
	is.Equal(hub.OpenSubscriptions(), 1)
	sub(conn) // the slot is free again

	sub(other)
	other.close() // its connection ends: so do its subscriptions
	waitOpen(t, hub, 2)
	is.True(unsub(conn, protocol.MethodRunsUnsubscribe, b))
}

func TestAdminEventSubscriptionsReplayAndFollowTheLog(t *testing.T) {
	is := is.New(t)
	svc, hub := liveService(t, store.NewMemory(), live.Options{})
	ctx := t.Context()
	appendEvent := func(kind string) {
		_, err := svc.Store.AppendEvent(ctx, store.Event{Kind: kind, TimestampEpochMs: 1, ConnectionID: ptr("demo.default"), Payload: map[string]any{"k": kind}})
		is.NoErr(err)
	}
	appendEvent("connection_registered")
	appendEvent("tools_changed")

	live := newConn(t)
	res := must[protocol.SubscribeAdminEventsResult](t, live, svc, protocol.MethodAdminEventsSubscribe, `{}`)
	is.Equal(res.LastSequence, int64(2))
	replay := newConn(t)
	must[protocol.SubscribeAdminEventsResult](t, replay, svc, protocol.MethodAdminEventsSubscribe, `{"after_sequence":0}`)
	appendEvent("connection_degraded")
	appendEvent("connection_recovered")

	four := func(n []note) bool { return len(n) == 4 }
	two := func(n []note) bool { return len(n) == 2 }
	is.Equal(seqs(live.until(t, "two events", two)), span(3, 4)) // from now on only
	notes := replay.until(t, "four events", four)
	is.Equal(seqs(notes), span(1, 4)) // the kept ones first
	is.Equal(notes[2].method, protocol.NotifyAdminEvent)
	is.Equal(notes[2].params["kind"], "connection_degraded")
	is.Equal(notes[2].params["connection_id"], "demo.default")
	is.Equal(hub.OpenSubscriptions(), 2) // the admin log has no end

	_, err := live.call(t, svc, protocol.MethodAdminEventsSubscribe, `{"after_sequence":9}`)
	domainError(t, err, "ValueError") // past the log's end
	is.True(must[protocol.UnsubscribeResult](t, live, svc, protocol.MethodAdminEventsUnsubscribe, `{"subscription_id":"`+res.SubscriptionID+`"}`).Unsubscribed)
}

func TestSubscriptionsNeedAWebSocketAndAKnownRun(t *testing.T) {
	is := is.New(t)
	svc, _ := liveService(t, store.NewMemory(), live.Options{})
	newRun(t, svc.Store, "run-1")
	for method, params := range map[string]string{protocol.MethodRunsSubscribe: `{"run_id":"run-1"}`, protocol.MethodAdminEventsSubscribe: `{}`} {
		_, err := svc.Methods()[method].Handler(bounded(t), json.RawMessage(params))
		msg := domainError(t, err, "ValueError") // no notifier: a POST to /rpc
		is.True(strings.Contains(msg, "WebSocket"))
	}
	conn := newConn(t)
	_, err := conn.call(t, svc, protocol.MethodRunsSubscribe, `{"run_id":"run-none"}`)
	domainError(t, err, "KeyError")
	_, err = conn.call(t, svc, protocol.MethodRunsSubscribe, `{"run_id":"run-1","after_sequence":2}`)
	domainError(t, err, "ValueError") // past the run's last event

	noHub := &service.Service{Store: store.NewMemory()}
	_, err = conn.call(t, noHub, protocol.MethodRunsSubscribe, `{"run_id":"run-1"}`)
	msg := domainError(t, err, "ValueError")
	is.True(strings.Contains(msg, "not enabled"))
}

func TestARunStartedWithoutWaitingIsFollowedToItsEnd(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	counterDeployment(t, f)
	started := startRun(t, f, `{"deployment_id":"count","wait":false}`)
	is.Equal(started.Status, "running") // acknowledged once committed

	conn := newConn(t)
	must[protocol.SubscribeRunResult](t, conn, f.svc, protocol.MethodRunsSubscribe, `{"run_id":"`+*started.RunID+`"}`)
	notes := conn.untilEnd(t)
	is.Equal(runEventKinds(notes), []string{"status running", "step_started call", "step_finished call", "status completed"})
	is.Equal(seqs(notes), span(1, 4))
	is.Equal(notes[1].params["step"].(map[string]any)["capability"], "fake.one.counter")
	is.Equal(notes[3].params["status"].(map[string]any)["output"], map[string]any{"count": 1.0})
}

func TestAnInterruptedRunIsFollowedLiveThroughItsResume(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	approvalDeployment(t, f)
	r := startRun(t, f, `{"deployment_id":"approve"}`)
	is.Equal(r.Status, "interrupted")

	conn := newConn(t)
	must[protocol.SubscribeRunResult](t, conn, f.svc, protocol.MethodRunsSubscribe, `{"run_id":"`+*r.RunID+`"}`)
	paused := conn.until(t, "the pause", func(n []note) bool { return len(n) == 4 })
	is.Equal(runEventKinds(paused), []string{"status running", "step_finished ask", "interrupted", "status interrupted"})
	is.Equal(paused[2].params["interrupt"].(map[string]any)["payload"], map[string]any{"message": "Ship it?"})

	mustCall[protocol.RunResult](t, f, protocol.MethodRunsResume, `{"run_id":"`+*r.RunID+`","resume_payload":{"approved":true}}`)
	notes := conn.untilEnd(t)
	is.Equal(runEventKinds(notes[4:]), []string{"step_finished ask", "status completed"}) // live, after the pause
	is.Equal(seqs(notes), span(1, 6))
}

// TestWakesDeliverCommitsTheHubDidNotSee: commits made straight to the
// store, as another node's are, reach subscriptions once the hub is woken
// for them, as the store's announcements wake it.
func TestWakesDeliverCommitsTheHubDidNotSee(t *testing.T) {
	is := is.New(t)
	st := store.NewMemory()
	svc, hub := liveService(t, st, live.Options{})
	w := newRun(t, st, "run-1") // not through the hub's store
	runs, admin := newConn(t), newConn(t)
	must[protocol.SubscribeRunResult](t, runs, svc, protocol.MethodRunsSubscribe, `{"run_id":"run-1"}`)
	must[protocol.SubscribeAdminEventsResult](t, admin, svc, protocol.MethodAdminEventsSubscribe, `{}`)
	runs.until(t, "the first event", func(n []note) bool { return len(n) == 1 })

	w.step("a")
	hub.WakeRun("run-1", 2)
	is.Equal(seqs(runs.until(t, "two events", func(n []note) bool { return len(n) == 2 })), span(1, 2))
	w.step("b")
	hub.WakeAll() // announcements may have been missed
	is.Equal(seqs(runs.until(t, "three events", func(n []note) bool { return len(n) == 3 })), span(1, 3))

	seq, err := st.AppendEvent(t.Context(), store.Event{Kind: "connection_registered", TimestampEpochMs: 1})
	is.NoErr(err)
	hub.WakeAdmin(seq)
	is.Equal(seqs(admin.until(t, "an admin event", func(n []note) bool { return len(n) == 1 })), []int64{seq})

	w.finish()
	hub.WakeRun("run-1", 4)
	hub.WakeRun("run-1", 4) // twice: delivered once
	is.Equal(seqs(runs.untilEnd(t)), span(1, 4))
}

func TestSubscriptionsAreRefusedOnceTheHubCloses(t *testing.T) {
	is := is.New(t)
	svc, hub := liveService(t, store.NewMemory(), live.Options{})
	newRun(t, svc.Store, "run-1")
	ctx, cancel := context.WithTimeout(t.Context(), patience)
	defer cancel()
	is.NoErr(hub.Close(ctx)) // the server stops
	conn := newConn(t)
	for method, params := range map[string]string{protocol.MethodRunsSubscribe: `{"run_id":"run-1"}`, protocol.MethodAdminEventsSubscribe: `{}`} {
		_, err := conn.call(t, svc, method, params)
		var e *jsonrpc.Error
		is.True(errors.As(err, &e))
		is.Equal(e.Code, jsonrpc.Overloaded) // retry once it is back
		is.True(strings.Contains(e.Detail(), "shutting down"))
	}
	is.Equal(hub.OpenSubscriptions(), 0)
}
