package integration

// Live run events (issue 9 point 3) through the real WebSocket edge: a
// subscriber that reconnects mid-run, a slow subscriber that lags, and
// admin events as they are recorded.

import (
	"encoding/json"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/api/client"
	p "github.com/mcpflow/mcpflow/api/protocol"
	"github.com/mcpflow/mcpflow/cmd/mcpflow/app"
)

// liveSource is the fakemcp connection the live event tests' workflows
// call.
const liveSource = "live.fake"

// liveWait bounds each wait of the live event tests: for a run to end, for
// its events to arrive.
const liveWait = 60 * time.Second

// foreachDraft is a workflow that calls capability once per item of
// input.items, one item at a time, passing the item as param. Each item
// makes three run events: the foreach's loop step, the call's start, the
// call's end.
func foreachDraft(name, capability, param string) string {
	return fmt.Sprintf(`{"name":%q,"start":"each","outcomes":["ok"],
	"input_schema":{"type":"object","properties":{"items":{"type":"array"}},"required":["items"]},
	"state_schema":{"type":"object","properties":{}},
	"output_schema":{"type":"object","properties":{}},
	"steps":{
		"each":{"foreach":{"over":"input.items","as":"item"}},
		"call":{"use":%q,"input":[{"target":%q,"path":"context.item"}]}},
	"routes":{"each":{"loop":"call","done":"__end__"},"call":{"ok":"each","error":"each"}}}`, name, capability, param)
}

// deployDraft saves doc as artifact name version 1 and deploys it as
// name.default with conn bound to itself; it returns the deployment id.
func deployDraft(t *testing.T, c *client.Client, name, doc, conn string) string {
	t.Helper()
	is := is.New(t)
	is.Helper()
	saveDraft(t, c, name, doc)
	dep, err := c.SaveDeployment(testContext(t), p.Object{"id": name + ".default", "artifact_id": name, "artifact_version": 1,
		"bindings": []any{p.Object{"logical_source": conn, "concrete_source": conn}}})
	is.NoErr(err)
	is.True(dep.Saved)
	return dep.DeploymentID
}

// startLive starts a run of deployment over items with wait: false and
// returns its id; the run is still going when it answers.
func startLive(t *testing.T, c *client.Client, deployment string, items []any) string {
	t.Helper()
	is := is.New(t)
	is.Helper()
	run, err := c.RunDeployment(testContext(t), p.StartRunParams{DeploymentID: deployment, WorkflowInput: p.Object{"items": items}, Wait: ptr(false)})
	is.NoErr(err)
	is.Equal(run.Status, "running") // wait: false answers once the run is committed
	is.True(run.RunID != nil)
	return *run.RunID
}

// notifications hands c's notifications to the returned channel, which
// holds more than any test here receives, so the client's reader never
// waits for the test.
func notifications(c *client.Client) <-chan client.Notification {
	ch := make(chan client.Notification, 1<<14)
	c.OnNotification(func(n client.Notification) { ch <- n })
	return ch
}

// takeAdminEvents hands fn each admin event that arrives on notes, in
// order, skipping the other notifications, until done holds (checked
// first, and after each event); past wait it logs what as unfinished and
// fails the test.
func takeAdminEvents(t *testing.T, notes <-chan client.Notification, wait time.Duration, what string, done func() bool, fn func(p.AdminEventNotification)) {
	t.Helper()
	is := is.New(t)
	deadline := time.After(wait)
	for !done() {
		select {
		case n := <-notes:
			if n.Method != p.NotifyAdminEvent {
				continue
			}
			var e p.AdminEventNotification
			is.NoErr(json.Unmarshal(n.Params, &e))
			fn(e)
		case <-deadline:
			t.Logf("within %s: %s", wait, what)
			is.Fail() // the admin events arrive
		}
	}
}

// runEventsUntilEnd takes the events of subscription sub from notes until
// the one that ends the run; any other notification fails the test.
func runEventsUntilEnd(t *testing.T, notes <-chan client.Notification, sub string) []p.RunEventNotification {
	t.Helper()
	return runEventsUntil(t, notes, sub, func(events []p.RunEventNotification) bool {
		last := events[len(events)-1]
		return last.Status != nil && last.Status.Terminal
	})
}

// runEventsUntil takes the events of subscription sub from notes, as they
// come, until done says they are all there; any other notification fails
// the test.
func runEventsUntil(t *testing.T, notes <-chan client.Notification, sub string, done func([]p.RunEventNotification) bool) []p.RunEventNotification {
	t.Helper()
	is := is.New(t)
	is.Helper()
	var events []p.RunEventNotification
	deadline := time.After(liveWait)
	for {
		select {
		case n := <-notes:
			if n.Method != p.NotifyRunEvent {
				t.Logf("after %d events: %s %s", len(events), n.Method, n.Params)
			}
			is.Equal(n.Method, p.NotifyRunEvent) // only run events, no lag
			var e p.RunEventNotification
			is.NoErr(json.Unmarshal(n.Params, &e))
			is.Equal(e.SubscriptionID, sub) // of this subscription
			events = append(events, e)
			if done(events) {
				return events
			}
		case <-deadline:
			t.Logf("%d events within %s, the last %+v", len(events), liveWait, events[max(len(events)-1, 0):])
			is.Fail() // the run's events arrive through its end
		}
	}
}

// replaysTheSame subscribes through c, from the start, to run, which has
// ended, and requires the replay to be events: the same sequence numbers
// and payloads.
func replaysTheSame(t *testing.T, c *client.Client, run string, events []p.RunEventNotification) {
	t.Helper()
	is := is.New(t)
	is.Helper()
	replay := notifications(c)
	sub, err := c.SubscribeRun(testContext(t), p.SubscribeRunParams{RunID: run})
	is.NoErr(err)
	is.Equal(sub.Status, "completed")
	is.Equal(sub.LastSequence, events[len(events)-1].Seq)
	replayed := runEventsUntilEnd(t, replay, sub.SubscriptionID)
	is.Equal(len(replayed), len(events))
	for i := range events {
		is.Equal(replayed[i].RunEvent, events[i].RunEvent) // the same sequence and payloads
	}
}

// isGapless checks that events are numbered from first on, one apart, and
// that only the last ends the run.
func isGapless(t *testing.T, events []p.RunEventNotification, first int64) {
	t.Helper()
	is := is.New(t)
	is.Helper()
	for i, e := range events {
		is.Equal(e.Seq, first+int64(i))                                    // no gap, no duplicate
		is.Equal(e.Status != nil && e.Status.Terminal, i == len(events)-1) // the terminal status comes last
		is.Equal(e.RunID, events[0].RunID)                                 // one run's events
	}
}

// rawFrame is any frame the edge sends: a reply or a notification.
type rawFrame struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// rawSubscribe sends workflow.runs.subscribe on a raw socket and returns
// its answer, which comes before any event.
func rawSubscribe(t *testing.T, ws *websocket.Conn, id int, params p.SubscribeRunParams) p.SubscribeRunResult {
	t.Helper()
	var res p.SubscribeRunResult
	rawCall(t, ws, id, p.MethodRunsSubscribe, params, &res)
	is.New(t).True(res.Active) // events follow
	return res
}

// rawCall sends request method(params) with id on a raw socket and decodes
// the result of its reply, which must be the next frame.
func rawCall(t *testing.T, ws *websocket.Conn, id int, method string, params, result any) {
	t.Helper()
	is := is.New(t)
	is.Helper()
	frame, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	is.NoErr(err)
	sendFrame(t, ws, string(frame))
	reply := readRaw(t, ws)
	is.Equal(string(reply.ID), fmt.Sprint(id)) // the reply is the next frame
	if reply.Error != nil {
		t.Logf("%s: %+v", method, *reply.Error)
	}
	is.True(reply.Error == nil)
	is.NoErr(json.Unmarshal(reply.Result, result))
}

// readRaw reads and decodes one frame of a raw socket.
func readRaw(t *testing.T, ws *websocket.Conn) rawFrame {
	t.Helper()
	var f rawFrame
	is.New(t).NoErr(json.Unmarshal(readFrame(t, ws), &f))
	return f
}

// rawEvent decodes a frame that must be an event of subscription sub.
func rawEvent(t *testing.T, f rawFrame, sub string) p.RunEventNotification {
	t.Helper()
	is := is.New(t)
	is.Helper()
	is.Equal(f.Method, p.NotifyRunEvent)
	var e p.RunEventNotification
	is.NoErr(json.Unmarshal(f.Params, &e))
	is.Equal(e.SubscriptionID, sub)
	return e
}

// TestLiveSubscriberReconnectsMidRunWithoutGapOrDuplicate: a subscriber
// gets the first events of a run, then its connection is cut (no close
// frame); a new connection subscribes after the last event it got and
// gets the rest. Together they are the run's events numbered 1..N, each
// once, ending with the terminal status, identical to what a subscription
// made after the run ended replays from the store.
func TestLiveSubscriberReconnectsMidRunWithoutGapOrDuplicate(t *testing.T) {
	is := is.New(t)
	svc := startService(t, nil, stdioSource(liveSource, fakeMCP))
	c := svc.dial(t)
	dep := deployDraft(t, c, "naps", foreachDraft("naps", liveSource+".sleep", "ms"), liveSource)
	const items, napMS, before = 8, 150, 5
	naps := make([]any, items)
	for i := range naps {
		naps[i] = napMS
	}
	run := startLive(t, c, dep, naps)

	// The first subscriber takes a few events, then its TCP connection is
	// closed under it.
	first := dialRaw(t, svc.URL)
	sub1 := rawSubscribe(t, first, 1, p.SubscribeRunParams{RunID: run})
	var got []p.RunEventNotification
	for len(got) < before {
		got = append(got, rawEvent(t, readRaw(t, first), sub1.SubscriptionID))
	}
	is.NoErr(first.NetConn().Close())
	last := got[len(got)-1].Seq

	// The second resumes after the last event the first got.
	second := svc.dial(t)
	notes := notifications(second)
	sub2, err := second.SubscribeRun(testContext(t), p.SubscribeRunParams{RunID: run, AfterSequence: &last})
	is.NoErr(err)
	is.Equal(sub2.Status, "running") // it resumes mid-run
	is.True(sub2.Active)
	rest := runEventsUntilEnd(t, notes, sub2.SubscriptionID)
	all := append(got, rest...)
	isGapless(t, all, 1)
	is.Equal(all[len(all)-1].Status.Status, "completed")
	is.Equal(len(all), 3*items+3) // running, three per item, the foreach's done, completed

	// A subscription from the start after the end replays the same events
	// from the store.
	replaysTheSame(t, svc.dial(t), run, all)
	t.Logf("run %s: %d events; the first connection got 1..%d and was cut while the run went on (%s), the second got %d..%d, the replay after the end identical",
		run, len(all), last, sub2.Status, rest[0].Seq, rest[len(rest)-1].Seq)
}

// TestLiveSlowSubscriberGetsOneLagNotificationAndResumes: a client
// subscribes to a run of hundreds of quick calls and does not read its
// socket while the run goes on. The server's outbound queue (4 messages)
// and send buffer are small, so the sockets take a few hundred events and
// the subscription's buffer of 256 fills: once the client reads, it gets events 1..cursor in order, then one
// workflow.runs.lagged with that cursor, and nothing more of that
// subscription. Subscribing again after the cursor completes the run's
// events with no gap.
func TestLiveSlowSubscriberGetsOneLagNotificationAndResumes(t *testing.T) {
	is := is.New(t)
	svc := startServiceListening(t, func(o *app.Options) {
		o.Edge.MaxOutboundMessages, o.Edge.MaxOutboundBytes = 4, 16<<10
		// The client does not read for as long as the run takes: the
		// writer must wait for it rather than drop it.
		o.Edge.WriteTimeout, o.Edge.PingInterval, o.Edge.PongWait = 2*liveWait, 2*liveWait, 2*liveWait
	}, func(l net.Listener) net.Listener { return smallSendBuffers{l} }, stdioSource(liveSource, fakeMCP))
	c := svc.dial(t)
	dep := deployDraft(t, c, "echoes", foreachDraft("echoes", liveSource+".echo", "message"), liveSource)
	const items = 400 // 1203 events: about 700 fill the sockets, the queue and the buffer
	messages := make([]any, items)
	for i := range messages {
		messages[i] = fmt.Sprintf("message %d", i)
	}
	run := startLive(t, c, dep, messages)

	// A socket with the default buffers: one as small as the server's
	// (dialRawSmall) stalls its reader for seconds at a time once the
	// window has been closed long (TCP probes a zero window with backoff).
	slow := dialRaw(t, svc.URL)
	sub := rawSubscribe(t, slow, 1, p.SubscribeRunParams{RunID: run})
	// The slow subscriber reads nothing while another follows the run to
	// its end.
	started := time.Now()
	watcher := svc.dial(t)
	watched := notifications(watcher)
	w, err := watcher.SubscribeRun(testContext(t), p.SubscribeRunParams{RunID: run})
	is.NoErr(err)
	all := runEventsUntilEnd(t, watched, w.SubscriptionID)
	isGapless(t, all, 1)
	is.Equal(len(all), 3*items+3)
	total := int64(len(all))
	ran := time.Since(started)

	// Events in order, then the lag notification.
	reading := time.Now()
	var cursor int64
	var lag p.LaggedNotification
	for {
		f := readRaw(t, slow)
		if f.Method == p.NotifyRunLagged {
			is.NoErr(json.Unmarshal(f.Params, &lag))
			break
		}
		e := rawEvent(t, f, sub.SubscriptionID)
		is.Equal(e.Seq, cursor+1)                  // in order, no gap
		is.Equal(e.RunEvent, all[cursor].RunEvent) // as the watcher got it
		cursor = e.Seq
	}
	is.Equal(lag.SubscriptionID, sub.SubscriptionID)
	is.Equal(lag.Cursor, cursor) // the last event it delivered
	is.Equal(lag.Reason, p.LagBufferFull)
	is.True(lag.RunID != nil && *lag.RunID == run)
	is.True(cursor < total) // it lagged before the end

	// That subscription has ended: the next frame on the socket answers an
	// unsubscribe from it, which finds nothing to end.
	caughtUp := time.Now()
	var unsub p.UnsubscribeResult
	rawCall(t, slow, 2, p.MethodRunsUnsubscribe, p.UnsubscribeParams{SubscriptionID: sub.SubscriptionID}, &unsub)
	is.True(!unsub.Unsubscribed)

	// Subscribing again after the cursor (from a fresh connection, as a
	// client that gave up on the slow one would) completes the run.
	resumer := svc.dial(t)
	resumed := notifications(resumer)
	again, err := resumer.SubscribeRun(testContext(t), p.SubscribeRunParams{RunID: run, AfterSequence: &cursor})
	is.NoErr(err)
	is.Equal(again.LastSequence, total)
	rest := runEventsUntilEnd(t, resumed, again.SubscriptionID)
	isGapless(t, rest, cursor+1)
	is.Equal(rest[len(rest)-1].Seq, total)
	for i, e := range rest {
		is.Equal(e.RunEvent, all[cursor+int64(i)].RunEvent) // as the watcher got them
	}
	t.Logf("run %s: %d events, ended %s after the slow subscriber subscribed; it then read 1..%d in %s, then one %s (cursor %d, reason %s); subscribing again after it gave %d..%d",
		run, total, ran.Round(time.Millisecond), cursor, caughtUp.Sub(reading).Round(time.Millisecond), p.NotifyRunLagged, lag.Cursor, lag.Reason, rest[0].Seq, rest[len(rest)-1].Seq)
}

// TestLiveAdminEventsArrive: a subscription to the admin event log gets
// connection-related events as they are recorded: a catalog refresh
// (started, completed) and a source added to the registry and applied.
func TestLiveAdminEventsArrive(t *testing.T) {
	is := is.New(t)
	svc := startService(t, nil, stdioSource(liveSource, fakeMCP))
	c := svc.dial(t)
	notes := notifications(c)
	sub, err := c.SubscribeAdminEvents(testContext(t), p.SubscribeAdminEventsParams{})
	is.NoErr(err)

	_, err = c.RefreshConnectionCatalog(testContext(t), liveSource)
	is.NoErr(err)
	var added json.RawMessage
	is.NoErr(c.Call(testContext(t), p.MethodRegistryAdd, p.Object{"entry": p.Object{"id": "reg.fake",
		"transport": p.Object{"kind": "stdio", "command": fakeMCP}}}, &added))
	var applied p.ApplyRegistryChangesResult
	is.NoErr(c.Call(testContext(t), p.MethodRegistryApply, p.Object{}, &applied))
	is.Equal(applied.Registered, []string{"reg.fake"})

	want := []struct{ kind, conn string }{
		{"catalog_refresh_started", liveSource}, {"catalog_refresh_completed", liveSource}, {"connection_registered", "reg.fake"},
	}
	var got []string
	seq := sub.LastSequence
	deadline := time.After(liveWait)
	for len(got) < len(want) {
		select {
		case n := <-notes:
			is.Equal(n.Method, p.NotifyAdminEvent)
			var e p.AdminEventNotification
			is.NoErr(json.Unmarshal(n.Params, &e))
			is.Equal(e.SubscriptionID, sub.SubscriptionID)
			is.True(e.Sequence > seq) // in order, after the log's end at subscribing
			seq = e.Sequence
			if next := want[len(got)]; e.Kind == next.kind {
				is.Equal(deref(e.ConnectionID), next.conn)
				got = append(got, e.Kind+" "+next.conn)
			}
		case <-deadline:
			t.Logf("admin events seen: %v", got)
			is.Fail() // the admin events arrive live
		}
	}
	t.Logf("admin events after sequence %d arrived live, up to sequence %d: %v", sub.LastSequence, seq, got)
}
