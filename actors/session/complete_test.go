package session_test

import (
	"testing"
	"time"

	"github.com/matryer/is"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflow/mcpflow/actors/session"
	"github.com/mcpflow/mcpflow/fakes"
)

// A completion is asked of an upstream that declared the completions
// capability: its answer is the upstream's CompleteResult.
func TestACompletionIsAskedOfTheSession(t *testing.T) {
	is := is.New(t)
	h := spawnWithParent(t, fakes.NewInMemory(fakes.NewCompletingServer), testOptions())

	got := expect[session.ToolResult](h.engine)
	h.engine.Send(h.pid, session.Complete{Connection: connID, RefType: "ref/prompt", RefName: "greet", Argument: "who", Value: "A",
		Context: map[string]string{"other": "x"}, Deadline: time.Now().Add(patience), Reply: got.To()})
	r := await(t, got)
	is.NoErr(r.Error.Err())
	completion := r.Output["completion"].(map[string]any)
	is.Equal(completion["values"], []any{"Ada", "Alan"}) // the upstream's values for "A"
	is.Equal(completion["total"], float64(2))
}

// An upstream that did not declare the completions capability is not
// asked (go-sdk's server would refuse completion/complete): the answer
// has no values.
func TestACompletionOfAnUpstreamThatDoesNotCompleteHasNoValues(t *testing.T) {
	is := is.New(t)
	h := spawnWithParent(t, fakes.NewInMemory(func() *mcp.Server { return fakes.WithPrompt(fakes.NewServer()) }), testOptions())

	got := expect[session.ToolResult](h.engine)
	h.engine.Send(h.pid, session.Complete{Connection: connID, RefType: "ref/prompt", RefName: "greet", Argument: "who", Value: "A",
		Deadline: time.Now().Add(patience), Reply: got.To()})
	r := await(t, got)
	is.NoErr(r.Error.Err())
	is.Equal(r.Output["completion"], map[string]any{"values": []any{}})
}
