package integration

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/matryer/is"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/store"
	p "github.com/mcpflow/mcpflow/api/protocol"
	"github.com/mcpflow/mcpflow/fakes/poll"
)

// TestMCPGatewayPerClientGivesEachClientSessionItsOwnUpstreamSession:
// with npm server-sequential-thinking exposed per_client, two sessions
// of the TypeScript SDK each count their thoughts from 1 on an upstream
// session of their own (a server process each), apart from the shared
// one the workflows use, which counts its own from 1 too. When the first
// client ends its session (DELETE), its upstream server process ends;
// the other client's stays.
func TestMCPGatewayPerClientGivesEachClientSessionItsOwnUpstreamSession(t *testing.T) {
	t.Parallel()
	tsV1.require(t)
	is := is.New(t)
	const exposed = "think_sequentialthinking"
	pr, ws, server := seqthinkGateway(t, config.MCPExpose{Connection: seqthinkConn, Prefix: "think", Scope: config.ExposePerClient})
	servers := func() int { return processesRunning(pr, server[0], server[1]) }
	is.Equal(servers(), 1)

	face := scenario{URL: "http://" + strings.TrimSuffix(strings.TrimPrefix(pr.url, "ws://"), "/ws") + "/mcp", Token: runToken.Token}
	poll.For(t, "/mcp lists "+exposed, settleWait, func() bool {
		face.Steps = []step{listStep()}
		return slices.ContainsFunc(goSDK.run(t, face).Steps[0].Tools, func(tool toolInfo) bool { return tool.Name == exposed })
	})
	thought := func(n int) map[string]any {
		return map[string]any{"thought": fmt.Sprintf("thought %d", n), "nextThoughtNeeded": true, "thoughtNumber": n, "totalThoughts": 3}
	}
	face.Steps = []step{callStep(exposed, thought(1)), callStep(exposed, thought(2)), {Op: "end_session"}}
	first := tsV1.run(t, face)
	face.Steps = []step{callStep(exposed, thought(1))}
	second := tsV1.run(t, face)
	is.Equal(historyLength(t, first.Steps[0]), 1)
	is.Equal(historyLength(t, first.Steps[1]), 2)  // the first session's own upstream session remembers its calls
	is.Equal(historyLength(t, second.Steps[0]), 1) // the second's starts afresh
	is.True(first.Steps[2].Ended)

	// The first session ended: its upstream server goes; the shared one
	// and the second session's stay.
	poll.For(t, "the ended session's upstream server exits", settleWait, func() bool { return servers() == 2 })

	deployment := buildToolDeployment(t, ws, seqthinkConn, "sequentialthinking", "think_on")
	run := runCompleted(t, ws, deployment, p.Object{"thought": "a workflow's thought", "nextThoughtNeeded": false, "thoughtNumber": 1, "totalThoughts": 1})
	is.Equal(run.Output["thoughtHistoryLength"], float64(1)) // the shared session saw none of the clients' thoughts

	runs, err := ws.ListRuns(testContext(t), p.ListRunsParams{})
	is.NoErr(err)
	passthrough := 0
	for _, r := range runs.Runs {
		if r.Kind == p.RunKindPassthrough {
			passthrough++
		}
	}
	is.Equal(passthrough, 3) // each call is recorded, whichever session served it
}

// historyLength is sequential-thinking's count of the thoughts its
// session has seen, from a pass-through call's structured result.
func historyLength(t *testing.T, s stepResult) int {
	t.Helper()
	is := is.New(t)
	is.Helper()
	if s.Error != nil {
		t.Logf("call: %+v", *s.Error)
	}
	is.True(s.Error == nil && s.Result != nil && !s.Result.IsError)
	var out struct {
		ThoughtHistoryLength int `json:"thoughtHistoryLength"`
	}
	is.NoErr(json.Unmarshal(s.Result.StructuredContent, &out))
	return out.ThoughtHistoryLength
}

// processesRunning counts pr's descendants that run program (not the
// reapers that wait on them) with script in their command line (any,
// for ""): the stdio servers of one source.
func processesRunning(pr *process, program, script string) int {
	exe, err := filepath.EvalSymlinks(program)
	if err != nil {
		return -1
	}
	n := 0
	for _, pid := range descendantsOf(pr.cmd.Process.Pid) {
		proc := "/proc/" + strconv.Itoa(pid)
		running, _ := os.Readlink(proc + "/exe")
		cmdline, err := os.ReadFile(proc + "/cmdline")
		if err == nil && running == exe && strings.Contains(string(cmdline), script) {
			n++
		}
	}
	return n
}

// TestMCPGatewayRecordFalseLeavesNoHistory: with record false, a
// pass-through call answers as any other, but appends nothing to the
// admin event log (no run_started, no run_completed), while a workflow
// run on the same connection does; its run is kept only for its caller
// to read (the store's test TransientRuns prunes it after the grace).
func TestMCPGatewayRecordFalseLeavesNoHistory(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	record := false
	pr, ws, _ := seqthinkGateway(t, config.MCPExpose{Connection: seqthinkConn, Prefix: "think", Record: &record})
	face := scenario{URL: "http://" + strings.TrimSuffix(strings.TrimPrefix(pr.url, "ws://"), "/ws") + "/mcp", Token: runToken.Token}
	const exposed = "think_sequentialthinking"
	poll.For(t, "/mcp lists "+exposed, settleWait, func() bool {
		face.Steps = []step{listStep()}
		return slices.ContainsFunc(goSDK.run(t, face).Steps[0].Tools, func(tool toolInfo) bool { return tool.Name == exposed })
	})
	face.Steps = []step{callStep(exposed, map[string]any{"thought": "unrecorded", "nextThoughtNeeded": false, "thoughtNumber": 1, "totalThoughts": 1})}
	is.Equal(historyLength(t, goSDK.run(t, face).Steps[0]), 1) // the call answers

	deployment := buildToolDeployment(t, ws, seqthinkConn, "sequentialthinking", "think_on")
	run := runCompleted(t, ws, deployment, p.Object{"thought": "recorded", "nextThoughtNeeded": false, "thoughtNumber": 2, "totalThoughts": 2})
	is.Equal(run.Output["thoughtHistoryLength"], float64(2)) // the same shared session

	started := map[string]int{} // run-started events by artifact
	notes := notifications(ws)
	from := int64(0)
	sub, err := ws.SubscribeAdminEvents(testContext(t), p.SubscribeAdminEventsParams{AfterSequence: &from})
	is.NoErr(err)
	seq := int64(0)
	takeAdminEvents(t, notes, liveWait, "the admin event log replayed", func() bool { return seq >= sub.LastSequence }, func(e p.AdminEventNotification) {
		seq = e.Sequence
		if e.Kind == store.EventRunStarted {
			artifact, _ := e.Payload["artifact_id"].(string)
			started[artifact]++
		}
	})
	is.Equal(started, map[string]int{run.ArtifactID: 1}) // the workflow's run only
}

// TestMCPStdioPerClientGivesEachProcessItsOwnUpstreamSession: over
// `mcpflow mcp` (stdio, whose session has no id), each process is one
// client: two of them each count from 1 on a connection exposed
// per_client, and when the first one's host closes it, its upstream
// server process exits while the other's stays.
func TestMCPStdioPerClientGivesEachProcessItsOwnUpstreamSession(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	pr, _, server := seqthinkGateway(t, config.MCPExpose{Connection: seqthinkConn, Prefix: "think", Scope: config.ExposePerClient})
	servers := func() int { return processesRunning(pr, server[0], server[1]) }
	is.Equal(servers(), 1) // the shared session's
	ctx := testContext(t)
	think := func(st *stdioServer, n int) int {
		var res *mcp.CallToolResult
		poll.For(t, "mcpflow mcp offers think_sequentialthinking", settleWait, func() bool {
			var err error
			res, err = st.session.CallTool(ctx, &mcp.CallToolParams{Name: "think_sequentialthinking",
				Arguments: map[string]any{"thought": fmt.Sprintf("thought %d", n), "nextThoughtNeeded": true, "thoughtNumber": n, "totalThoughts": 3}})
			return err == nil
		})
		is.True(!res.IsError)
		var out struct {
			ThoughtHistoryLength int `json:"thoughtHistoryLength"`
		}
		raw, err := json.Marshal(res.StructuredContent)
		is.NoErr(err)
		is.NoErr(json.Unmarshal(raw, &out))
		return out.ThoughtHistoryLength
	}
	first := startStdio(t, pr.url, nil, "MCPFLOW_TOKEN="+runToken.Token)
	second := startStdio(t, pr.url, nil, "MCPFLOW_TOKEN="+runToken.Token)
	is.Equal(think(first, 1), 1)
	is.Equal(think(first, 2), 2)  // the first process's own upstream session
	is.Equal(think(second, 1), 1) // the second's, afresh
	is.Equal(servers(), 3)
	is.NoErr(first.close())
	poll.For(t, "the closed process's upstream server exits", settleWait, func() bool { return servers() == 2 })
}
