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
// description); two pass-through calls count thoughts 1 then 2, a
// workflow run on the same connection then counts 3, one upstream session
// served them all (sessions_opened 1), and runs.list has each call, as a
// passthrough run started by the caller.
func TestMCPGatewayPassesCallsThroughTheWorkflowsSession(t *testing.T) {
	t.Parallel()
	node, script := sequentialThinking(t)
	tsV1.require(t)
	is := is.New(t)
	const conn = "seqthink.default"
	const exposed = "think_sequentialthinking"
	src := stdioSource(conn, node, script)
	src.Transport.Env = map[string]string{"DISABLE_THOUGHT_LOGGING": "true"}
	cfg := writeServerConfig(t, t.TempDir(), config.Server{Sources: []config.Connection{src}, MCP: &config.MCP{
		Expose: []config.MCPExpose{{Connection: conn, Prefix: "think", Tools: &config.MCPToolFilter{Allow: []string{"sequential*"}}}},
	}})
	pr := startProcess(t, cfg, "mcpflow.log", "--run-wait", "2m")
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("mcpflow's log: %s", pr.logs)
		}
	})
	ws, err := client.DialToken(testContext(t), pr.url, "")
	is.NoErr(err) // dial /ws
	t.Cleanup(func() { _ = ws.Close() })
	_, err = ws.RefreshConnectionCatalog(testContext(t), conn)
	is.NoErr(err) // the catalog the face lists the tool from
	face := scenario{URL: "http://" + strings.TrimSuffix(strings.TrimPrefix(pr.url, "ws://"), "/ws") + "/mcp"}

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
	face.Steps = []step{listStep(), callStep(exposed, thought(1)), callStep(exposed, thought(2))}
	got := tsV1.run(t, face)
	is.True(slices.ContainsFunc(got.Steps[0].Tools, func(tool toolInfo) bool { return tool.Name == exposed })) // the TS SDK lists it
	for n, s := range got.Steps[1:] {
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
			is.Equal(r.StartedBy, "local") // the caller, as runs.start records it
			is.Equal(r.ArtifactID, "passthrough:"+conn+".sequentialthinking")
		case "":
			workflows++
		}
	}
	is.Equal(passthrough, 2) // each pass-through call is a run
	is.Equal(workflows, 1)
}
