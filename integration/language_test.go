package integration

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/api/client"
	p "github.com/mcpflow/mcpflow/api/protocol"
)

// childDraft is the subgraph: it returns its input n as {got}.
const childDraft = `{"name":"child","start":"take",
	"input_schema":{"type":"object","properties":{"n":{"type":"number"}},"required":["n"]},
	"state_schema":{"type":"object","properties":{"got":{"type":"number"}}},
	"output_schema":{"type":"object","properties":{"got":{"type":"number"}}},
	"steps":{"take":{"use":"wf.std.constant","input":[{"target":"value","path":"input.n"}],"output":[{"source":"value","target":"state.got"}]}},
	"routes":{"take":{"ok":"__end__"}}}`

// parentDraft calls two MCP sources, branches on a tool error, runs a
// concurrent foreach over input.items on one session, calls the child as
// a subgraph, and waits for approval.
const parentDraft = `{"name":"tour","start":"count","outcomes":["ok"],
	"input_schema":{"type":"object","properties":{"items":{"type":"array"}},"required":["items"]},
	"state_schema":{"type":"object","properties":{
		"count":{"type":"integer"},"note":{"type":"string"},
		"peaks":{"type":"array","reducer":"wf.std.append"},
		"from_child":{"type":"number"},"approved":{"type":"boolean"}}},
	"output_schema":{"type":"object","properties":{"count":{},"note":{},"peaks":{},"from_child":{},"approved":{}}},
	"steps":{
		"count":{"use":"demo.default.counter","output":[{"source":"count","target":"state.count"}]},
		"probe":{"use":"fake.a.fail","input":[{"target":"message","value":"expected failure"}]},
		"recover":{"use":"wf.std.constant","input":[{"target":"value","value":"recovered"}],"output":[{"source":"value","target":"state.note"}]},
		"each":{"foreach":{"over":"input.items","as":"item","mode":"concurrent","concurrent":{"max_active":8,"max_outstanding":16}}},
		"gauge":{"use":"fake.a.overlap","input":[{"target":"ms","path":"context.item"}],"output":[{"source":"in_flight","target":"state.peaks"}]},
		"child":{"subgraph":{"workflow":{"artifact_id":"child","version":1},"input":[{"target":"n","path":"state.count"}],"output":[{"source":"got","target":"state.from_child"}]}},
		"approve":{"interrupt":{"kind":"approval","request":[{"target":"message","value":"Ship it?"}],
			"resume":[{"source":"approved","target":"state.approved"}],
			"resume_schema":{"type":"object","properties":{"approved":{"type":"boolean"}},"required":["approved"]}}}},
	"routes":{
		"count":{"ok":"probe","error":"probe"},
		"probe":{"ok":"each","error":"recover"},
		"recover":{"ok":"each"},
		"each":{"loop":"gauge","done":"child"},
		"gauge":{"ok":"each","error":"each"},
		"child":{"ok":"approve"},
		"approve":{"submitted":"__end__"}}}`

// saveDraft stores doc as artifact id version 1, with the one outcome
// "ok", through a workspace.
func saveDraft(t *testing.T, c *client.Client, id, doc string) {
	t.Helper()
	saveArtifact(t, c, id, doc, []string{"ok"})
}

// TestOneWorkflowUsesEveryKindOfStepThroughTheRealBinary runs, through /ws
// and the real binary, one workflow that calls tools on two MCP sources,
// branches on a tool error, runs a 50-item concurrent foreach on one
// session, calls a subgraph and waits for approval; the service is then
// restarted and the run resumed.
func TestOneWorkflowUsesEveryKindOfStepThroughTheRealBinary(t *testing.T) {
	t.Parallel() // its own mcpflow: see parallelTests
	if testing.Short() {
		t.Skip("starts and restarts the real binary")
	}
	is := is.New(t)
	dir := t.TempDir()
	cfg := config.File{Version: 1, Server: config.Server{
		Store: config.Store{Root: filepath.Join(dir, "store")},
		Sources: []config.Connection{
			stdioSource("demo.default", binary, "demo-server"),
			stdioSource("fake.a", fakeMCP),
		},
	}}
	data, err := json.Marshal(cfg)
	is.NoErr(err)
	cfgPath := filepath.Join(dir, "mcpflow.json")
	is.NoErr(os.WriteFile(cfgPath, data, 0o600))

	first := startProcess(t, cfgPath, "first.log")
	c := dialURL(t, first.url)
	ctx := testContext(t)
	for _, conn := range []string{"demo.default", "fake.a"} {
		_, err := c.RefreshConnectionCatalog(ctx, conn)
		is.NoErr(err)
	}
	saveDraft(t, c, "child", childDraft)
	saveDraft(t, c, "tour", parentDraft)
	_, err = c.SaveDeployment(ctx, p.Object{"id": "tour.default", "artifact_id": "tour", "artifact_version": 1, "bindings": []any{
		p.Object{"logical_source": "demo.default", "concrete_source": "demo.default"},
		p.Object{"logical_source": "fake.a", "concrete_source": "fake.a"},
	}})
	is.NoErr(err)

	items := make([]any, 50)
	for i := range items {
		items[i] = 100 // each overlap call waits 100 ms
	}
	started, err := c.RunDeployment(ctx, p.StartRunParams{DeploymentID: "tour.default", WorkflowInput: p.Object{"items": items}})
	is.NoErr(err)
	id := *started.RunID
	paused := settled(t, c, id)
	if paused.Status != "interrupted" {
		t.Logf("run %s is %s: %v", id, paused.Status, deref(paused.Error))
	}
	is.Equal(paused.Status, "interrupted")
	is.Equal(paused.Interrupt["kind"], "approval")
	is.Equal(paused.Interrupt["payload"], map[string]any{"message": "Ship it?"})

	// The foreach ran its 50 calls on one session, several at once.
	steps := map[string]int{}
	for start := 0; start < paused.TraceCount; start += 100 {
		var page p.RunResult
		is.NoErr(c.Call(ctx, p.MethodRunsTrace, p.TraceParams{RunID: id, TraceRange: p.TraceRange{Start: ptr(start), Limit: ptr(100)}}, &page))
		for _, e := range page.Trace {
			steps[e.NodeID+":"+e.Outcome]++
		}
	}
	is.Equal(steps["count:ok"], 1)
	is.Equal(steps["probe:error"], 1) // the tool error was routed
	is.Equal(steps["recover:ok"], 1)
	is.Equal(steps["gauge:ok"], 50)
	is.Equal(steps["each:loop"], 50)
	is.Equal(steps["each:done"], 1)
	is.Equal(steps["child:ok"], 1)
	is.Equal(steps["approve:interrupt"], 1)
	statuses, err := c.GetConnectionStatuses(ctx)
	is.NoErr(err)
	for _, s := range statuses.Statuses {
		is.Equal(s.Session.SessionsOpened, 1) // one upstream session per source
	}

	// Restart the service; the interrupted run resumes on the new one.
	first.kill(t)
	second := startProcess(t, cfgPath, "second.log")
	c2 := dialURL(t, second.url)
	_, err = c2.ResumeRun(ctx, p.ResumeRunParams{RunID: id, ResumePayload: p.Object{"approved": "yes"}})
	is.True(err != nil) // a payload that breaks the resume schema is refused
	still, err := c2.InspectRun(ctx, id)
	is.NoErr(err)
	is.Equal(still.Status, "interrupted") // and the run stays interrupted
	_, err = c2.ResumeRun(ctx, p.ResumeRunParams{RunID: id, ResumePayload: p.Object{"approved": true}})
	is.NoErr(err)
	done := settled(t, c2, id)
	is.Equal(done.Status, "completed")
	is.Equal(*done.Outcome, "ok")
	out := done.Output
	is.Equal(out["count"], float64(1))
	is.Equal(out["note"], "recovered")
	is.Equal(out["from_child"], float64(1))
	is.Equal(out["approved"], true)
	peaks := out["peaks"].([]any)
	is.Equal(len(peaks), 50)
	most := 0.0
	for _, v := range peaks {
		most = max(most, v.(float64))
	}
	t.Logf("at most %.0f overlap calls ran at once upstream", most)
	is.True(most >= 4) // at least 4 calls were in flight at once on the one session
}
