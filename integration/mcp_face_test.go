package integration

// The MCP face (/mcp on the serve listener, and `mcpflow mcp` over stdio)
// driven through the real binary by real third-party MCP clients
// (mcp_clients_test.go): each deployment is a tool, a tool call is a
// durable run, with progress, cancellation, interrupts as elicitation in
// both protocol eras, and the companion tools.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/matryer/is"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/api/client"
	"github.com/mcpflow/mcpflow/api/jsonrpc"
	p "github.com/mcpflow/mcpflow/api/protocol"
	"github.com/mcpflow/mcpflow/fakes/poll"
)

// The connections of the face's server: mcpflow's demo server (counter)
// and the fakes server (echo, sleep).
const (
	faceDemo = "demo.default"
	faceFake = "fake.default"
)

// The tools of the face's deployments.
const (
	counterTool = "counter_workflow" // counter_workflow.default: one counter call
	stepsTool   = "three_steps"      // three_steps.default: echo, sleep, echo
	approveTool = "approval"         // approval.default: one interrupt
	sleepTool   = "sleep_workflow"   // sleep_workflow.default: one sleep {ms}
)

// threeSteps calls three tools in a row, with no loop: echo, a 50 ms
// sleep, echo.
const threeSteps = `{"name":"three_steps","start":"first","outcomes":["ok"],
	"input_schema":{"type":"object","properties":{"message":{"type":"string"}},"required":["message"]},
	"state_schema":{"type":"object","properties":{"first":{"type":"string"},"last":{"type":"string"}}},
	"output_schema":{"type":"object","properties":{"first":{"type":"string"},"last":{"type":"string"}}},
	"steps":{
		"first":{"use":"fake.default.echo","input":[{"target":"message","path":"input.message"}],"output":[{"source":"message","target":"state.first"}]},
		"pause":{"use":"fake.default.sleep","input":[{"target":"ms","value":50}]},
		"last":{"use":"fake.default.echo","input":[{"target":"message","value":"done"}],"output":[{"source":"message","target":"state.last"}]},
		"failed":{"use":"wf.std.runtime_error","input":[{"target":"message","value":"a step failed"}]}},
	"routes":{"first":{"ok":"pause","error":"failed"},"pause":{"ok":"last","error":"failed"},"last":{"ok":"__end__","error":"failed"},"failed":{"ok":"__end__"}}}`

// approval waits for one approval whose resume schema is a flat form.
const approval = `{"name":"approval","start":"ask","outcomes":["ok"],
	"input_schema":{"type":"object","properties":{}},
	"state_schema":{"type":"object","properties":{"approved":{"type":"boolean"},"comment":{"type":"string"}}},
	"output_schema":{"type":"object","properties":{"approved":{"type":"boolean"},"comment":{"type":"string"}}},
	"steps":{"ask":{"interrupt":{"kind":"approval",
		"request":[{"target":"message","value":"Approve this deploy?"}],
		"request_schema":{"type":"object","properties":{"message":{"type":"string"}},"required":["message"]},
		"resume_schema":{"type":"object","properties":{"approved":{"type":"boolean"},"comment":{"type":"string"}},"required":["approved","comment"]},
		"resume":[{"source":"approved","target":"state.approved"},{"source":"comment","target":"state.comment"}]}}},
	"routes":{"ask":{"submitted":"__end__"}}}`

// faceServer is a real `mcpflow serve` with the face's deployments.
type faceServer struct {
	pr    *process
	cfg   string         // its config file, to start it again on the same store
	ws    *client.Client // a /ws client (with the admin token when access is on)
	mcp   string         // http://HOST:PORT/mcp
	token string         // the token MCP clients send ("": none)
	probe string         // the cancel probe's log, when everything.default is a source
}

type faceOptions struct {
	access     *config.Access
	wsToken    string // the /ws client's token
	mcpToken   string // the MCP clients' token
	everything bool   // add npm server-everything, watched by cancelProbe, as everything.default
	// everythingClient is everything.default's client block (nil: the defaults).
	everythingClient *config.Client
	mcp              *config.MCP
}

// startFace starts the real binary with the demo and fakes servers as
// sources (and server-everything if asked) and deploys counter_workflow,
// three_steps, approval and sleep_workflow.
func startFace(t *testing.T, o faceOptions) *faceServer {
	t.Helper()
	is := is.New(t)
	dir := t.TempDir()
	sources := []config.Connection{stdioSource(faceDemo, binary, "demo-server"), stdioSource(faceFake, fakeMCP)}
	f := &faceServer{token: o.mcpToken}
	if o.everything {
		node, script := everythingTS(t)
		probe := filepath.Join(dir, "probe.cjs")
		f.probe = filepath.Join(dir, "probe.jsonl")
		is.NoErr(os.WriteFile(probe, []byte(cancelProbe), 0o600))
		src := stdioSource("everything.default", node, "--require", probe, script, "stdio")
		src.Transport.Env = map[string]string{"MCPFLOW_PROBE_LOG": f.probe}
		src.Client = o.everythingClient
		sources = append(sources, src)
	}
	cfg := writeServerConfig(t, dir, config.Server{Sources: sources, Access: o.access, MCP: o.mcp})
	// Runs answer once they end (serve's default), as a tool call does.
	f.pr, f.cfg = startProcess(t, cfg, "mcpflow.log", "--run-wait", "2m"), cfg
	f.mcp = mcpEndpoint(f.pr)
	ws, err := client.DialToken(testContext(t), f.pr.url, o.wsToken)
	is.NoErr(err) // dial /ws
	t.Cleanup(func() { _ = ws.Close() })
	f.ws = ws

	buildCounterDeployment(t, ws, faceDemo)
	_, err = ws.RefreshConnectionCatalog(testContext(t), faceFake)
	is.NoErr(err)
	for id, doc := range map[string]string{"three_steps": threeSteps, "approval": approval} {
		saveArtifact(t, ws, id, doc, []string{"ok"})
		_, err := ws.SaveDeployment(testContext(t), p.Object{"id": id + ".default", "artifact_id": id, "artifact_version": 1, "bindings": []any{
			p.Object{"logical_source": faceFake, "concrete_source": faceFake},
		}})
		is.NoErr(err) // deploy
	}
	buildToolDeploymentFor(t, ws, faceFake, "sleep")
	f.awaitTools(t, counterTool, stepsTool, approveTool, sleepTool)
	t.Cleanup(func() {
		if t.Failed() {
			logs, _ := os.ReadFile(f.pr.logs)
			t.Logf("mcpflow's log:\n%s", logs)
		}
	})
	return f
}

// awaitTools waits until /mcp lists the tools: the face learns of saved
// deployments from the admin event log, a moment after the save answers
// (notifications/tools/list_changed tells clients when).
func (f *faceServer) awaitTools(t *testing.T, names ...string) {
	t.Helper()
	poll.For(t, fmt.Sprintf("/mcp lists %v", names), settleWait, func() bool {
		got := goSDK.run(t, f.scenario(listStep()))
		return !slices.ContainsFunc(names, func(name string) bool {
			return !slices.ContainsFunc(got.Steps[0].Tools, func(tool toolInfo) bool { return tool.Name == name })
		})
	})
}

// scenario is a scenario against f's /mcp with f's token.
func (f *faceServer) scenario(steps ...step) scenario {
	return scenario{URL: f.mcp, Token: f.token, Steps: steps}
}

// sessionsOpened is the sessions_opened of connection id.
func (f *faceServer) sessionsOpened(t *testing.T, id string) int {
	t.Helper()
	is := is.New(t)
	is.Helper()
	statuses, err := f.ws.GetConnectionStatuses(testContext(t))
	is.NoErr(err)
	for _, st := range statuses.Statuses {
		if st.ConnectionID == id {
			return st.Session.SessionsOpened
		}
	}
	is.Fail() // the connection has a status
	return 0
}

// runs lists the runs of f's store, newest first as the store lists them.
func (f *faceServer) runs(t *testing.T) []p.RunSummary {
	t.Helper()
	listed, err := f.ws.ListRuns(testContext(t), p.ListRunsParams{})
	is.New(t).NoErr(err)
	return listed.Runs
}

// eachClient runs test once per MCP client, each against its own server.
func eachClient(t *testing.T, clients []mcpClient, test func(t *testing.T, c mcpClient)) {
	for _, c := range clients {
		t.Run(c.name, func(t *testing.T) {
			c.require(t)
			test(t, c)
		})
	}
}

// called checks that a tool call answered a result, and returns it with
// its envelope. structuredContent is the envelope; the first text block
// is what the run says for a model to read: a completed run's output
// (the string of a one-string output, else its JSON), a failed run's
// error (others may follow, for the model).
func called(t *testing.T, s stepResult) (*callResult, envelope) {
	t.Helper()
	is := is.New(t)
	is.Helper()
	if s.Error != nil {
		t.Logf("%s: %+v", s.Name, *s.Error)
	}
	is.Equal(s.Error, (*driverError)(nil)) // the call answers a result
	is.True(s.Result != nil)
	var env envelope
	is.NoErr(json.Unmarshal(s.Result.StructuredContent, &env)) // structuredContent is the envelope
	is.True(env.RunID != "")
	is.True(len(s.Result.Content) >= 1)
	is.Equal(s.Result.Content[0].Type, "text")
	said := s.Result.Content[0].Text
	switch {
	case env.Status == "failed":
		is.Equal(said, env.Error) // a failed run's text is its error
	case env.Status == "completed" && len(env.Output) == 1:
		for _, v := range env.Output {
			if str, ok := v.(string); ok {
				is.Equal(said, str) // a one-string output is the string
			}
		}
	case env.Status == "completed" && env.Output != nil && env.Output["content"] == nil:
		var output map[string]any
		is.NoErr(json.Unmarshal([]byte(said), &output)) // the output's JSON, not the envelope's
		is.Equal(output, env.Output)
	}
	return s.Result, env
}

// completed checks that a call's run completed and returns its envelope.
func completed(t *testing.T, s stepResult) envelope {
	t.Helper()
	is := is.New(t)
	is.Helper()
	res, env := called(t, s)
	if env.Status != "completed" {
		t.Logf("%s: %+v", s.Name, env)
	}
	is.Equal(env.Status, "completed")
	is.True(!res.IsError) // isError only for a failed run
	return env
}

var toolName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,48}$`)

func TestMCPFaceListsTheDeploymentsAsTools(t *testing.T) {
	t.Parallel() // its own mcpflow: see parallelTests
	eachClient(t, mcpClients, func(t *testing.T, c mcpClient) {
		is := is.New(t)
		f := startFace(t, faceOptions{})
		got := c.run(t, f.scenario(listStep(), listStep()))
		if c.modern() {
			is.Equal(got.ProtocolVersion, "2026-07-28") // the client negotiated the 2026 era
		} else {
			is.Equal(got.ProtocolVersion, "2025-11-25")
		}
		list := got.Steps[0]
		is.Equal(list.Error, (*driverError)(nil)) // tools/list answers
		byName := map[string]toolInfo{}
		var names []string
		for _, tool := range list.Tools {
			byName[tool.Name] = tool
			names = append(names, tool.Name)
		}
		t.Logf("%s lists %v", c.name, names)
		for _, name := range []string{counterTool, stepsTool, approveTool, sleepTool, "mcpflow_get_run", "mcpflow_resume_run", "mcpflow_cancel_run"} {
			tool, ok := byName[name]
			is.True(ok) // the tool is listed
			is.True(toolName.MatchString(tool.Name))
			is.True(strings.TrimSpace(tool.Description) != "") // a description, never empty
			is.Equal(tool.InputSchema["type"], "object")       // inputSchema is an object schema
			is.True(tool.OutputSchema != nil)                  // outputSchema: the envelope
			is.Equal(tool.OutputSchema["type"], "object")
			props, _ := tool.OutputSchema["properties"].(map[string]any)
			for _, field := range []string{"run_id", "status", "outcome", "output", "interrupt", "error"} {
				is.True(props[field] != nil) // the envelope declares field
			}
		}
		// The deployment's input schema is the artifact's.
		props, _ := byName[stepsTool].InputSchema["properties"].(map[string]any)
		is.True(props["message"] != nil)
		again := make([]string, len(got.Steps[1].Tools))
		for i, tool := range got.Steps[1].Tools {
			again[i] = tool.Name
		}
		is.Equal(again, names) // listed in a deterministic order
	})
}

func TestMCPFaceSeedJourney(t *testing.T) {
	t.Parallel() // its own mcpflow: see parallelTests
	eachClient(t, mcpClients, func(t *testing.T, c mcpClient) {
		f := startFace(t, faceOptions{})
		got := c.run(t, f.scenario(callStep(counterTool, nil), callStep(counterTool, nil)))
		seedJourney(t, f, got)
	})
}

// seedJourney checks two calls of the counter tool: count 1, then 2, on
// one upstream session.
func seedJourney(t *testing.T, f *faceServer, got driverResult) {
	t.Helper()
	is := is.New(t)
	is.Helper()
	for i, s := range got.Steps {
		env := completed(t, s)
		is.True(env.Outcome != nil)
		is.Equal(*env.Outcome, "ok")
		is.Equal(env.Output, map[string]any{"count": float64(i + 1)}) // one session: the count goes on
	}
	is.Equal(f.sessionsOpened(t, faceDemo), 1) // one upstream session served both calls
	// Each call is a durable run of the deployment.
	runs := f.runs(t)
	is.Equal(len(runs), 2)
	for _, r := range runs {
		is.Equal(r.DeploymentID, "counter_workflow.default")
		is.Equal(r.Status, "completed")
		run, err := f.ws.InspectRun(testContext(t), r.RunID)
		is.NoErr(err)
		is.Equal(run.StartedBy, "local") // no tokens: the run records a local caller
	}
}

// TestMCPFaceSeedJourneyOverStdio has the TypeScript clients launch
// `mcpflow mcp` as a stdio server, as a host that only launches commands
// does; the v2 client's auto negotiation probes a sibling process first.
func TestMCPFaceSeedJourneyOverStdio(t *testing.T) {
	t.Parallel() // its own mcpflow: see parallelTests
	eachClient(t, []mcpClient{tsV1, tsV2}, func(t *testing.T, c mcpClient) {
		f := startFace(t, faceOptions{})
		sc := scenario{
			Stdio: &stdioCommand{Command: binary, Args: []string{"mcp", "--url", f.pr.url}},
			Steps: []step{callStep(counterTool, nil), callStep(counterTool, nil)},
		}
		got := c.run(t, sc)
		if c.modern() {
			is.New(t).Equal(got.ProtocolVersion, "2026-07-28") // mcpflow mcp speaks the 2026 era too
		}
		seedJourney(t, f, got)
	})
}

func TestMCPFaceThreeStepsSendProgressBeforeTheResult(t *testing.T) {
	t.Parallel() // its own mcpflow: see parallelTests
	eachClient(t, mcpClients, func(t *testing.T, c mcpClient) {
		is := is.New(t)
		f := startFace(t, faceOptions{})
		call := callStep(stepsTool, map[string]any{"message": "hello"})
		call.Progress = true
		got := c.run(t, f.scenario(call))
		s := got.Steps[0]
		env := completed(t, s)
		is.Equal(env.Output, map[string]any{"first": "hello", "last": "done"})
		t.Logf("%s: %d progress notifications: %+v", c.name, len(s.Progress), s.Progress)
		is.True(s.ProgressAtResult >= 3) // at least three before the result
		nodes := map[string]bool{}
		for i, n := range s.Progress {
			is.True(n.Message != "")
			if i > 0 {
				is.True(n.Progress > s.Progress[i-1].Progress) // progress increases
			}
			is.True(n.Total != nil) // the graph has no loop: a total
			node, _, _ := strings.Cut(n.Message, ":")
			nodes[node] = true
		}
		for _, node := range []string{"first", "pause", "last"} {
			is.True(nodes[node]) // a notification names each step
		}
	})
}

func TestMCPFaceAnApprovalIsAnElicitation(t *testing.T) {
	t.Parallel() // its own mcpflow: see parallelTests
	eachClient(t, mcpClients, func(t *testing.T, c mcpClient) {
		is := is.New(t)
		f := startFace(t, faceOptions{})
		payload := map[string]any{"approved": true, "comment": "ship it"}
		sc := f.scenario(callStep(approveTool, nil))
		sc.Elicitation = true
		sc.Elicit = []elicitAnswer{{Action: "accept", Content: payload}}
		got := c.run(t, sc)
		env := completed(t, got.Steps[0])
		is.Equal(env.Output, payload) // the run completes with the submitted payload

		is.Equal(len(got.Elicitations), 1) // one interrupt, one elicitation
		e := got.Elicitations[0]
		is.True(strings.Contains(e.Message, "Approve this deploy?")) // the interrupt's message
		is.Equal(e.RequestedSchema["type"], "object")
		props, _ := e.RequestedSchema["properties"].(map[string]any)
		is.True(props["approved"] != nil)
		is.True(props["comment"] != nil)
		is.Equal(len(f.runs(t)), 1) // the answer resumed that run, and started no other
	})
}

func TestMCPFaceWithoutElicitationTheRunIsResumedByTool(t *testing.T) {
	t.Parallel() // its own mcpflow: see parallelTests
	eachClient(t, mcpClients, func(t *testing.T, c mcpClient) {
		is := is.New(t)
		f := startFace(t, faceOptions{})
		payload := map[string]any{"approved": false, "comment": "not today"}
		first := 0
		resume := callStep("mcpflow_resume_run", map[string]any{"payload": payload})
		resume.RunIDFrom = &first
		got := c.run(t, f.scenario(callStep(approveTool, nil), resume))

		is.Equal(len(got.Elicitations), 0) // never an elicitation to a client that declared none
		res, env := called(t, got.Steps[0])
		is.Equal(env.Status, "interrupted")
		is.True(!res.IsError)
		is.True(env.Interrupt != nil) // the envelope carries the interrupt
		t.Logf("%s: interrupted envelope %+v", c.name, env)
		is.True(slices.ContainsFunc(res.Content, func(c textBlock) bool { return strings.Contains(c.Text, "mcpflow_resume_run") })) // the text tells the model what to call

		resumed := completed(t, got.Steps[1])
		is.Equal(resumed.RunID, env.RunID) // the same run
		is.Equal(resumed.Output, payload)
		is.Equal(len(f.runs(t)), 1)
	})
}

func TestMCPFaceAnAbortedCallCancelsTheRunUpstreamToo(t *testing.T) {
	t.Parallel() // its own mcpflow: see parallelTests
	eachClient(t, mcpClients, func(t *testing.T, c mcpClient) {
		is := is.New(t)
		f := startFace(t, faceOptions{everything: true})
		conn := "everything.default"
		_, err := f.ws.RefreshConnectionCatalog(testContext(t), conn)
		is.NoErr(err)
		buildEchoThenWait(t, f.ws, conn)
		f.awaitTools(t, "echo_then_wait")

		call := callStep("echo_then_wait", map[string]any{"duration": 30})
		call.Abort = "stdin"
		// The client keeps its session after the abort, as a host whose
		// user stopped one call does: closing it at once would race the
		// notifications/cancelled the client sends.
		d := c.start(t, f.scenario(call, markStep("aborted"), step{Op: "wait"}))
		d.awaitMark(t, "in_flight")
		// The long tools/call has reached the upstream server.
		var callID json.RawMessage
		waitProbe(t, f.probe, "the tools/call of trigger-long-running-operation", func(lines []probeLine) bool {
			for _, l := range lines {
				if l.In != nil && l.In.Method == "tools/call" && l.In.Params.Name == "trigger-long-running-operation" {
					callID = l.In.ID
					return true
				}
			}
			return false
		})
		runs := f.runs(t)
		is.Equal(len(runs), 1)
		is.Equal(runs[0].Status, "running")

		d.proceed() // abort the call
		d.awaitMark(t, "aborted")
		run := waitRun(t, f.ws, runs[0].RunID)
		is.Equal(run.Status, "cancelled") // the run is cancelled, as runs.cancel does
		// The upstream server received notifications/cancelled for its call.
		waitProbe(t, f.probe, "notifications/cancelled for request "+string(callID), func(lines []probeLine) bool {
			for _, l := range lines {
				if l.In != nil && l.In.Method == "notifications/cancelled" && string(l.In.Params.RequestID) == string(callID) {
					return true
				}
			}
			return false
		})
		d.proceed() // the client closes
		got := d.result(t)
		is.True(got.Steps[0].Aborted)
		is.True(got.Steps[0].Result == nil) // an aborted call answers nothing
	})
}

func TestMCPFaceASavedDeploymentIsAnnouncedAndCallable(t *testing.T) {
	t.Parallel() // its own mcpflow: see parallelTests
	eachClient(t, mcpClients, func(t *testing.T, c mcpClient) {
		is := is.New(t)
		f := startFace(t, faceOptions{})
		d := c.start(t, f.scenario(listStep(), step{Op: "listen"}, markStep("listening"), step{Op: "await_list_changed", Tool: "echo_workflow"},
			callStep("echo_workflow", map[string]any{"message": "new tool"})))
		d.awaitMark(t, "listening")
		buildToolDeploymentFor(t, f.ws, faceFake, "echo") // through /ws JSON-RPC
		got := d.result(t)

		is.True(!slices.ContainsFunc(got.Steps[0].Tools, func(tool toolInfo) bool { return tool.Name == "echo_workflow" }))
		changed := got.Steps[3]
		if changed.Error != nil {
			t.Logf("%s: %+v", c.name, *changed.Error)
		}
		is.True(changed.Changed) // notifications/tools/list_changed arrived
		is.True(got.ListChanged >= 1)
		is.True(slices.ContainsFunc(changed.Tools, func(tool toolInfo) bool { return tool.Name == "echo_workflow" })) // the new tool is listed
		env := completed(t, got.Steps[4])
		is.Equal(env.Output, map[string]any{"message": "new tool"}) // and callable
	})
}

func TestMCPFaceAClientThatGoesAwayLeavesTheRunRunning(t *testing.T) {
	t.Parallel() // its own mcpflow: see parallelTests
	tsV1.require(t)
	goSDK.require(t)
	is := is.New(t)
	f := startFace(t, faceOptions{})
	const ms = 4000
	call := callStep(sleepTool, map[string]any{"ms": ms})
	call.Abort = "stdin" // never sent: the client is killed while it waits
	d := tsV1.start(t, f.scenario(call))
	d.awaitMark(t, "in_flight")
	var runID string
	poll.For(t, "the tool call's run is running", settleWait, func() bool {
		runs := f.runs(t)
		if len(runs) == 1 && runs[0].Status == "running" {
			runID = runs[0].RunID
		}
		return runID != ""
	})
	d.kill() // the host dies mid-run
	got := <-d.done
	is.True(got.Fatal != nil) // killed: no result
	still, err := f.ws.InspectRun(testContext(t), runID)
	is.NoErr(err)
	is.Equal(still.Status, "running") // the run goes on without its client

	// Another client finds the run's output with mcpflow_get_run.
	var env envelope
	poll.For(t, "mcpflow_get_run answers the run completed", settleWait, func() bool {
		got := goSDK.run(t, f.scenario(callStep("mcpflow_get_run", map[string]any{"run_id": runID})))
		_, env = called(t, got.Steps[0])
		return env.Status != "running"
	})
	is.Equal(env.RunID, runID)
	is.Equal(env.Status, "completed")
	is.Equal(env.Output, map[string]any{"slept_ms": float64(ms)})
}

// The access tests' tokens: readToken (lists tools) and runToken (calls
// them) of access_test.go, and adminToken for the /ws client.
func startGuardedFace(t *testing.T) *faceServer {
	t.Helper()
	return startFace(t, faceOptions{
		access: &config.Access{
			Tokens:         []config.Token{readToken, runToken, adminToken},
			AllowedOrigins: []string{"https://console.example"},
		},
		wsToken:  adminToken.Token,
		mcpToken: runToken.Token,
	})
}

// postMCP posts one JSON-RPC frame to f's /mcp with headers.
func postMCP(t *testing.T, f *faceServer, frame string, headers map[string]string) rpcReply {
	t.Helper()
	r, err := sendMCP(testContext(t), f.mcp, frame, headers)
	is.New(t).NoErr(err) // POST /mcp
	return r
}

// sendMCP is postMCP for a goroutine of a test, which may not fail it.
func sendMCP(ctx context.Context, url, frame string, headers map[string]string) (rpcReply, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(frame))
	if err != nil {
		return rpcReply{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return rpcReply{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return rpcReply{status: resp.StatusCode, header: resp.Header, body: body}, err
}

// modernCall is a 2026-07-28 tools/call of tool, with the request's
// _meta that era asks for.
func modernCall(tool string) string {
	return `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"_meta":{` +
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},` +
		`"io.modelcontextprotocol/clientInfo":{"name":"raw","version":"0"}},"name":"` + tool + `","arguments":{}}}`
}

// sseData is the one JSON-RPC message of a response body: the data of
// its event, or the body itself when it is JSON.
func sseData(t *testing.T, body []byte) json.RawMessage {
	t.Helper()
	for _, line := range strings.Split(string(body), "\n") {
		if data, ok := strings.CutPrefix(line, "data:"); ok {
			return json.RawMessage(strings.TrimSpace(data))
		}
	}
	return json.RawMessage(body)
}

const mcpInitialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`

func TestMCPFaceAccess(t *testing.T) {
	t.Parallel() // its own mcpflow: see parallelTests
	goSDK.require(t)
	is := is.New(t)
	f := startGuardedFace(t)

	// No token, or a wrong one: 401 with WWW-Authenticate, nothing served.
	for name, headers := range map[string]map[string]string{
		"no token":    nil,
		"wrong token": {"Authorization": "Bearer not-a-configured-token-at-all"},
	} {
		r := postMCP(t, f, mcpInitialize, headers)
		t.Logf("%s: %d %s", name, r.status, r.body)
		is.Equal(r.status, http.StatusUnauthorized)
		is.True(strings.HasPrefix(r.header.Get("WWW-Authenticate"), "Bearer"))
		is.True(!strings.Contains(string(r.body), "not-a-configured")) // the token is never echoed
	}
	for _, c := range []mcpClient{goSDK, goSDK2025} {
		sc := f.scenario(listStep())
		sc.Token = ""
		got := c.start(t, sc)
		res := <-got.done
		is.True(res.Fatal != nil) // a client without a token cannot connect
		t.Logf("%s without a token: %+v", c.name, *res.Fatal)
	}

	// A foreign Origin: 403, with a valid token.
	r := postMCP(t, f, mcpInitialize, map[string]string{"Authorization": "Bearer " + runToken.Token, "Origin": "https://evil.example"})
	t.Logf("foreign origin: %d %s", r.status, r.body)
	is.Equal(r.status, http.StatusForbidden)
	r = postMCP(t, f, mcpInitialize, map[string]string{"Authorization": "Bearer " + runToken.Token, "Origin": "https://console.example"})
	is.Equal(r.status, http.StatusOK) // an allowed one is served

	// A read token is not offered the workflow tools, which start runs, and
	// cannot call them: a JSON-RPC error at HTTP 200 (the session goes
	// on), and no run starts.
	for _, c := range []mcpClient{goSDK, goSDK2025} {
		sc := f.scenario(listStep(), callStep(counterTool, nil), listStep())
		sc.Token = readToken.Token
		got := c.run(t, sc)
		is.Equal(got.Steps[0].Error, (*driverError)(nil))
		is.True(!slices.ContainsFunc(got.Steps[0].Tools, func(tool toolInfo) bool { return tool.Name == counterTool })) // read does not list
		refused := got.Steps[1]
		t.Logf("%s: a read token's call: %+v %+v", c.name, refused.Error, refused.Result)
		is.True(refused.Error != nil)                     // the call is refused
		is.Equal(got.Steps[2].Error, (*driverError)(nil)) // and the session still serves
	}
	// On the wire (2026-07-28, stateless): HTTP 200 and a JSON-RPC error,
	// since go-sdk's client takes a 4xx for a dead connection.
	r = postMCP(t, f, modernCall(counterTool), map[string]string{
		"Authorization": "Bearer " + readToken.Token, "Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": counterTool,
	})
	t.Logf("a read token's tools/call: %d %s", r.status, r.body)
	is.Equal(r.status, http.StatusOK)
	is.Equal(errorCode(t, sseData(t, r.body)), jsonrpc.Forbidden) // -32003
	is.Equal(len(f.runs(t)), 0)                                   // nothing ran

	// The run token calls, and the run records the token's name.
	got := goSDK.run(t, f.scenario(callStep(counterTool, nil)))
	env := completed(t, got.Steps[0])
	run, err := f.ws.InspectRun(testContext(t), env.RunID)
	is.NoErr(err)
	is.Equal(run.StartedBy, runToken.Name)
}

func TestMCPFaceAForgedRequestStateIsRefused(t *testing.T) {
	t.Parallel() // its own mcpflow: see parallelTests
	is := is.New(t)
	f := startGuardedFace(t)
	ctx := testContext(t)
	cl := mcp.NewClient(&mcp.Implementation{Name: "forger", Version: "0"}, &mcp.ClientOptions{
		Capabilities:   &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}}},
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true}, // the test makes the retries
	})
	cs, err := cl.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: f.mcp, HTTPClient: bearerClient(runToken.Token), MaxRetries: -1}, nil)
	is.NoErr(err)
	defer cs.Close()
	is.Equal(cs.InitializeResult().ProtocolVersion, "2026-07-28")

	asked, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: approveTool, Arguments: map[string]any{}})
	is.NoErr(err)
	is.True(asked.NeedsInput()) // input_required, with a signed requestState
	is.True(asked.RequestState != "")
	is.Equal(len(asked.InputRequests), 1)
	var key string
	for k := range asked.InputRequests {
		key = k
	}
	answer := mcp.InputResponseMap{key: &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approved": true, "comment": "forged"}}}

	tampered := []byte(asked.RequestState)
	tampered[len(tampered)/2] ^= 1
	for name, state := range map[string]string{
		"made up":  "eyJydW4iOiJzb21lIG90aGVyIHJ1biJ9.bm90LWEtc2lnbmF0dXJl",
		"tampered": string(tampered),
	} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: approveTool, Arguments: map[string]any{}, RequestState: state, InputResponses: answer})
		t.Logf("%s requestState: %v %+v", name, err, res)
		is.True(err != nil || res.IsError) // refused
	}
	runs := f.runs(t)
	is.Equal(len(runs), 1)
	is.Equal(runs[0].Status, "interrupted") // nothing resumed the run, and nothing started another

	// The real state resumes it.
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: approveTool, Arguments: map[string]any{}, RequestState: asked.RequestState, InputResponses: answer})
	is.NoErr(err)
	var env envelope
	is.NoErr(remarshal(res.StructuredContent, &env))
	is.Equal(env.RunID, runs[0].RunID)
	is.Equal(env.Status, "completed")
}

// The single-scope tokens of the listing test, beside readToken and
// adminToken.
var (
	runOnlyToken = config.Token{Name: "runner", Token: "runonly-" + strings.Repeat("u", 24), Scopes: []string{"run"}}
	authorToken  = config.Token{Name: "author", Token: "author-" + strings.Repeat("w", 24), Scopes: []string{"author"}}
)

// forbidden reports whether c's call was refused for want of scope:
// -32003, which go-sdk's client takes for its own "client is closing"
// and reports without its code, by the refusal's words.
func forbidden(c mcpClient, e *driverError) bool {
	switch {
	case e == nil:
		return false
	case c.script == "": // go-sdk
		return strings.Contains(e.Message, "forbidden: ")
	}
	return fmt.Sprint(e.Code) == fmt.Sprint(jsonrpc.Forbidden)
}

func TestMCPFaceEachTokenListsExactlyTheToolsItCanCall(t *testing.T) {
	t.Parallel() // its own mcpflow: see parallelTests
	is := is.New(t)
	f := startFace(t, faceOptions{
		access:   &config.Access{Tokens: []config.Token{readToken, runOnlyToken, authorToken, adminToken}},
		wsToken:  adminToken.Token,
		mcpToken: adminToken.Token,
		mcp:      &config.MCP{Authoring: true},
	})

	// admin may call every method: its list is every tool the face has.
	everything := []string{approveTool, counterTool, "mcpflow_cancel_run", "mcpflow_draft", "mcpflow_draft_bind", "mcpflow_draft_route",
		"mcpflow_draft_step", "mcpflow_fork_run", "mcpflow_get_run", "mcpflow_publish", "mcpflow_rerun_run", "mcpflow_resume_run",
		"mcpflow_search_capabilities", sleepTool, stepsTool}
	want := map[string][]string{
		adminToken.Name: everything,
		// runs.inspect; capabilities.list; draft_workspaces.get, .validate
		// and .compile (an authoring tool is listed where one of its
		// operations may be called)
		readToken.Name: {"mcpflow_draft", "mcpflow_get_run", "mcpflow_search_capabilities"},
		// runs.cancel; a workflow tool also follows its run (read)
		runOnlyToken.Name: {"mcpflow_cancel_run"},
		// the draft edits, create_artifact, deployments.save
		authorToken.Name: {"mcpflow_draft", "mcpflow_draft_bind", "mcpflow_draft_route", "mcpflow_draft_step", "mcpflow_publish"},
	}
	calls := []step{listStep()}
	for _, name := range everything {
		calls = append(calls, callStep(name, nil))
	}
	for _, tok := range []config.Token{adminToken, readToken, runOnlyToken, authorToken} {
		t.Run(tok.Name, func(t *testing.T) {
			eachClient(t, mcpClients, func(t *testing.T, c mcpClient) {
				is := is.New(t)
				sc := f.scenario(calls...)
				sc.Token = tok.Token
				got := c.run(t, sc)
				is.Equal(got.Fatal, (*driverError)(nil))
				var listed []string
				for _, tool := range got.Steps[0].Tools {
					listed = append(listed, tool.Name)
				}
				slices.Sort(listed)
				t.Logf("%s, %s lists %v", tok.Name, c.name, listed)
				is.Equal(listed, want[tok.Name]) // exactly the tools the token can call
				// Each tool checked by calling it: a listed one is never
				// refused for scope, an unlisted one always is.
				for _, s := range got.Steps[1:] {
					if slices.Contains(listed, s.Name) {
						if s.Error != nil {
							t.Logf("%s, %s: listed %s answered %+v", tok.Name, c.name, s.Name, *s.Error)
						}
						is.True(!forbidden(c, s.Error)) // a listed tool is callable
						continue
					}
					t.Logf("%s, %s: unlisted %s answered %+v", tok.Name, c.name, s.Name, s.Error)
					is.True(forbidden(c, s.Error)) // an unlisted tool answers -32003
				}
			})
		})
	}
}

// The bounds of the session cap test: small, so that 3,000 initializes
// hit them at once.
const (
	capPerToken = 10
	capServer   = 25
	capIdle     = 2 * time.Second
)

// newSession POSTs a 2025-era initialize to f's /mcp with token: the
// session's id, or "" and the reply when it was refused.
func newSession(t *testing.T, f *faceServer, token string) (string, rpcReply) {
	t.Helper()
	r := postMCP(t, f, mcpInitialize, map[string]string{"Authorization": "Bearer " + token})
	return r.header.Get("Mcp-Session-Id"), r
}

// pingSession pings session id of token: 200 while it is open, 404 once
// it is closed.
func pingSession(t *testing.T, f *faceServer, token, id string) int {
	t.Helper()
	return postMCP(t, f, `{"jsonrpc":"2.0","id":7,"method":"ping"}`, map[string]string{
		"Authorization": "Bearer " + token, "Mcp-Session-Id": id, "Mcp-Protocol-Version": "2025-11-25"}).status
}

// sessionRefused checks a refused initialize: 429, Retry-After, and a
// JSON-RPC error (-32000) that names the bound and how to raise it.
func sessionRefused(t *testing.T, r rpcReply, knob string) {
	t.Helper()
	is := is.New(t)
	is.Helper()
	if r.status != http.StatusTooManyRequests {
		t.Logf("initialize: %d %s", r.status, r.body)
	}
	is.Equal(r.status, http.StatusTooManyRequests)
	is.Equal(r.header.Get("Retry-After"), "2") // the idle time after which a session makes room
	var reply struct {
		ID    int `json:"id"`
		Error struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	is.NoErr(json.Unmarshal(r.body, &reply))
	is.Equal(reply.ID, 1) // the initialize's id
	is.Equal(reply.Error.Code, jsonrpc.Overloaded)
	is.True(strings.Contains(reply.Error.Message, "the limit ("+knob+")")) // which bound
	is.True(strings.Contains(reply.Error.Message, "raise "+knob))          // how to raise it
	is.True(strings.Contains(reply.Error.Message, "idle for 2s"))          // and that idle ones make room
}

func TestMCPFaceSessionCapHoldsUnder3000Initializes(t *testing.T) {
	t.Parallel() // its own mcpflow: see parallelTests
	is := is.New(t)
	dir := t.TempDir()
	cfg := writeServerConfig(t, dir, config.Server{
		Access: &config.Access{Tokens: []config.Token{readToken, runToken, authorToken, adminToken}},
		MCP:    &config.MCP{MaxSessionsPerToken: capPerToken, MaxSessions: capServer, SessionEvictIdleMS: int(capIdle / time.Millisecond)},
	})
	pr := startProcess(t, cfg, "mcpflow.log")
	f := &faceServer{pr: pr, mcp: "http://" + strings.TrimSuffix(strings.TrimPrefix(pr.url, "ws://"), "/ws") + "/mcp"}
	sessions := func(token string) (float64, float64) { // the token's open sessions, and all
		m := scrapeMetricsAs(t, pr.url, adminToken.Token)
		mine, _ := m.Value("mcpflow_mcp_sessions", "token", token)
		all, _ := m.Value("mcpflow_mcp_sessions")
		return mine, all
	}

	// One token's 3,000 initializes, eight at a time, sampled as they go.
	const storm, workers = 3000, 8
	ctx, cancel := context.WithTimeout(testContext(t), 2*time.Minute)
	defer cancel()
	var (
		next, accepted atomic.Int64
		mu             sync.Mutex
		refusals       []rpcReply
		failures       []string
		done           sync.WaitGroup
	)
	began := time.Now()
	for range workers {
		done.Go(func() {
			for next.Add(1) <= storm {
				r, err := sendMCP(ctx, f.mcp, mcpInitialize, map[string]string{"Authorization": "Bearer " + readToken.Token})
				mu.Lock()
				switch {
				case err != nil:
					failures = append(failures, err.Error())
				case r.status == http.StatusOK && r.header.Get("Mcp-Session-Id") != "":
					accepted.Add(1)
				default:
					refusals = append(refusals, r)
				}
				mu.Unlock()
			}
		})
	}
	finished := make(chan struct{})
	go func() { done.Wait(); close(finished) }()
	var maxMine, maxAll float64
	sample := time.NewTicker(20 * time.Millisecond)
	defer sample.Stop()
	for sampling := true; sampling; {
		select {
		case <-finished:
			sampling = false
		case <-sample.C:
		}
		mine, all := sessions(readToken.Name)
		maxMine, maxAll = max(maxMine, mine), max(maxAll, all)
	}
	took := time.Since(began)
	t.Logf("%d initializes in %s: %d sessions opened, %d refused; at most %v open for the token, %v on the server",
		storm, took.Round(time.Millisecond), accepted.Load(), len(refusals), maxMine, maxAll)
	is.Equal(len(failures), 0)                             // every initialize was answered
	is.True(len(refusals) > 0)                             // the cap refused some
	is.Equal(int(accepted.Load())+len(refusals), storm)    // and opened the others
	is.True(maxMine <= capPerToken && maxAll <= capServer) // the count never passed the bounds
	for _, r := range refusals {
		sessionRefused(t, r, "server.mcp.max_sessions_per_token")
	}
	m := scrapeMetricsAs(t, pr.url, adminToken.Token)
	evicted, _ := m.Value("mcpflow_mcp_sessions_evicted_total")
	mine, _ := m.Value("mcpflow_mcp_sessions", "token", readToken.Name)
	is.Equal(mine, float64(capPerToken))                  // the token holds its bound's worth
	is.Equal(accepted.Load()-int64(evicted), int64(mine)) // every other session it opened was evicted

	// Another token still opens sessions: up to its own bound.
	var ci []string
	for range capPerToken {
		id, r := newSession(t, f, runToken.Token)
		is.Equal(r.status, http.StatusOK)
		ci = append(ci, id)
	}
	sessionRefused(t, func() rpcReply { _, r := newSession(t, f, runToken.Token); return r }(), "server.mcp.max_sessions_per_token")

	// At its bound, a new session takes the place of the token's least
	// recently used one once it has been idle for capIdle: not its
	// oldest, ci[0], which was used since, but ci[1].
	is.Equal(pingSession(t, f, runToken.Token, ci[0]), http.StatusOK)
	poll.For(t, "a new session once one has been idle for 2 s", 10*capIdle, func() bool {
		_, r := newSession(t, f, runToken.Token)
		if r.status != http.StatusOK {
			sessionRefused(t, r, "server.mcp.max_sessions_per_token")
		}
		return r.status == http.StatusOK
	})
	is.Equal(pingSession(t, f, runToken.Token, ci[1]), http.StatusNotFound) // evicted
	is.Equal(pingSession(t, f, runToken.Token, ci[0]), http.StatusOK)       // kept
	is.Equal(pingSession(t, f, runToken.Token, ci[2]), http.StatusOK)

	// At the server's bound, a third token's session takes the place of
	// the least recently used idle one of any token: the first token's.
	for range capServer - 2*capPerToken {
		_, r := newSession(t, f, authorToken.Token)
		is.Equal(r.status, http.StatusOK)
	}
	mine, all := sessions(readToken.Name)
	is.Equal(all, float64(capServer))
	_, r := newSession(t, f, authorToken.Token)
	is.Equal(r.status, http.StatusOK)
	after, allAfter := sessions(readToken.Name)
	is.Equal(allAfter, float64(capServer)) // still the bound
	is.Equal(after, mine-1)                // the first token's oldest made room
}

func TestMCPFaceAStopEndsTheCallsOfTheSessionsItCloses(t *testing.T) {
	t.Parallel() // its own mcpflow: see parallelTests
	is := is.New(t)
	f := startFace(t, faceOptions{})
	// A 2025-era session's call that would run for a minute.
	d := goSDK2025.start(t, f.scenario(callStep(sleepTool, map[string]any{"ms": 60_000})))
	poll.For(t, "the tool call's run is running", settleWait, func() bool {
		runs := f.runs(t)
		return len(runs) == 1 && runs[0].Status == "running"
	})
	// The face's stop closes the session, which go-sdk does only once its
	// calls have returned: it ends them first, and the stop does not wait
	// for the run.
	code, took := f.pr.terminate(t)
	t.Logf("exited %d in %s", code, took.Round(time.Millisecond))
	is.Equal(code, 0)
	is.True(took < shutdownBudget)
	<-d.done // the client saw its server go
}
