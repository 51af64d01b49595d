package session_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/anthdm/hollywood/actor"
	"github.com/matryer/is"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/session"
	"github.com/mcpflow/mcpflow/fakes"
)

// spawnStateless spawns a session actor of a source that asks for
// 2026-07-28 on a stateless streamable HTTP server with the ask tool
// (fakes.WithAsk), with client block.
func spawnStateless(t *testing.T, block *config.Client) (*actor.Engine, *actor.PID) {
	t.Helper()
	upstream := httptest.NewServer(fakes.NewStatelessHandler(func() *mcp.Server { return fakes.WithAsk(fakes.NewServer()) }))
	t.Cleanup(upstream.Close)
	conn := config.Connection{Kind: "mcp", ID: connID, Client: block,
		Transport: config.Transport{Kind: config.TransportHTTP, URL: upstream.URL, ProtocolVersion: "2026-07-28"}}
	e := newEngine(t)
	pid := e.Spawn(session.New(conn, session.HTTP{Client: http.DefaultClient}, testOptions()), "session")
	t.Cleanup(func() { stop(t, e, pid) })
	return e, pid
}

// retry sends the retry of tool's call with input.
func retry(t *testing.T, e *actor.Engine, pid *actor.PID, tool string, args map[string]any, input *session.InputRetry) session.ToolResult {
	t.Helper()
	w := expect[session.ToolResult](e)
	e.Send(pid, session.CallTool{Connection: connID, Tool: tool, Arguments: fakes.CallArguments(args),
		Deadline: time.Now().Add(2 * time.Second), Reply: w.To(), Input: input})
	return await(t, w)
}

// TestInputRequiredIsTheCallersToAnswer calls a tool of a 2026-07-28
// server that asks for input: the call ends with the input requests and
// the requestState (nothing waits upstream), and a second call with the
// answer and that state gets the tool's result.
func TestInputRequiredIsTheCallersToAnswer(t *testing.T) {
	is := is.New(t)
	e, pid := spawnStateless(t, nil)
	args := map[string]any{"question": "Who are you?"}

	r := call(t, e, pid, "ask", args)
	is.NoErr(r.Error.Err())
	is.Equal(r.Outcome, session.OutcomeInputRequired) // the call ended asking for input
	is.True(r.Input != nil)
	is.Equal(r.Input.RequestState, "round-1")
	is.Equal(len(r.Input.Requests), 1)
	req := r.Input.Requests[0]
	is.Equal(req.ID, "confirm")
	is.Equal(req.Kind, session.UpstreamElicitation)
	var params map[string]any
	is.NoErr(json.Unmarshal(req.Params, &params))
	is.Equal(params["message"], "Who are you?")
	is.True(params["requestedSchema"] != nil) // the schema the answer must match
	is.Equal(len(req.Answer), 0)              // the caller answers it

	r = retry(t, e, pid, "ask", args, &session.InputRetry{RequestState: r.Input.RequestState,
		Responses: map[string]json.RawMessage{"confirm": json.RawMessage(`{"action":"accept","content":{"name":"Ada"}}`)}})
	is.NoErr(r.Error.Err())
	is.Equal(r.Outcome, "ok")
	is.True(r.Input == nil)
	out := fakes.ToolOutput(t, r)
	is.Equal(out["action"], "accept")
	is.Equal(out["answer"], map[string]any{"name": "Ada"}) // the answer reached the server
	is.Equal(out["state"], "round-1")                      // with the state it gave
}

// TestInputRequiredRefusedByPolicy: a source whose client block refuses
// elicitation fails the call with the refusal's text.
func TestInputRequiredRefusedByPolicy(t *testing.T) {
	is := is.New(t)
	e, pid := spawnStateless(t, &config.Client{Elicitation: config.PolicyRefuse})
	r := call(t, e, pid, "ask", map[string]any{"question": "Who are you?"})
	is.True(r.Error != nil) // the call fails
	is.True(r.Input == nil)
	is.True(strings.Contains(r.Error.Message, `mcpflow refuses elicitation on source "fake.one"`)) // says why, and how to take it
}
