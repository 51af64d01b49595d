package integration

// Gateway mode (issue 30): an upstream's own tools offered through the MCP
// face beside the deployments (server.mcp.expose), each call going
// through the connection's one supervised session, the one workflows use,
// as a one-step run of kind passthrough.

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/api/client"
	p "github.com/mcpflow/mcpflow/api/protocol"
	"github.com/mcpflow/mcpflow/fakes/poll"
)

// TestMCPGatewayPassesCallsThroughTheWorkflowsSession: with npm
// server-sequential-thinking exposed under the prefix "think", the
// TypeScript SDK lists think_sequentialthinking (its upstream schema and
// description); two pass-through calls (the SDK's on a 2025-11-25
// session, then the v2 client's on 2026-07-28) count thoughts 1 then 2, a
// workflow run on the same connection then counts 3, one upstream session
// served them all (sessions_opened 1), and runs.list has each call, as a
// passthrough run started by the caller's token. A read-only token is not
// offered the tool, and its call is refused.
func TestMCPGatewayPassesCallsThroughTheWorkflowsSession(t *testing.T) {
	t.Parallel()
	tsV1.require(t)
	is := is.New(t)
	const conn = seqthinkConn
	const exposed = "think_sequentialthinking"
	pr, ws, _ := seqthinkGateway(t, config.MCPExpose{Connection: conn, Prefix: "think", Tools: &config.MCPToolFilter{Allow: []string{"sequential*"}}}, readToken)
	face := scenario{URL: "http://" + strings.TrimSuffix(strings.TrimPrefix(pr.url, "ws://"), "/ws") + "/mcp", Token: runToken.Token}

	var listed []toolInfo
	poll.For(t, "/mcp lists "+exposed, settleWait, func() bool {
		face.Steps = []step{listStep()}
		listed = goSDK.run(t, face).Steps[0].Tools
		return slices.ContainsFunc(listed, func(tool toolInfo) bool { return tool.Name == exposed })
	})
	i := slices.IndexFunc(listed, func(tool toolInfo) bool { return tool.Name == exposed })
	is.True(strings.Contains(listed[i].Description, "thinking")) // the upstream's own description
	required, _ := listed[i].InputSchema["required"].([]any)
	is.True(slices.Contains(required, any("thought"))) // the upstream's input schema

	thought := func(n int) map[string]any {
		return map[string]any{"thought": fmt.Sprintf("thought %d", n), "nextThoughtNeeded": true, "thoughtNumber": n, "totalThoughts": 3}
	}
	// The first call from @modelcontextprotocol/sdk on a 2025-11-25
	// session, the second from @modelcontextprotocol/client on 2026-07-28.
	face.Steps = []step{listStep(), callStep(exposed, thought(1)), callStep(exposed, map[string]any{"thoughtNumber": 1})}
	v1 := tsV1.run(t, face)
	bad := v1.Steps[2] // arguments the upstream's schema refuses: the model is told why, nothing starts
	is.Equal(bad.Error, (*driverError)(nil))
	is.True(bad.Result.IsError)
	is.True(strings.Contains(bad.Result.Content[0].Text, "/nextThoughtNeeded"))                               // the path at fault
	is.True(slices.ContainsFunc(v1.Steps[0].Tools, func(tool toolInfo) bool { return tool.Name == exposed })) // the TS SDK lists it
	tsV2.require(t)
	face.Steps = []step{callStep(exposed, thought(2))}
	v2 := tsV2.run(t, face)
	is.Equal(v2.ProtocolVersion, "2026-07-28")
	for n, s := range []stepResult{v1.Steps[1], v2.Steps[0]} {
		if s.Error != nil {
			t.Logf("call %d: %+v", n+1, *s.Error)
		}
		is.Equal(s.Error, (*driverError)(nil)) // the call answers
		is.True(!s.Result.IsError)
		var out struct {
			ThoughtNumber        int `json:"thoughtNumber"`
			ThoughtHistoryLength int `json:"thoughtHistoryLength"`
		}
		is.NoErr(json.Unmarshal(s.Result.StructuredContent, &out)) // the upstream's structured result
		is.Equal(out.ThoughtNumber, n+1)
		is.Equal(out.ThoughtHistoryLength, n+1) // one upstream process remembers the calls before
	}

	// A token that may not start runs is neither offered the tool nor
	// let call it; nothing starts.
	reader := scenario{URL: face.URL, Token: readToken.Token, Steps: []step{listStep(), callStep(exposed, thought(9))}}
	refused := tsV1.run(t, reader)
	is.True(!slices.ContainsFunc(refused.Steps[0].Tools, func(tool toolInfo) bool { return tool.Name == exposed }))
	is.True(refused.Steps[1].Error != nil)
	is.True(strings.Contains(refused.Steps[1].Error.Message, p.MethodRunsPassthrough)) // the method it may not call

	deployment := buildToolDeployment(t, ws, conn, "sequentialthinking", "think_on")
	run := runCompleted(t, ws, deployment, p.Object{"thought": "a workflow's thought", "nextThoughtNeeded": false, "thoughtNumber": 3, "totalThoughts": 3})
	is.Equal(run.Output["thoughtHistoryLength"], float64(3)) // the workflow's run counts on: the same session

	st := onlyStatus(t, ws)
	is.Equal(st.Session.SessionsOpened, 1) // one session for the agent and the workflow

	runs, err := ws.ListRuns(testContext(t), p.ListRunsParams{})
	is.NoErr(err)
	var passthrough, workflows int
	for _, r := range runs.Runs {
		switch r.Kind {
		case p.RunKindPassthrough:
			passthrough++
			is.Equal(r.Status, "completed")
			is.Equal(r.StartedBy, runToken.Name) // the caller's token, as runs.start records it
			is.Equal(r.ArtifactID, "passthrough:"+conn+".sequentialthinking")
		case "":
			workflows++
		}
	}
	is.Equal(passthrough, 2) // each pass-through call is a run
	is.Equal(workflows, 1)
	started, _ := scrapeMetricsAs(t, pr.url, adminToken.Token).Value("mcpflow_runs_started_total", "deployment", "passthrough:"+conn+".sequentialthinking")
	is.Equal(started, 2.0) // counted under the tool they called
}

// TestMCPGatewayForwardsWhatTheUpstreamSays: with npm server-everything
// exposed under the prefix "ev", calls of its tools through the face
// reach the TypeScript SDK as the upstream answered them, over the same
// forwarding as a workflow tool's: get-tiny-image is an image block,
// trigger-long-running-operation's progress is the client's progress,
// trigger-elicitation-request asks the client, whose answer reaches the
// server (in both eras: @modelcontextprotocol/client on 2026-07-28 too),
// and an aborted call cancels the run and the upstream call.
func TestMCPGatewayForwardsWhatTheUpstreamSays(t *testing.T) {
	t.Parallel() // its own mcpflow and upstream: see parallelTests
	tsV1.require(t)
	is := is.New(t)
	f := startFace(t, faceOptions{everything: true, mcp: &config.MCP{Expose: []config.MCPExpose{{
		Connection: faceEverything, Prefix: "ev",
		Tools: &config.MCPToolFilter{Allow: []string{"get-tiny-image", "trigger-*"}, Deny: []string{"trigger-sampling-request"}},
	}}}})
	_, err := f.ws.RefreshConnectionCatalog(testContext(t), faceEverything)
	is.NoErr(err)
	f.awaitTools(t, "ev_get-tiny-image", "ev_trigger-long-running-operation", "ev_trigger-elicitation-request")

	long := callStep("ev_trigger-long-running-operation", map[string]any{"duration": 1.5, "steps": 3})
	long.Progress = true
	sc := f.scenario(listStep(), callStep("ev_get-tiny-image", nil), long, callStep("ev_trigger-elicitation-request", nil))
	sc.Elicitation = true
	sc.Elicit = []elicitAnswer{{Action: "accept", Content: map[string]any{"name": "Ada Lovelace", "check": true}}}
	got := tsV1.run(t, sc)
	for _, s := range got.Steps[1:] {
		if s.Error != nil {
			t.Logf("%s: %+v", s.Name, *s.Error)
		}
		is.Equal(s.Error, (*driverError)(nil)) // each call answers
		is.True(!s.Result.IsError)
	}
	listed := got.Steps[0].Tools
	is.True(!slices.ContainsFunc(listed, func(tool toolInfo) bool { return tool.Name == "ev_trigger-sampling-request" })) // denied
	is.True(!slices.ContainsFunc(listed, func(tool toolInfo) bool { return tool.Name == "ev_echo" }))                     // not allowed

	image := got.Steps[1].Result.Content
	is.True(slices.ContainsFunc(image, func(b textBlock) bool { return b.Type == "image" })) // an image stays an image

	progress := got.Steps[2].Progress
	t.Logf("progress: %+v", progress)
	is.True(slices.ContainsFunc(progress, func(n progressNote) bool {
		return strings.Contains(n.Message, "trigger-long-running-operation → 3/3")
	})) // the upstream's progress, as the client's
	is.True(strings.Contains(got.Steps[2].Result.Content[0].Text, "Long running operation completed"))

	is.Equal(len(got.Elicitations), 1) // the server's elicitation, forwarded
	is.True(slices.ContainsFunc(got.Steps[3].Result.Content, func(b textBlock) bool {
		return strings.Contains(b.Text, "Ada Lovelace")
	})) // the client's answer reached the server

	// On 2026-07-28 the question is an input_required answer, and the
	// client's retry brings the answer to the same run.
	tsV2.require(t)
	modern := f.scenario(callStep("ev_trigger-elicitation-request", nil))
	modern.Elicitation = true
	modern.Elicit = []elicitAnswer{{Action: "accept", Content: map[string]any{"name": "Grace Hopper", "check": true}}}
	v2 := tsV2.run(t, modern)
	is.Equal(v2.ProtocolVersion, "2026-07-28")
	is.Equal(len(v2.Elicitations), 1)
	is.Equal(v2.Steps[0].Error, (*driverError)(nil))
	is.True(slices.ContainsFunc(v2.Steps[0].Result.Content, func(b textBlock) bool {
		return strings.Contains(b.Text, "Grace Hopper")
	})) // the 2026 client's answer reached the server

	// An aborted call cancels its run, and the upstream call.
	call := callStep("ev_trigger-long-running-operation", map[string]any{"duration": 30, "steps": 3})
	call.Abort = "stdin"
	d := tsV1.start(t, f.scenario(call, markStep("aborted"), step{Op: "wait"}))
	d.awaitMark(t, "in_flight")
	var callID json.RawMessage
	waitProbe(t, f.probe, "the tools/call of the 30 s operation", func(lines []probeLine) bool {
		var calls []json.RawMessage
		for _, l := range lines {
			if l.In != nil && l.In.Method == "tools/call" && l.In.Params.Name == "trigger-long-running-operation" {
				calls = append(calls, l.In.ID)
			}
		}
		if len(calls) < 2 {
			return false
		}
		callID = calls[1] // the second: the aborted call's
		return true
	})
	d.proceed() // abort the call
	d.awaitMark(t, "aborted")
	waitProbe(t, f.probe, fmt.Sprintf("notifications/cancelled for request %s", callID), func(lines []probeLine) bool {
		return slices.ContainsFunc(lines, func(l probeLine) bool {
			return l.In != nil && l.In.Method == "notifications/cancelled" && string(l.In.Params.RequestID) == string(callID)
		})
	})
	d.proceed() // the client closes
	is.True(d.result(t).Steps[0].Aborted)

	var passthrough []p.RunSummary
	for _, r := range f.runs(t) {
		if r.Kind == p.RunKindPassthrough {
			passthrough = append(passthrough, r)
		}
	}
	is.Equal(len(passthrough), 5)                                        // each call is a run
	is.Equal(waitRun(t, f.ws, passthrough[0].RunID).Status, "cancelled") // the aborted one (the newest) cancelled
}

// TestMCPGatewayPassesAnUpstreamsToolListChangeOn: a tool the upstream
// adds at runtime (fakemcp's add_tool, called through the face itself)
// is announced by the upstream's notifications/tools/list_changed; the
// face tells its client (notifications/tools/list_changed), lists the new
// tool under the prefix, and calls it.
func TestMCPGatewayPassesAnUpstreamsToolListChangeOn(t *testing.T) {
	t.Parallel()
	tsV1.require(t)
	is := is.New(t)
	const conn = "dynamic.default"
	src := stdioSource(conn, fakeMCP)
	src.Transport.Env = map[string]string{"FAKEMCP_ADD_TOOL": "1"}
	cfg := writeServerConfig(t, t.TempDir(), config.Server{Sources: []config.Connection{src}, MCP: &config.MCP{
		Expose: []config.MCPExpose{{Connection: conn, Prefix: "dyn"}},
	}})
	pr := startProcess(t, cfg, "mcpflow.log", "--run-wait", "2m")
	face := scenario{URL: "http://" + strings.TrimSuffix(strings.TrimPrefix(pr.url, "ws://"), "/ws") + "/mcp"}
	poll.For(t, "/mcp lists dyn_add_tool", settleWait, func() bool {
		face.Steps = []step{listStep()}
		return slices.ContainsFunc(goSDK.run(t, face).Steps[0].Tools, func(tool toolInfo) bool { return tool.Name == "dyn_add_tool" })
	})

	face.Steps = []step{listStep(), {Op: "listen"}, callStep("dyn_add_tool", map[string]any{"name": "shout"}),
		{Op: "await_list_changed", Tool: "dyn_shout"}, callStep("dyn_shout", map[string]any{"message": "hello"})}
	got := tsV1.run(t, face)
	for _, s := range got.Steps {
		if s.Error != nil {
			t.Logf("%s: %+v", s.Name, *s.Error)
		}
		is.Equal(s.Error, (*driverError)(nil))
	}
	is.True(!slices.ContainsFunc(got.Steps[0].Tools, func(tool toolInfo) bool { return tool.Name == "dyn_shout" })) // not there before
	changed := got.Steps[3]
	is.True(changed.Changed) // notifications/tools/list_changed reached the client
	is.True(slices.ContainsFunc(changed.Tools, func(tool toolInfo) bool { return tool.Name == "dyn_shout" }))
	is.Equal(string(got.Steps[4].Result.StructuredContent), `{"message":"hello"}`) // and the new tool answers
}

// seqthinkConn is the connection of npm server-sequential-thinking in
// the gateway tests.
const seqthinkConn = "seqthink.default"

// seqthinkGateway starts mcpflow with server-sequential-thinking as
// seqthinkConn, exposed through the MCP face as expose says, to the run
// and admin tokens and those of more; it dials /ws as the admin and reads
// the connection's catalog (opening its shared session), and returns the
// process, the client, and the server's command line (node, script).
func seqthinkGateway(t *testing.T, expose config.MCPExpose, more ...config.Token) (*process, *client.Client, [2]string) {
	t.Helper()
	is := is.New(t)
	node, script := sequentialThinking(t)
	src := stdioSource(seqthinkConn, node, script)
	src.Transport.Env = map[string]string{"DISABLE_THOUGHT_LOGGING": "true"}
	cfg := writeServerConfig(t, t.TempDir(), config.Server{Sources: []config.Connection{src},
		Access: &config.Access{Tokens: append([]config.Token{runToken, adminToken}, more...)},
		MCP:    &config.MCP{Expose: []config.MCPExpose{expose}}})
	pr := startProcess(t, cfg, "mcpflow.log", "--run-wait", "2m")
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("mcpflow's log: %s", pr.logs)
		}
	})
	ws, err := client.DialToken(testContext(t), pr.url, adminToken.Token)
	is.NoErr(err) // dial /ws
	t.Cleanup(func() { _ = ws.Close() })
	_, err = ws.RefreshConnectionCatalog(testContext(t), seqthinkConn)
	is.NoErr(err) // the catalog the face lists the tool from
	return pr, ws, [2]string{node, script}
}
