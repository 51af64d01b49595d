package integration

// What npm @modelcontextprotocol/server-everything reports during a call,
// through the real mcpflow binary, over stdio and streamable HTTP:
// trigger-long-running-operation's progress as step_progress run events,
// live, while the run runs; toggle-simulated-logging's log messages as
// step_log events of the call in flight, filtered by the source's
// client.log_level (issue 28, item 4).

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/matryer/is"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/api/client"
	p "github.com/mcpflow/mcpflow/api/protocol"
	"github.com/mcpflow/mcpflow/fakes/poll"
)

// reportsDraft turns conn's simulated logging on, runs a 6 s operation of
// 3 steps (a progress every 2 s), and turns the logging off.
// server-everything logs once when the logging is turned on, then every
// 5 s at a random level: the operation starts well within 5 s of the
// turn-on, so one periodic log message comes while it is the only call in
// flight on its session, and is the long step's.
func reportsDraft(name, conn string) string {
	return fmt.Sprintf(`{"name":%[1]q,"start":"on","outcomes":["ok"],
	"input_schema":{"type":"object"},"state_schema":{"type":"object"},"output_schema":{"type":"object"},"output":[],
	"steps":{
		"on":{"use":"%[2]s.toggle-simulated-logging"},
		"long":{"use":"%[2]s.trigger-long-running-operation","input":[{"target":"duration","value":6},{"target":"steps","value":3}]},
		"off":{"use":"%[2]s.toggle-simulated-logging"}},
	"routes":{"on":{"ok":"long","error":"__end__"},"long":{"ok":"off","error":"__end__"},"off":{"ok":"__end__","error":"__end__"}}}`, name, conn)
}

// logLevels are MCP's log levels, least severe first.
var logLevels = []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

func TestServerEverythingReportsProgressAndLogsLive(t *testing.T) {
	t.Parallel() // its own mcpflow and upstream: see parallelTests
	node, script := everythingTS(t)
	preload, err := filepath.Abs(filepath.Join("testdata", "loopback-only.cjs"))
	is.New(t).NoErr(err)
	for _, tc := range []struct{ name, mode, transport string }{
		{name: "stdio", mode: "stdio", transport: config.TransportStdio},
		{name: "http", mode: "streamableHttp", transport: config.TransportHTTP},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			// Two sources, each a session of its own: one lets every log
			// message through, one only error and above. Over HTTP both
			// are sessions of one server.
			addr := ""
			source := func(level string) config.Connection {
				id := "reports" + level + tc.name + ".default"
				src := stdioSource(id, node, script, tc.mode)
				if tc.transport == config.TransportHTTP {
					if addr == "" {
						addr = startEverythingTSServer(t, node, preload, script, tc.mode)
					}
					src = config.Connection{Kind: "mcp", ID: id, Transport: config.Transport{Kind: tc.transport, URL: "http://" + addr + "/mcp"}}
				}
				src.Client = &config.Client{LogLevel: level}
				return src
			}
			chatty, terse := source("debug"), source("error")
			pr, c, _ := startTasksMCPFlow(t, chatty, terse)
			t.Cleanup(func() { stopEverythingMCPFlow(t, pr, nil) })

			for _, src := range []config.Connection{chatty, terse} {
				_, err := c.RefreshConnectionCatalog(testContext(t), src.ID)
				is.NoErr(err)
				level := src.Client.LogLevel
				dep := deployDraft(t, c, "reports_"+level+"_"+tc.name, reportsDraft("reports_"+level+"_"+tc.name, src.ID), src.ID)
				events := followReports(t, dialURL(t, pr.url), dep)

				var progress []p.RunEventProgress
				var seen []string // each progress, as progress/total
				var logs []string
				longFinished := -1
				for i, e := range events {
					switch {
					case e.Kind == "step_progress":
						is.Equal(e.Step.NodeID, "long")  // the long operation's progress
						is.True(longFinished < 0)        // all of it before its step_finished
						is.True(e.Progress.Total != nil) // with its total
						progress = append(progress, *e.Progress)
						seen = append(seen, fmt.Sprintf("%g/%g", e.Progress.Progress, *e.Progress.Total))
					case e.Kind == "step_log":
						is.True(slices.Contains(logLevels, e.Log.Level))
						if e.Step.NodeID == "long" {
							logs = append(logs, e.Log.Level)
						}
						is.True(slices.Index(logLevels, e.Log.Level) >= slices.Index(logLevels, level)) // none below the source's log_level
					case e.Kind == "step_finished" && e.Step.NodeID == "long":
						longFinished = i
					}
				}
				t.Logf("%s, log_level %s: progress %v, the long step's logs %v", tc.name, level, seen, logs)
				is.True(longFinished > 0)
				is.True(len(progress) >= 1)
				last := progress[len(progress)-1]
				is.Equal(last.Progress, 3.0) // the last progress, sent right before the answer, is the call's
				is.True(last.Total != nil && *last.Total == 3)
				if level == "debug" {
					is.True(len(logs) >= 1) // the periodic log message during the long call is its step's
				}
			}
			if tc.transport == config.TransportHTTP { // the face is the same whatever the upstream's transport
				faceEndpoint := strings.Replace(strings.Replace(pr.url, "ws://", "http://", 1), "/ws", "/mcp", 1)
				for _, version := range []string{"2025-11-25", ""} { // both eras ("": go-sdk's latest, 2026-07-28)
					said := progressOverTheFace(t, faceEndpoint, version, "reports_error_"+tc.name, "long: "+terse.ID+".trigger-long-running-operation → 3/3")
					t.Logf("over the MCP face (protocol %q): %q", version, said)
				}
			}
		})
	}
}

// progressOverTheFace calls tool through the MCP face at endpoint with a
// progressToken, speaking protocol version, and returns the messages of
// the progress notifications it got, once one of them is want (go-sdk
// hands them to their handler on a goroutine of its own: the last may be
// handled after the result).
func progressOverTheFace(t *testing.T, endpoint, version, tool, want string) []string {
	t.Helper()
	is := is.New(t)
	is.Helper()
	var mu sync.Mutex
	var said []string
	opts := &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
		mu.Lock()
		said = append(said, r.Params.Message)
		mu.Unlock()
	}}
	session := connectFaceAs(t, endpoint, opts, version)
	params := &mcp.CallToolParams{Name: tool, Arguments: map[string]any{}}
	params.SetProgressToken("face-" + version)
	res, err := session.CallTool(testContext(t), params)
	is.NoErr(err)
	is.True(!res.IsError)
	return poll.Value(t, "the upstream's progress over the face: "+want, liveWait, func() ([]string, bool) {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(said), slices.Contains(said, want)
	})
}

// followReports starts deployment without waiting, follows its run's
// events through c as they come, and returns them up to the run's end. It
// checks that a step_progress arrived while the run was still running.
func followReports(t *testing.T, c *client.Client, deployment string) []p.RunEvent {
	t.Helper()
	is := is.New(t)
	is.Helper()
	ctx := testContext(t)
	notes := notifications(c)
	started, err := c.RunDeployment(ctx, p.StartRunParams{DeploymentID: deployment, WorkflowInput: p.Object{}, Wait: ptr(false)})
	is.NoErr(err)
	id := *started.RunID
	sub, err := c.SubscribeRun(ctx, p.SubscribeRunParams{RunID: id})
	is.NoErr(err)
	live := false
	notified := runEventsUntil(t, notes, sub.SubscriptionID, func(events []p.RunEventNotification) bool {
		last := events[len(events)-1]
		if last.Kind == "step_progress" && !live {
			r, err := c.InspectRun(ctx, id)
			is.NoErr(err)
			live = r.Status == "running"
		}
		return last.Status != nil && last.Status.Terminal
	})
	is.True(live) // a step_progress came while the run ran
	events := make([]p.RunEvent, len(notified))
	for i, n := range notified {
		events[i] = n.RunEvent
	}
	is.Equal(events[len(events)-1].Status.Status, "completed")
	return events
}
