package session_test

import (
	"testing"
	"time"

	"github.com/matryer/is"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflow/mcpflow/actors/session"
	"github.com/mcpflow/mcpflow/fakes"
)

// A prompt renders on the session: its answer is the upstream's
// GetPromptResult; a prompt the server does not have fails with why.
func TestAPromptRendersOnTheSession(t *testing.T) {
	is := is.New(t)
	h := spawnWithParent(t, fakes.NewInMemory(func() *mcp.Server { return fakes.WithPrompt(fakes.NewServer()) }), testOptions())

	got := expect[session.ToolResult](h.engine)
	h.engine.Send(h.pid, session.GetPrompt{Connection: connID, Name: "greet", Arguments: map[string]string{"who": "Ada"},
		Deadline: time.Now().Add(patience), Reply: got.To()})
	r := await(t, got)
	is.NoErr(r.Error.Err())
	is.Equal(r.Output["description"], "A greeting.")
	message := r.Output["messages"].([]any)[0].(map[string]any)
	is.Equal(message["role"], "user")
	is.Equal(message["content"].(map[string]any)["text"], "Say hello to Ada.") // the arguments reached the server
	is.Equal(r.Generation, int64(1))

	missing := expect[session.ToolResult](h.engine)
	h.engine.Send(h.pid, session.GetPrompt{Connection: connID, Name: "nope", Deadline: time.Now().Add(patience), Reply: missing.To()})
	r = await(t, missing)
	is.True(r.Error != nil) // the server's refusal, as the request's failure
	t.Logf("unknown prompt: %v", r.Error.Err())
}
