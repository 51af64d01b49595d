package integration

// Multi round-trip requests (MCP 2026-07-28, issue 28 item 2): a
// stateless-era server answers a tool call input_required; the run keeps
// the requestState in its checkpoint, and its elicitation survives a
// restart of mcpflow.

import (
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/matryer/is"

	p "github.com/mcpflow/mcpflow/api/protocol"
	"github.com/mcpflow/mcpflow/fakes/poll"
)

// TestInputRequiredElicitationSurvivesARestart runs fakemcp's ask tool
// (fakes.WithAsk) on a stateless streamable HTTP server through a source
// that asks for 2026-07-28. Two runs are interrupted with the server's
// elicitation (its requested schema, its message); mcpflow is stopped
// (SIGTERM) and started again on the same store: both runs are still
// interrupted, a payload that breaks the schema is refused, an accept
// with content completes one with the server's result built from the
// answer, and a decline completes the other with the server's result
// for it.
func TestInputRequiredElicitationSurvivesARestart(t *testing.T) {
	t.Parallel() // its own mcpflow and upstream: see parallelTests
	is := is.New(t)
	addr := freeAddr(t)
	startFakeHTTPWith(t, addr, "FAKEMCP_ASK=1", "FAKEMCP_STATELESS=1")
	const conn = "ask.default"
	src := httpSource(conn, addr)
	src.Transport.ProtocolVersion = "2026-07-28"
	pr, c, cfgPath := startTasksMCPFlow(t, src)
	dep := buildToolDeployment(t, c, conn, "ask", "ask_mrtr")
	ctx := testContext(t)

	start := func() string {
		started, err := c.RunDeployment(ctx, p.StartRunParams{DeploymentID: dep, WorkflowInput: p.Object{"question": "Who are you?"}})
		is.NoErr(err)
		id := *started.RunID
		r := poll.Value(t, "run "+id+" interrupted", 20*time.Second, func() (p.RunResult, bool) {
			r, err := c.InspectRun(ctx, id)
			is.NoErr(err)
			return r, r.Status != "running"
		})
		is.Equal(r.Status, "interrupted")
		is.Equal(r.Interrupt["kind"], "elicitation")
		iid, _ := r.Interrupt["id"].(string)
		is.True(strings.HasPrefix(iid, "input:")) // an input request the server answered the call with, not one a live call waits on
		schema, _ := r.Interrupt["resume_schema"].(map[string]any)
		is.Equal(schema["required"], []any{"name"}) // the requested schema
		payload, _ := r.Interrupt["payload"].(map[string]any)
		is.Equal(payload["message"], "Who are you?")
		is.Equal(payload["connection"], conn)
		return id
	}
	accepted, declined := start(), start()

	is.NoErr(pr.cmd.Process.Signal(syscall.SIGTERM)) // stop mcpflow while both runs wait
	select {
	case <-pr.exited:
	case <-time.After(20 * time.Second):
		t.Fatal("mcpflow did not stop within 20s")
	}
	again := startProcess(t, cfgPath, "mcpflow-again.log")
	c2 := dialURL(t, again.url)

	for _, id := range []string{accepted, declined} {
		r, err := c2.InspectRun(ctx, id)
		is.NoErr(err)
		is.Equal(r.Status, "interrupted") // not recovered into a failure: nothing waited upstream
		is.Equal(r.Interrupt["kind"], "elicitation")
	}

	accept := "accept"
	_, err := c2.ResumeRun(ctx, p.ResumeRunParams{RunID: accepted, ResumeOutcome: &accept, ResumePayload: p.Object{"name": 42}})
	is.True(err != nil) // a payload that breaks the schema is refused
	r, err := c2.InspectRun(ctx, accepted)
	is.NoErr(err)
	is.Equal(r.Status, "interrupted") // and the run stays interrupted

	_, err = c2.ResumeRun(ctx, p.ResumeRunParams{RunID: accepted, ResumeOutcome: &accept, ResumePayload: p.Object{"name": "Ada"}})
	is.NoErr(err)
	done := settled(t, c2, accepted)
	if done.Status != "completed" {
		logs, _ := os.ReadFile(again.logs)
		t.Logf("run %s: %s, error %v\nlog:\n%s", accepted, done.Status, deref(done.Error), logs)
	}
	is.Equal(done.Status, "completed")
	is.Equal(done.Output, p.Object{"action": "accept", "answer": map[string]any{"name": "Ada"}, "state": "round-1"}) // the server's result, from the answer

	decline := "decline"
	_, err = c2.ResumeRun(ctx, p.ResumeRunParams{RunID: declined, ResumeOutcome: &decline})
	is.NoErr(err)
	done = settled(t, c2, declined)
	is.Equal(done.Status, "completed")
	is.Equal(done.Output, p.Object{"action": "decline", "answer": map[string]any{}, "state": "round-1"}) // the decline reached the server
}
