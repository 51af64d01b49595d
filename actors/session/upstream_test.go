package session_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/anthdm/hollywood/actor"
	"github.com/matryer/is"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/metrics"
	"github.com/mcpflow/mcpflow/actors/metrics/metricstest"
	"github.com/mcpflow/mcpflow/actors/reply"
	"github.com/mcpflow/mcpflow/actors/session"
	"github.com/mcpflow/mcpflow/fakes"
)

// asking is a factory of fake upstreams with the asking tools, whose
// requests asker records.
func asking(asker *fakes.Asker) *fakes.InMemory {
	return fakes.NewInMemory(func() *mcp.Server { return asker.Serve(fakes.NewServer()) })
}

// nextOf takes the next message of type T from got, failing on any other
// or none within patience.
func nextOf[T any](t *testing.T, got chan any) T {
	t.Helper()
	is := is.New(t)
	is.Helper()
	select {
	case m := <-got:
		v, ok := m.(T)
		if !ok {
			t.Logf("got %T %+v", m, m)
		}
		is.True(ok) // the message expected next
		return v
	case <-time.After(patience):
		t.Logf("nothing within %s", patience)
		is.Fail() // a message arrives
	}
	var zero T
	return zero
}

// upstreamCount is the count of the session's upstream requests of kind
// that ended as outcome.
func upstreamCount(t *testing.T, opts session.Options, kind, outcome string) float64 {
	n, _ := metricstest.Gather(t, opts.Metrics.Registry()).Value("mcpflow_upstream_requests_total", "connection", connID, "kind", kind, "outcome", outcome)
	return n
}

// countedAsking spawns a session actor on a fake server whose tools
// ask their client, with metrics, and a caller that takes what it gets.
func countedAsking(t *testing.T) (*fakes.Asker, session.Options, *actor.Engine, *actor.PID, *actor.PID, chan any) {
	t.Helper()
	asker := fakes.NewAsker()
	opts := testOptions()
	opts.Metrics = metrics.New()
	e, pid := spawn(t, asking(asker), opts)
	me, got := caller(t, e)
	return asker, opts, e, pid, me, got
}

func TestAServersElicitationReachesTheCallersReplyAndItsAnswerTheServer(t *testing.T) {
	is := is.New(t)
	asker, opts, e, pid, me, got := countedAsking(t)
	e.Send(pid, session.CallTool{Connection: connID, Tool: "ask", Arguments: fakes.CallArguments(map[string]any{"message": "your name?"}),
		Deadline: time.Now().Add(patience), Reply: reply.At(me, 7), Scope: "s1"})

	req := nextOf[session.UpstreamRequest](t, got)
	is.Equal(req.CorrelationID, uint64(7)) // the call's correlation
	is.Equal(req.Kind, session.UpstreamElicitation)
	is.Equal(req.Connection, connID)
	is.Equal(req.Scope, "s1")
	is.Equal(req.Generation, int64(1))
	var params map[string]any
	is.NoErr(json.Unmarshal(req.Params, &params))
	is.Equal(params["message"], "your name?")
	is.Equal(params["requestedSchema"], fakes.AskSchema) // as the server sent it
	is.Equal(upstreamCount(t, opts, session.UpstreamElicitation, metrics.UpstreamInterrupted), 1.0)

	e.Send(pid, session.AnswerUpstream{Connection: connID, RequestID: req.RequestID, Result: json.RawMessage(`{"action":"accept","content":{"name":"Ada"}}`)})
	r := nextOf[session.ToolResult](t, got)
	is.NoErr(r.Error.Err())
	is.Equal(fakes.ToolOutput(t, r), map[string]any{"action": "accept", "content": map[string]any{"name": "Ada"}}) // the answer reached the server
	is.Equal(asker.Got(), []string{`accept {"name":"Ada"}`})
}

func TestASamplingRequestIsHandedOnAndADeclineReachesTheServerAsAnError(t *testing.T) {
	is := is.New(t)
	asker := fakes.NewAsker()
	conn := testConn()
	conn.Client = &config.Client{Sampling: config.PolicyInterrupt}
	h := spawnConnWithParent(t, conn, asking(asker), testOptions())
	me, got := caller(t, h.engine)
	sample := func(corr uint64) session.UpstreamRequest {
		h.engine.Send(h.pid, session.CallTool{Connection: connID, Tool: "sample", Arguments: fakes.CallArguments(map[string]any{"prompt": "2+2?"}),
			Deadline: time.Now().Add(patience), Reply: reply.At(me, corr)})
		req := nextOf[session.UpstreamRequest](t, got)
		is.Equal(req.Kind, session.UpstreamSampling)
		is.True(strings.Contains(string(req.Params), `"text":"2+2?"`)) // the request's messages
		return req
	}

	req := sample(1)
	h.engine.Send(h.pid, session.AnswerUpstream{Connection: connID, RequestID: req.RequestID,
		Result: json.RawMessage(`{"role":"assistant","content":{"type":"text","text":"4"},"model":"m1"}`)})
	r := nextOf[session.ToolResult](t, got)
	is.NoErr(r.Error.Err())
	is.Equal(fakes.ToolOutput(t, r), map[string]any{"role": "assistant", "model": "m1", "text": "4"})

	req = sample(2)
	h.engine.Send(h.pid, session.AnswerUpstream{Connection: connID, RequestID: req.RequestID, Error: "declined by the test"})
	r = nextOf[session.ToolResult](t, got)
	is.True(r.Error.Err() != nil || r.Outcome == "error") // the tool failed with the server's error
	is.Equal(asker.Got(), []string{"sampled m1: 4", `error: calling "sampling/createMessage": declined by the test`})
}

func TestARequestDuringSeveralCallsIsRefusedAndCounted(t *testing.T) {
	is := is.New(t)
	asker, opts, e, pid, me, got := countedAsking(t)
	e.Send(pid, session.CallTool{Connection: connID, Tool: "sleep", Arguments: fakes.CallArguments(map[string]any{"ms": 60_000}),
		Deadline: time.Now().Add(patience), Owner: "sleeper", Reply: reply.At(me, 1)})
	e.Send(pid, session.CallTool{Connection: connID, Tool: "ask", Arguments: fakes.CallArguments(map[string]any{"message": "who?"}),
		Deadline: time.Now().Add(patience), Reply: reply.At(me, 2)})

	r := nextOf[session.ToolResult](t, got) // no UpstreamRequest before it
	is.Equal(r.CorrelationID, uint64(2))
	is.Equal(asker.Got(), []string{`error: calling "elicitation/create": mcpflow cannot tell which of the 2 tool calls in flight on source "fake.one"'s session sent this elicitation request, so it cannot hand it to the run that made the call; bind the source with "session": "run" to give each run a session of its own`})
	is.Equal(upstreamCount(t, opts, session.UpstreamElicitation, metrics.UpstreamRefusedAmbiguous), 1.0)

	e.Send(pid, session.CancelCalls{Connection: connID, Owner: "sleeper"})
	r = nextOf[session.ToolResult](t, got)
	is.Equal(r.CorrelationID, uint64(1))
}

func TestARequestOutsideACallIsRefusedAndCounted(t *testing.T) {
	is := is.New(t)
	asker, opts, e, pid, me, got := countedAsking(t)
	e.Send(pid, session.CallTool{Connection: connID, Tool: "ask", Arguments: fakes.CallArguments(map[string]any{"message": "who?"}),
		Deadline: time.Now().Add(patience), Reply: reply.At(me, 1)})
	req := nextOf[session.UpstreamRequest](t, got)
	e.Send(pid, session.AnswerUpstream{Connection: connID, RequestID: req.RequestID, Result: json.RawMessage(`{"action":"decline"}`)})
	nextOf[session.ToolResult](t, got)

	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	is.Equal(asker.AskOutsideACall(ctx), `error: calling "elicitation/create": mcpflow answers elicitation requests only during a tool call of a run, and no call is in flight on source "fake.one"'s session`)
	is.Equal(upstreamCount(t, opts, session.UpstreamElicitation, metrics.UpstreamRefusedNoCall), 1.0)
}

func TestACallThatEndsWithdrawsItsRequestAndTheServerGetsCancel(t *testing.T) {
	is := is.New(t)
	asker := fakes.NewAsker()
	e, pid := spawn(t, asking(asker), testOptions())
	me, got := caller(t, e)
	e.Send(pid, session.CallTool{Connection: connID, Tool: "ask", Arguments: fakes.CallArguments(map[string]any{"message": "who?"}),
		Deadline: time.Now().Add(patience), Owner: "run-1", Reply: reply.At(me, 1)})
	req := nextOf[session.UpstreamRequest](t, got)

	e.Send(pid, session.CancelCalls{Connection: connID, Owner: "run-1"})
	w := nextOf[session.UpstreamWithdrawn](t, got)
	is.Equal(w, session.UpstreamWithdrawn{CorrelationID: 1, RequestID: req.RequestID, Reason: "the call that asked was cancelled"})
	r := nextOf[session.ToolResult](t, got)
	is.True(r.Error.Err() != nil) // the call ended cancelled
	is.True(asker.WaitForGot(1, patience))
	// The answer cancel and the call's cancellation race to the server:
	// it gets one or the other, never nothing.
	is.True(asker.Got()[0] == fakes.AskCancel || asker.Got()[0] == fakes.AskCancelled)

	// An answer that comes after is dropped: the next request gets the
	// next answer, and nothing else reaches the server.
	e.Send(pid, session.AnswerUpstream{Connection: connID, RequestID: req.RequestID, Result: json.RawMessage(`{"action":"accept","content":{"name":"late"}}`)})
	e.Send(pid, session.CallTool{Connection: connID, Tool: "ask", Arguments: fakes.CallArguments(map[string]any{"message": "again?"}),
		Deadline: time.Now().Add(patience), Reply: reply.At(me, 2)})
	req = nextOf[session.UpstreamRequest](t, got)
	e.Send(pid, session.AnswerUpstream{Connection: connID, RequestID: req.RequestID, Result: json.RawMessage(`{"action":"decline"}`)})
	nextOf[session.ToolResult](t, got)
	is.Equal(asker.Got()[1:], []string{fakes.AskDecline})
}
