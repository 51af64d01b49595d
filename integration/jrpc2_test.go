package integration

// The Go third-party JSON-RPC 2.0 client creachadair/jrpc2 drives the
// WebSocket edge: a batch, starting a run and following it through a
// subscription, inspecting it.

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"testing"

	"github.com/creachadair/jrpc2"
	"github.com/gorilla/websocket"
	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/api/client"
	p "github.com/mcpflow/mcpflow/api/protocol"
)

// wsChannel carries jrpc2 records over a gorilla WebSocket connection, one
// message per record (jrpc2 ships no WebSocket channel; the proxy refuses
// creachadair/wschannel). jrpc2 sends under its own lock, so writes do not
// overlap.
type wsChannel struct{ ws *websocket.Conn }

func (c wsChannel) Send(record []byte) error { return c.ws.WriteMessage(websocket.TextMessage, record) }

func (c wsChannel) Recv() ([]byte, error) {
	_, record, err := c.ws.ReadMessage()
	if websocket.IsCloseError(err, websocket.CloseNormalClosure) || errors.Is(err, websocket.ErrCloseSent) {
		return nil, io.EOF // the end jrpc2 expects
	}
	return record, err
}

func (c wsChannel) Close() error { return c.ws.Close() }

// TestJrpc2ClientDrivesTheEdge: jrpc2 sends a batch of four requests and
// a notification (one entry fails), starts a run with wait: false,
// follows it through workflow.runs.subscribe (its OnNotify gets events
// 1..N ending with the terminal status) and inspects it.
func TestJrpc2ClientDrivesTheEdge(t *testing.T) {
	is := is.New(t)
	svc := startService(t, nil, stdioSource(liveSource, fakeMCP))
	dep := deployDraft(t, svc.dial(t), "jrpc2_echoes", foreachDraft("jrpc2_echoes", liveSource+".echo", "message"), liveSource)

	notes := make(chan client.Notification, 1<<10) // OnNotify must not block the client's reader
	rpc := jrpc2.NewClient(wsChannel{dialRaw(t, svc.URL)}, &jrpc2.ClientOptions{OnNotify: func(r *jrpc2.Request) {
		notes <- client.Notification{Method: r.Method(), Params: json.RawMessage(r.ParamString())}
	}})
	t.Cleanup(func() { _ = rpc.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), liveWait)
	defer cancel()

	// A batch: every request answered in order, the failing one with its
	// error, the notification not at all.
	replies, err := rpc.Batch(ctx, []jrpc2.Spec{
		{Method: p.MethodHealth},
		{Method: p.MethodDeploymentsInspect, Params: p.DeploymentIDParams{DeploymentID: dep}},
		{Method: p.MethodRunsInspect, Params: p.Object{"run_id": "run_x", "oops": 1}},
		{Method: p.MethodHealth, Notify: true},
		{Method: "workflow.no_such_method", Params: p.Object{}},
	})
	is.NoErr(err)
	is.Equal(len(replies), 4) // one reply per request, none for the notification
	var health p.HealthResult
	is.NoErr(replies[0].UnmarshalResult(&health))
	is.Equal(health.Status, "ok")
	var deployment p.Deployment
	is.NoErr(replies[1].UnmarshalResult(&deployment))
	is.Equal(deployment.ID, dep)
	is.True(replies[2].Error() != nil)
	is.Equal(replies[2].Error().Code, jrpc2.InvalidParams) // the unknown key
	is.True(replies[3].Error() != nil)
	is.Equal(replies[3].Error().Code, jrpc2.MethodNotFound)

	// Start a run without waiting for it, and follow it.
	const items = 5
	messages := make([]any, items)
	for i := range messages {
		messages[i] = "jrpc2"
	}
	var started p.RunResult
	is.NoErr(rpc.CallResult(ctx, p.MethodRunsStart, p.StartRunParams{DeploymentID: dep, WorkflowInput: p.Object{"items": messages}, Wait: ptr(false)}, &started))
	is.Equal(started.Status, "running")
	is.True(started.RunID != nil)
	var sub p.SubscribeRunResult
	is.NoErr(rpc.CallResult(ctx, p.MethodRunsSubscribe, p.SubscribeRunParams{RunID: *started.RunID}, &sub))
	is.Equal(sub.RunID, *started.RunID)
	// jrpc2 hands each frame it reads to OnNotify from a goroutine of its
	// own, so notifications may reach it out of the order they were sent
	// in: take them until the terminal one and every one before it are
	// there, then put them in sequence order.
	var end int64
	events := runEventsUntil(t, notes, sub.SubscriptionID, func(events []p.RunEventNotification) bool {
		if e := events[len(events)-1]; e.Status != nil && e.Status.Terminal {
			end = e.Seq
		}
		return end > 0 && int64(len(events)) >= end
	})
	reordered := 0
	for i := 1; i < len(events); i++ {
		if events[i].Seq < events[i-1].Seq {
			reordered++
		}
	}
	slices.SortFunc(events, func(a, b p.RunEventNotification) int { return cmp.Compare(a.Seq, b.Seq) })
	isGapless(t, events, 1)
	is.Equal(len(events), 3*items+3)
	final := events[len(events)-1].Status

	// Inspect it: it ended as its last event said.
	var run p.RunResult
	is.NoErr(rpc.CallResult(ctx, p.MethodRunsInspect, p.RunIDParams{RunID: *started.RunID}, &run))
	is.Equal(run.Status, final.Status)
	is.Equal(run.Status, "completed")
	is.Equal(run.TraceCount, final.TraceCount)
	t.Logf("jrpc2: batch of %d requests and a notification answered (%s, %s); run %s followed through %d events, 1..%d (%d handed to OnNotify before an earlier one), ending %s with %d trace entries",
		len(replies), replies[2].Error().Code, replies[3].Error().Code, run.Status, len(events), events[len(events)-1].Seq, reordered, final.Status, run.TraceCount)
}
