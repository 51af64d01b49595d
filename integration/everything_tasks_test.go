package integration

// Upstream MCP tasks (issue 28, item 5) against the real
// @modelcontextprotocol/server-everything behind the real mcpflow
// binary: its simulate-research-query tool requires tasks
// (execution.taskSupport "required"), and runs four stages of a second
// each before its result is ready.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/api/client"
	p "github.com/mcpflow/mcpflow/api/protocol"
	"github.com/mcpflow/mcpflow/fakes/poll"
)

// researchTool is server-everything's task tool.
const researchTool = "simulate-research-query"

// TestServerEverythingTaskToolCompletes calls simulate-research-query
// as a task through a workflow, over stdio and streamable HTTP: the run
// completes with the server's report (not the empty content a
// CreateTaskResult read as a result gave), and its trace names the task.
func TestServerEverythingTaskToolCompletes(t *testing.T) {
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
			conn := "tasks" + tc.name + ".default"
			src := stdioSource(conn, node, script, tc.mode)
			if tc.transport == config.TransportHTTP {
				addr := startEverythingTSServer(t, node, preload, script, tc.mode)
				src = config.Connection{Kind: "mcp", ID: conn, Transport: config.Transport{Kind: tc.transport, URL: "http://" + addr + "/mcp"}}
			}
			pr, c, _ := startTasksMCPFlow(t, src)
			dep := buildToolDeployment(t, c, conn, researchTool, "research_"+tc.name)
			run := researchRun(t, c, pr, dep, "tide pools "+tc.name)
			is.True(run.TaskID != "") // the step's trace entry names its task
		})
	}
}

// TestServerEverythingTaskSurvivesARestart stops mcpflow while a run
// waits on simulate-research-query's task over streamable HTTP, with
// server-everything left running, and starts it again on the same
// store: the recovered run polls the same task (its id in the trace is
// the one the first process logged) and completes with the server's
// report. Stopped by SIGKILL, and by SIGTERM (a graceful stop, which
// must neither cancel the task nor end the upstream session it lives
// in).
func TestServerEverythingTaskSurvivesARestart(t *testing.T) {
	t.Parallel() // its own mcpflow and upstream: see parallelTests
	node, script := everythingTS(t)
	preload, err := filepath.Abs(filepath.Join("testdata", "loopback-only.cjs"))
	is.New(t).NoErr(err)
	addr := startEverythingTSServer(t, node, preload, script, "streamableHttp")
	for _, stop := range []struct {
		name   string
		signal syscall.Signal
	}{{"kill", syscall.SIGKILL}, {"term", syscall.SIGTERM}} {
		t.Run(stop.name, func(t *testing.T) {
			is := is.New(t)
			conn := "tasks" + stop.name + ".default"
			src := config.Connection{Kind: "mcp", ID: conn, Transport: config.Transport{Kind: config.TransportHTTP, URL: "http://" + addr + "/mcp"}}
			pr, c, cfgPath := startTasksMCPFlow(t, src)
			dep := buildToolDeployment(t, c, conn, researchTool, "research_"+stop.name)
			ctx := testContext(t)
			topic := "restart " + stop.name
			started, err := c.RunDeployment(ctx, p.StartRunParams{DeploymentID: dep, WorkflowInput: p.Object{"topic": topic}})
			is.NoErr(err)
			runID := *started.RunID

			// The task is in the run's checkpoint once the log says so.
			var taskID string
			created := regexp.MustCompile(`step runs as an upstream task, recorded in the run.s checkpoint.*run=` + regexp.QuoteMeta(runID) + `.* task=(\S+)`)
			poll.For(t, "the run's task to be created", 20*time.Second, func() bool {
				data, _ := os.ReadFile(pr.logs)
				if m := created.FindSubmatch(data); m != nil {
					taskID = string(m[1])
				}
				return taskID != ""
			})
			is.NoErr(pr.cmd.Process.Signal(stop.signal)) // stop mcpflow while the task runs
			select {
			case <-pr.exited:
			case <-time.After(20 * time.Second):
				t.Fatal("mcpflow did not stop within 20s")
			}
			first, _ := os.ReadFile(pr.logs)

			again := startProcess(t, cfgPath, "mcpflow-again.log")
			c2 := dialURL(t, again.url)
			run := settled(t, c2, runID)
			if run.Status != "completed" {
				second, _ := os.ReadFile(again.logs)
				t.Logf("run %s: %s, error %v\nfirst log:\n%s\nsecond log:\n%s", runID, run.Status, deref(run.Error), first, second)
			}
			is.Equal(run.Status, "completed") // the recovered run completes
			entry := researchEntry(t, c2, runID)
			is.Equal(entry.TaskID, taskID)                                                 // on the same task
			is.True(strings.Contains(reportText(run.Output), "# Research Report: "+topic)) // with the server's report
		})
	}
}

// startTasksMCPFlow runs mcpflow with srcs as its sources.
func startTasksMCPFlow(t *testing.T, srcs ...config.Connection) (*process, *client.Client, string) {
	t.Helper()
	is := is.New(t)
	dir := t.TempDir()
	cfg := config.File{Version: 1, Server: config.Server{Store: config.Store{Root: filepath.Join(dir, "store")}, Sources: srcs}}
	data, err := json.Marshal(cfg)
	is.NoErr(err)
	cfgPath := filepath.Join(dir, "mcpflow.json")
	is.NoErr(os.WriteFile(cfgPath, data, 0o600))
	pr := startProcess(t, cfgPath, "mcpflow.log")
	return pr, dialURL(t, pr.url), cfgPath
}

// researchRun runs the research deployment on topic and checks it
// completed with the server's report; it returns the step's trace entry.
func researchRun(t *testing.T, c *client.Client, pr *process, dep, topic string) p.TraceEntry {
	t.Helper()
	is := is.New(t)
	started, err := c.RunDeployment(testContext(t), p.StartRunParams{DeploymentID: dep, WorkflowInput: p.Object{"topic": topic}})
	is.NoErr(err)
	run := settled(t, c, *started.RunID)
	if run.Status != "completed" {
		logs, _ := os.ReadFile(pr.logs)
		t.Logf("run: %s, error %v\nmcpflow log:\n%s", run.Status, deref(run.Error), logs)
	}
	is.Equal(run.Status, "completed") // the task's run completes
	is.Equal(*run.Outcome, "ok")
	text := reportText(run.Output)
	is.True(strings.Contains(text, "# Research Report: "+topic)) // the server's report, not an empty result
	is.True(strings.Contains(text, "Stage 4: Generating report"))
	return researchEntry(t, c, *started.RunID)
}

// researchEntry is the trace entry of the run's one tool step.
func researchEntry(t *testing.T, c *client.Client, runID string) p.TraceEntry {
	t.Helper()
	is := is.New(t)
	var traced p.RunResult
	is.NoErr(c.Call(testContext(t), p.MethodRunsTrace, p.TraceParams{RunID: runID, TraceRange: p.TraceRange{}}, &traced))
	for _, e := range traced.Trace {
		if e.TaskID != "" {
			return e
		}
	}
	t.Fatalf("no trace entry of run %s names a task: %+v", runID, traced.Trace)
	return p.TraceEntry{}
}

// reportText is the text of the first content block of a tool's output.
func reportText(out p.Object) string {
	content, _ := out["content"].([]any)
	if len(content) == 0 {
		return ""
	}
	block, _ := content[0].(map[string]any)
	text, _ := block["text"].(string)
	return text
}
