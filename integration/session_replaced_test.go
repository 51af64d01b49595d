package integration

// A replaced upstream session is visible (issue 28, item 8): the real
// binary over server-everything on stdio, whose process is killed between
// two calls of the same runs.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/api/client"
	p "github.com/mcpflow/mcpflow/api/protocol"
	"github.com/mcpflow/mcpflow/fakes/poll"
)

// sumTwice sums on conn, waits in an interrupt, then sums again: a run cut
// in two, whose second call can land on another session than its first.
func sumTwice(name, conn string) string {
	return fmt.Sprintf(`{"name":%q,"start":"first","outcomes":["ok"],
	"input_schema":{"type":"object","properties":{}},
	"state_schema":{"type":"object","properties":{}},
	"output_schema":{"type":"object","properties":{}},
	"steps":{
		"first":{"use":"%[2]s.get-sum","input":[{"target":"a","value":1},{"target":"b","value":2}]},
		"ask":{"interrupt":{"kind":"input"}},
		"second":{"use":"%[2]s.get-sum","input":[{"target":"a","value":3},{"target":"b","value":4}]}},
	"routes":{"first":{"ok":"ask","error":"ask"},"ask":{"submitted":"second"},"second":{"ok":"__end__","error":"__end__"}}}`, name, conn)
}

// interruptedRun starts deployment and returns its run, interrupted
// after its first call.
func interruptedRun(t *testing.T, c *client.Client, deployment string) string {
	t.Helper()
	is := is.New(t)
	is.Helper()
	started, err := c.RunDeployment(testContext(t), p.StartRunParams{DeploymentID: deployment, WorkflowInput: p.Object{}})
	is.NoErr(err)
	run := settled(t, c, *started.RunID)
	if run.Status != "interrupted" {
		t.Logf("run of %s: status %q, error %v", deployment, run.Status, deref(run.Error))
	}
	is.Equal(run.Status, "interrupted") // the first call done, waiting
	return *run.RunID
}

// adminEventsOf lists the admin events of kind.
func adminEventsOf(t *testing.T, c *client.Client, kind string) []p.AdminEvent {
	t.Helper()
	var res p.ListAdminEventsResult
	is.New(t).NoErr(c.Call(testContext(t), p.MethodAdminEventsList, p.Empty{}, &res))
	var out []p.AdminEvent
	for _, e := range res.Events {
		if e.Kind == kind {
			out = append(out, e)
		}
	}
	return out
}

// runEventsOf replays the events of run, which has ended.
func runEventsOf(t *testing.T, c *client.Client, notes <-chan client.Notification, run string) []p.RunEventNotification {
	t.Helper()
	sub, err := c.SubscribeRun(testContext(t), p.SubscribeRunParams{RunID: run})
	is.New(t).NoErr(err)
	return runEventsUntilEnd(t, notes, sub.SubscriptionID)
}

func TestAKilledStatefulUpstreamIsAReplacedSessionEverywhere(t *testing.T) {
	t.Parallel() // its own mcpflow and upstream: see parallelTests
	if testing.Short() {
		t.Skip("starts the real binary and server-everything")
	}
	is := is.New(t)
	node, script := everythingTS(t)
	const conn = "everything.default"
	dir := t.TempDir()
	cfg := config.File{Version: 1, Server: config.Server{Store: config.Store{Root: filepath.Join(dir, "store")},
		Sources: []config.Connection{stdioSource(conn, node, script, "stdio")}}}
	data, err := json.Marshal(cfg)
	is.NoErr(err)
	cfgPath := filepath.Join(dir, "mcpflow.json")
	is.NoErr(os.WriteFile(cfgPath, data, 0o600))
	pr := startProcess(t, cfgPath, "mcpflow.log")
	var children []int
	t.Cleanup(func() { stopEverythingMCPFlow(t, pr, children) })
	c := dialURL(t, pr.url)
	notes := notifications(c)
	ctx := testContext(t)
	_, err = c.RefreshConnectionCatalog(ctx, conn)
	is.NoErr(err)

	// Two deployments of the same workflow: one goes on after a
	// replacement (the default), one is bound to fail.
	for _, name := range []string{"lenient", "strict"} {
		saveDraft(t, c, name, sumTwice(name, conn))
		binding := p.Object{"logical_source": conn, "concrete_source": conn}
		if name == "strict" {
			binding["on_session_replaced"] = "fail"
		}
		dep, err := c.SaveDeployment(ctx, p.Object{"id": name + ".default", "artifact_id": name, "artifact_version": 1, "bindings": []any{binding}})
		is.NoErr(err)
		is.True(dep.Saved)
	}
	lenient := interruptedRun(t, c, "lenient.default")
	strict := interruptedRun(t, c, "strict.default")
	is.Equal(len(adminEventsOf(t, c, "session_replaced")), 0) // one session so far

	// The upstream dies between the runs' two calls.
	killed := everythingChildPIDs(t, pr.cmd.Process.Pid)
	is.Equal(len(killed), 1) // mcpflow runs one server process
	is.NoErr(syscall.Kill(killed[0], syscall.SIGKILL))
	events := poll.Value(t, "a session_replaced admin event", 30*time.Second, func() ([]p.AdminEvent, bool) {
		events := adminEventsOf(t, c, "session_replaced")
		return events, len(events) > 0
	})
	e := events[0]
	t.Logf("admin event: %+v", e.Payload)
	is.Equal(*e.ConnectionID, conn)
	is.Equal(e.Payload["old_generation"], 1.0)
	is.Equal(e.Payload["new_generation"], 2.0)
	is.Equal(e.Payload["cause"], "exited")               // the process exited
	is.Equal(e.Payload["exit_status"], "signal: killed") // and how

	// The strict run fails at its next call, which never reaches the new
	// session; the lenient one goes on, and says its session changed.
	resumed, err := c.ResumeRun(ctx, p.ResumeRunParams{RunID: strict, ResumeOutcome: ptr("submitted"), ResumePayload: p.Object{}})
	is.NoErr(err)
	final := settled(t, c, *resumed.RunID)
	is.Equal(final.Status, "failed")
	is.Equal(deref(final.Error), `step "second": session_replaced: session of connection "everything.default" was replaced (generation 1 → 2): its state is gone`)
	strictEvents := runEventsOf(t, c, notes, strict)
	is.True(hasReplaced(strictEvents, conn, 1, 2)) // what the strict run saw

	resumed, err = c.ResumeRun(ctx, p.ResumeRunParams{RunID: lenient, ResumeOutcome: ptr("submitted"), ResumePayload: p.Object{}})
	is.NoErr(err)
	final = settled(t, c, *resumed.RunID)
	is.Equal(final.Status, "completed")
	var traced p.RunResult
	is.NoErr(c.Call(ctx, p.MethodRunsTrace, p.TraceParams{RunID: lenient, TraceRange: p.TraceRange{}}, &traced))
	var generations []int64
	for _, entry := range traced.Trace {
		if entry.Generation != 0 {
			generations = append(generations, entry.Generation)
		}
	}
	is.Equal(generations, []int64{1, 2}) // each call's entry names its session
	is.True(hasReplaced(runEventsOf(t, c, notes, lenient), conn, 1, 2))
	children = everythingChildPIDs(t, pr.cmd.Process.Pid)
}

// hasReplaced reports whether events hold a session_replaced event of
// conn from generation old to generation new.
func hasReplaced(events []p.RunEventNotification, conn string, old, new int64) bool {
	for _, e := range events {
		if e.Kind == "session_replaced" && e.Session != nil && e.Session.Connection == conn &&
			e.Session.OldGeneration == old && e.Session.NewGeneration == new {
			return true
		}
	}
	return false
}
