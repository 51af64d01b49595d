package integration

// Rerun and fork (issue 31, item 4): the real binary over fakemcp on
// stdio, whose counter tool counts every call its session took, so that
// the counts a run's steps record say how often the upstream was called.

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/matryer/is"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflow/mcpflow/api/jsonrpc"
	p "github.com/mcpflow/mcpflow/api/protocol"
)

// fourCounts is four steps a, b, c, d in a line, each calling fake.a's
// counter and appending its count to state.seen; the output is that and
// the input's label.
const fourCounts = `{"name":"four","start":"a","outcomes":["ok"],
	"input_schema":{"type":"object","properties":{"label":{"type":"string"}}},
	"state_schema":{"type":"object","properties":{"seen":{"type":"array","reducer":"wf.std.append"}}},
	"output_schema":{"type":"object","properties":{"seen":{},"label":{}}},
	"output":[{"target":"seen","path":"state.seen"},{"target":"label","path":"input.label"}],
	"steps":{
	  "a":{"use":"fake.a.counter","output":[{"source":"count","target":"state.seen"}]},
	  "b":{"use":"fake.a.counter","output":[{"source":"count","target":"state.seen"}]},
	  "c":{"use":"fake.a.counter","output":[{"source":"count","target":"state.seen"}]},
	  "d":{"use":"fake.a.counter","output":[{"source":"count","target":"state.seen"}]}},
	"routes":{"a":{"ok":"b","error":"__end__"},"b":{"ok":"c","error":"__end__"},"c":{"ok":"d","error":"__end__"},"d":{"ok":"__end__","error":"__end__"}}}`

// TestAForkAfterTheThirdStepCallsTheUpstreamOnce: a fork of a four-step
// run that keeps its first three steps (from_node the fourth) calls the
// upstream once, for the fourth step, where the run called it four
// times; the fork names its parent, in inspect and list, and its trace
// marks what it replayed. A rerun runs the same input and calls every
// step again; the MCP face's mcpflow_fork_run forks too.
func TestAForkAfterTheThirdStepCallsTheUpstreamOnce(t *testing.T) {
	t.Parallel() // its own mcpflow and upstream: see parallelTests
	if testing.Short() {
		t.Skip("starts the real binary")
	}
	is := is.New(t)
	srv := startProcess(t, writeConfig(t, t.TempDir(), stdioSource("fake.a", fakeMCP)), "serve.log", "--run-wait", "30s")
	c := dialURL(t, srv.url)
	ctx := testContext(t)
	_, err := c.RefreshConnectionCatalog(ctx, "fake.a")
	is.NoErr(err)
	saveDraft(t, c, "four", fourCounts)
	_, err = c.SaveDeployment(ctx, p.Object{"id": "four.default", "artifact_id": "four", "artifact_version": 1,
		"bindings": []any{p.Object{"logical_source": "fake.a", "concrete_source": "fake.a"}}})
	is.NoErr(err)
	parent, err := c.RunDeployment(ctx, p.StartRunParams{DeploymentID: "four.default", WorkflowInput: p.Object{"label": "x"}})
	is.NoErr(err)
	is.Equal(parent.Status, "completed")
	is.Equal(parent.Output["seen"], []any{1.0, 2.0, 3.0, 4.0}) // four calls: the counter took 1 to 4

	// The fork, through the CLI: a, b and c replayed, d called once.
	cli := cliTool{t: t, url: srv.url}
	fork := cliJSON[p.RunResult](t, cli.want(0, "runs", "fork", *parent.RunID, "--from", "d", "-o", "json"))
	is.Equal(fork.Status, "completed")
	is.Equal(fork.Output["seen"], []any{1.0, 2.0, 3.0, 5.0}) // the upstream's counter went from 4 to 5: one call
	is.Equal(fork.ParentRunID, *parent.RunID)
	is.Equal(fork.ForkedFromNode, "d")
	inspected, err := c.InspectRun(ctx, *fork.RunID)
	is.NoErr(err)
	is.Equal(inspected.ParentRunID, *parent.RunID)
	listed, err := c.ListRuns(ctx, p.ListRunsParams{})
	is.NoErr(err)
	var row p.RunSummary
	for _, r := range listed.Runs {
		if r.RunID == *fork.RunID {
			row = r
		}
	}
	is.Equal(row.ParentRunID, *parent.RunID)
	is.Equal(row.ForkedFromNode, "d")
	var trace p.RunResult
	is.NoErr(c.Call(ctx, p.MethodRunsTrace, p.TraceParams{RunID: *fork.RunID}, &trace))
	var replayed []string
	for _, e := range trace.Trace {
		if e.Replayed {
			replayed = append(replayed, e.NodeID)
		}
	}
	is.Equal(replayed, []string{"a", "b", "c"})
	is.Equal(len(trace.Trace), 4)

	// A step the run never reached is refused, naming the valid ones.
	_, err = c.ForkRun(ctx, p.ForkRunParams{RunID: *parent.RunID, FromNode: "e"})
	var refused *jsonrpc.Error
	is.True(errors.As(err, &refused))
	is.Equal(refused.Code, jsonrpc.InvalidParams)
	is.True(strings.Contains(refused.Error(), "[a, b, c, d]"))
	bad := cli.run("runs", "fork", *parent.RunID, "--from", "e")
	t.Logf("mcpflow runs fork --from e: exit %d: %s", bad.code, bad.stderr)
	is.True(bad.code != 0)
	is.True(strings.Contains(bad.stderr, `never reached step "e"`))

	// A rerun: the same input, every step called again (5 to 9).
	rerun, err := c.RerunRun(ctx, p.RerunRunParams{RunID: *parent.RunID})
	is.NoErr(err)
	is.Equal(rerun.Status, "completed")
	is.Equal(rerun.ParentRunID, *parent.RunID)
	is.Equal(rerun.ForkedFromNode, "")
	is.Equal(rerun.Output["seen"], []any{6.0, 7.0, 8.0, 9.0})
	is.Equal(rerun.Output["label"], "x") // on the parent's input
	again, err := c.InspectRun(ctx, *rerun.RunID)
	is.NoErr(err)
	is.Equal(again.ArtifactVersion, 1)
	rerunRec := cliJSON[p.RunResult](t, cli.want(0, "runs", "inspect", *rerun.RunID, "-o", "json"))
	is.Equal(rerunRec.ParentRunID, *parent.RunID)

	// The MCP face's companion tool: a fork from c replays a and b and
	// calls c and d (10 and 11), then answers the run as a workflow
	// tool does.
	session := connectFace(t, strings.Replace(strings.Replace(srv.url, "ws://", "http://", 1), "/ws", "/mcp", 1))
	res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "mcpflow_fork_run", Arguments: map[string]any{"run_id": *parent.RunID, "from_node": "c"}})
	is.NoErr(err)
	is.True(!res.IsError)
	var env struct {
		Status string   `json:"status"`
		Output p.Object `json:"output"`
	}
	raw, err := json.Marshal(res.StructuredContent)
	is.NoErr(err)
	is.NoErr(json.Unmarshal(raw, &env))
	is.Equal(env.Status, "completed")
	is.Equal(env.Output["seen"], []any{1.0, 2.0, 10.0, 11.0})
}
