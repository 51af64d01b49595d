package integration

// workflow.runs.cancel against a real third-party MCP server: npm
// @modelcontextprotocol/server-everything over stdio, started by the real
// mcpflow binary. The server is watched from its own side by a Node
// preload (cancelProbe) that records the JSON-RPC messages it receives
// and every AbortController it aborts.

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/api/client"
	p "github.com/mcpflow/mcpflow/api/protocol"
	"github.com/mcpflow/mcpflow/fakes/poll"
)

// Pinned version of the TypeScript reference server, installed by .ci/run.
const (
	everythingTSPackage = "@modelcontextprotocol/server-everything"
	everythingTSVersion = "2026.8.31"
)

// everythingTS returns the node executable and the server's entry point,
// or skips (fails in CI) when either is missing.
func everythingTS(t *testing.T) (node, script string) {
	t.Helper()
	install := fmt.Sprintf("install it from the module root with: npm install --prefix .peers %s@%s (or set MCPFLOW_PEERS to another install prefix)", everythingTSPackage, everythingTSVersion)
	node, err := exec.LookPath("node")
	if err != nil {
		missingPeer(t, "node is not on PATH; the server-everything peer needs Node.js >= 18; then %s", install)
	}
	script = filepath.Join(peersPrefix(t), "node_modules", filepath.FromSlash(everythingTSPackage), "dist", "index.js")
	if _, err := os.Stat(script); err != nil {
		missingPeer(t, "%s not found at %s; %s", everythingTSPackage, script, install)
	}
	return node, script
}

// cancelProbe is a Node preload (node --require) that appends one JSON
// line to $MCPFLOW_PROBE_LOG for every JSON-RPC message the server reads
// on stdin ({"in": message}) and for every AbortController.abort call
// ({"abort": reason}). The TypeScript SDK aborts the controller of a
// request when it handles notifications/cancelled for it, so an abort line
// shows the server itself acted on the cancellation. It wraps emit rather
// than adding a "data" listener, which would start the stream flowing
// before the SDK listens and lose its first messages.
const cancelProbe = `'use strict';
const fs = require('fs');
const out = process.env.MCPFLOW_PROBE_LOG;
const record = (o) => fs.appendFileSync(out, JSON.stringify(o) + '\n');
let pending = '';
const emit = process.stdin.emit;
process.stdin.emit = function (event, ...args) {
  if (event === 'data') {
    pending += args[0].toString('utf8');
    let nl;
    while ((nl = pending.indexOf('\n')) >= 0) {
      const line = pending.slice(0, nl).trim();
      pending = pending.slice(nl + 1);
      if (line === '') continue;
      try { record({ in: JSON.parse(line) }); } catch (e) { record({ unparsed: line }); }
    }
  }
  return emit.call(this, event, ...args);
};
const abort = AbortController.prototype.abort;
AbortController.prototype.abort = function (reason) {
  record({ abort: reason === undefined ? null : String(reason) });
  return abort.call(this, reason);
};
`

// probeLine is one line of the probe's log.
type probeLine struct {
	In *struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Name      string          `json:"name"`
			RequestID json.RawMessage `json:"requestId"`
			Reason    string          `json:"reason"`
		} `json:"params"`
	} `json:"in"`
	Abort *string `json:"abort"`
}

// readProbe parses the complete lines of the probe's log; a missing log
// reads as empty.
func readProbe(t *testing.T, path string) []probeLine {
	t.Helper()
	is := is.New(t)
	is.Helper()
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	is.NoErr(err) // read the probe log
	texts := strings.Split(string(data), "\n")
	texts = texts[:len(texts)-1] // after the last newline: a line still being written, or nothing
	lines := make([]probeLine, 0, len(texts))
	for _, text := range texts {
		var l probeLine
		is.NoErr(json.Unmarshal([]byte(text), &l)) // a probe line is JSON
		lines = append(lines, l)
	}
	return lines
}

// waitProbe polls the probe log until found returns true, for at most
// 10 seconds, and returns the lines it accepted.
func waitProbe(t *testing.T, path, what string, found func([]probeLine) bool) []probeLine {
	t.Helper()
	is := is.New(t)
	is.Helper()
	var lines []probeLine
	if !poll.Until(10*time.Second, func() bool { lines = readProbe(t, path); return found(lines) }) {
		data, _ := os.ReadFile(path)
		t.Logf("the server did not see %s within 10s; probe log:\n%s", what, data)
		is.Fail() // the upstream server sees it within the deadline
	}
	return lines
}

// waitRun polls a run until its status is no longer "running", for at
// most 20 seconds.
func waitRun(t *testing.T, c *client.Client, runID string) p.RunResult {
	t.Helper()
	is := is.New(t)
	is.Helper()
	var run p.RunResult
	if !poll.Until(20*time.Second, func() bool {
		var err error
		run, err = c.InspectRun(testContext(t), runID)
		is.NoErr(err) // inspect the run
		return run.Status != "running"
	}) {
		t.Logf("run %s still running after 20s", runID)
		is.Fail() // the run ends within the deadline
	}
	return run
}

// echoThenWait is a two-step draft: an echo, then the long-running
// operation for input.duration seconds in as many steps.
const echoThenWait = `{"name":"echo_then_wait",
	"input_schema":{"type":"object","properties":{"duration":{"type":"number"}},"required":["duration"]},
	"state_schema":{"type":"object","properties":{"greeting":{"type":"array"},"content":{"type":"array"}}},
	"output_schema":{"type":"object","properties":{"content":{"type":"array"}}},
	"outcomes":["ok"],"output":[{"path":"state.content","target":"content"}],"start":"greet",
	"steps":{
		"greet":{"use":"everything.default.echo","input":[{"target":"message","value":"about to wait"}],"output":[{"source":"content","target":"state.greeting"}]},
		"wait":{"use":"everything.default.trigger-long-running-operation",
			"input":[{"path":"input.duration","target":"duration"},{"path":"input.duration","target":"steps"}],
			"output":[{"source":"content","target":"state.content"}]},
		"tool_error":{"use":"wf.std.runtime_error","input":[{"target":"message","value":"Capability call failed"}]}},
	"routes":{"greet":{"ok":"wait","error":"tool_error"},"wait":{"ok":"__end__","error":"tool_error"},"tool_error":{"ok":"__end__"}}}`

// buildEchoThenWait scaffolds a workspace from the long-running tool,
// replaces its document with echoThenWait, saves and deploys it, and
// returns the deployment id.
func buildEchoThenWait(t *testing.T, c *client.Client, connID string) string {
	t.Helper()
	is := is.New(t)
	is.Helper()
	ctx := testContext(t)
	const name = "echo_then_wait"
	ws, err := c.CreateDraftWorkspaceFromCapability(ctx, p.CreateFromCapabilityParams{
		WorkspaceID: name + "_ws", CapabilityName: connID + ".trigger-long-running-operation", Name: ptr(name),
	})
	is.NoErr(err)
	var draft p.Object
	is.NoErr(json.Unmarshal([]byte(echoThenWait), &draft))
	var replaced p.WorkspaceResult
	is.NoErr(c.Call(ctx, p.MethodWorkspaceReplaceDocument, p.ReplaceDocumentParams{WorkspaceID: name + "_ws", Revision: ws.Revision, Draft: draft}, &replaced))
	if replaced.Status != "valid" {
		t.Logf("diagnostics: %+v", replaced.Diagnostics)
	}
	is.Equal(replaced.Status, "valid") // the two-step draft validates
	saved, err := c.CreateArtifactFromWorkspace(ctx, p.CreateArtifactParams{
		WorkspaceID: name + "_ws", ArtifactID: name, Version: 1, Title: name, Outcomes: []string{"ok"}, Kind: ptr("workflow"),
	})
	is.NoErr(err)
	is.True(saved.Saved)
	is.Equal(saved.RequiredLogicalSources, []string{connID})
	dep, err := c.SaveDeployment(ctx, p.Object{
		"id": name + ".default", "artifact_id": name, "artifact_version": 1,
		"bindings": []any{p.Object{"logical_source": connID, "concrete_source": connID}},
	})
	is.NoErr(err)
	is.True(dep.Saved)
	return dep.DeploymentID
}

// TestCancelStopsALongUpstreamCallAndKeepsTheSession cancels a run while
// its only step, server-everything's trigger-long-running-operation with
// a 30 s duration, is in flight: the cancel answers "cancelled" at once,
// the run's record and trace keep where it stopped, the server receives
// notifications/cancelled for that very tools/call and aborts its
// handler, and the same upstream process then serves another run.
func TestCancelStopsALongUpstreamCallAndKeepsTheSession(t *testing.T) {
	t.Parallel() // its own mcpflow: see parallelTests
	node, script := everythingTS(t)
	is := is.New(t)
	const (
		conn        = "everything.default"
		longTool    = "trigger-long-running-operation"
		duration    = 30 // seconds the tool runs for if nobody cancels it
		cancelBound = 5 * time.Second
	)
	dir := t.TempDir()
	probe, probeLog := filepath.Join(dir, "probe.cjs"), filepath.Join(dir, "probe.jsonl")
	is.NoErr(os.WriteFile(probe, []byte(cancelProbe), 0o600))
	src := stdioSource(conn, node, "--require", probe, script, "stdio")
	src.Transport.Env = map[string]string{"MCPFLOW_PROBE_LOG": probeLog}
	cfg := config.File{Version: 1, Server: config.Server{Store: config.Store{Root: filepath.Join(dir, "store")}, Sources: []config.Connection{src}}}
	data, err := json.Marshal(cfg)
	is.NoErr(err)
	cfgPath := filepath.Join(dir, "mcpflow.json")
	is.NoErr(os.WriteFile(cfgPath, data, 0o600))

	// The real binary, with --run-wait 0s: runs.start answers with the run
	// as it stands, while its call is still going.
	pr := startProcess(t, cfgPath, "mcpflow.log")
	c := dialURL(t, pr.url)
	ctx := testContext(t)

	_, err = c.RefreshConnectionCatalog(ctx, conn)
	is.NoErr(err)
	for _, tool := range []string{longTool, "echo"} {
		_, err := c.InspectCapability(ctx, conn+"."+tool)
		is.NoErr(err) // the server lists the tool
	}
	longDeployment := buildEchoThenWait(t, c, conn)
	echoDeployment := buildToolDeployment(t, c, conn, "echo", "echo_after_cancel")
	is.Equal(onlyStatus(t, c).Session.SessionsOpened, 1) // the refresh opened the session

	started, err := c.RunDeployment(ctx, p.StartRunParams{DeploymentID: longDeployment, WorkflowInput: p.Object{"duration": duration}})
	is.NoErr(err)
	is.Equal(started.Status, "running") // runs.start answers before the 30 s call ends
	is.True(started.RunID != nil)
	runID := *started.RunID

	// Wait until the long tools/call has reached the server: the run is
	// then running, past its first step.
	var callID json.RawMessage
	waitProbe(t, probeLog, "the tools/call of "+longTool, func(lines []probeLine) bool {
		for _, l := range lines {
			if l.In != nil && l.In.Method == "tools/call" && l.In.Params.Name == longTool {
				callID = l.In.ID
				return true
			}
		}
		return false
	})
	callSeen := time.Now()
	inFlight, err := c.InspectRun(ctx, runID)
	is.NoErr(err)
	is.Equal(inFlight.Status, "running") // the call is in flight
	is.Equal(inFlight.Outcome, (*string)(nil))
	is.Equal(inFlight.TraceCount, 1) // the echo step is done
	during := onlyStatus(t, c)
	t.Logf("while the call is in flight: session %+v", during.Session)

	reason := "the operator changed their mind"
	cancelAt := time.Now()
	var cancelled p.RunResult
	is.NoErr(c.Call(ctx, p.MethodRunsCancel, p.CancelRunParams{RunID: runID, Reason: &reason}, &cancelled))
	answered := time.Since(cancelAt)
	t.Logf("runs.cancel answered in %v (call %s was in flight for %v of its %d s)", answered, callID, time.Since(callSeen), duration)
	is.Equal(cancelled.Status, "cancelled")
	is.True(answered < cancelBound) // the cancel does not wait for the tool
	is.True(cancelled.Error != nil)
	is.Equal(*cancelled.Error, "cancelled: "+reason+`, while step "wait" was running`) // it says where the run stopped
	is.Equal(cancelled.Outcome, (*string)(nil))
	is.Equal(cancelled.Output, p.Object(nil))

	// The stored record and trace say where the run stopped.
	var traced p.RunResult
	is.NoErr(c.Call(ctx, p.MethodRunsTrace, p.TraceParams{RunID: runID, TraceRange: p.TraceRange{}}, &traced))
	is.Equal(traced.Status, "cancelled")
	is.Equal(traced.Error, cancelled.Error)
	is.Equal(traced.TraceCount, 1)
	is.Equal(len(traced.Trace), 1) // the trace ends at the step that was in flight
	is.Equal(traced.Trace[0].NodeID, "greet")
	is.Equal(traced.Trace[0].Outcome, "ok")
	is.Equal(traced.Trace[0].NextNodeID, "wait")
	is.Equal(traced.Trace[0].Output, p.Object{"content": []any{map[string]any{"type": "text", "text": "Echo: about to wait"}}})

	// From the server's side: it received notifications/cancelled for
	// that very request, and the SDK aborted the request's handler.
	var notified time.Duration
	waitProbe(t, probeLog, "notifications/cancelled for request "+string(callID), func(lines []probeLine) bool {
		var sent, aborted bool
		for _, l := range lines {
			switch {
			case l.In != nil && l.In.Method == "notifications/cancelled" && string(l.In.Params.RequestID) == string(callID):
				sent = true
			case sent && l.Abort != nil && *l.Abort == "context canceled":
				aborted = true
			}
		}
		if sent && aborted {
			notified = time.Since(cancelAt)
		}
		return sent && aborted
	})
	t.Logf("the server had notifications/cancelled and aborted the handler within %v of the cancel request", notified)

	// The session actor ends the call, and never opened another session.
	// It ends the call when go-sdk's CallTool returns, which is in no
	// order with the server's abort seen above: the status is read until
	// the call is no longer in flight (it read 1 during the call, logged
	// above).
	st := poll.Value(t, "the session's call to end", cancelBound, func() (p.ConnectionStatus, bool) {
		st := onlyStatus(t, c)
		return st, st.Session.CallsInFlight == 0
	})
	is.Equal(st.Session.State, "open")
	is.Equal(st.Session.SessionsOpened, 1)

	// A cancelled run stays cancelled.
	again, err := c.InspectRun(ctx, runID)
	is.NoErr(err)
	is.Equal(again.Status, "cancelled")

	// The same upstream process serves the next run.
	next, err := c.RunDeployment(ctx, p.StartRunParams{DeploymentID: echoDeployment, WorkflowInput: p.Object{"message": "still here"}})
	is.NoErr(err)
	is.True(next.RunID != nil)
	done := waitRun(t, c, *next.RunID)
	if done.Status != "completed" {
		t.Logf("echo run: status %q, error %v", done.Status, deref(done.Error))
	}
	is.Equal(done.Status, "completed") // the session keeps serving
	is.Equal(*done.Outcome, "ok")
	is.Equal(done.Output, p.Object{"content": []any{map[string]any{"type": "text", "text": "Echo: still here"}}})
	is.True(time.Since(callSeen) < duration*time.Second) // all of it before the long call would have ended

	st = onlyStatus(t, c)
	is.Equal(st.Session.State, "open")
	is.Equal(st.Session.SessionsOpened, 1)
	var initializes int
	for _, l := range readProbe(t, probeLog) {
		if l.In != nil && l.In.Method == "initialize" {
			initializes++
		}
	}
	is.Equal(initializes, 1) // one server process, initialized once
}
