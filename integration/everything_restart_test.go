package integration

// A run interrupted by server-everything's elicitation when mcpflow's
// process dies: over stdio (a 2025-era session), the request dies with the
// session, and the restarted mcpflow ends the step with elicitation_lost,
// or takes the workflow's route for it.

import (
	"encoding/json"
	"fmt"
	"os"
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

// lostRoutedDraft calls conn's trigger-elicitation-request (not safe to
// repeat) and routes elicitation_lost to an end of its own.
func lostRoutedDraft(conn string) string {
	return fmt.Sprintf(`{"name":"lost_routed","start":"call","outcomes":["ok","lost"],
	"steps":{"call":{"use":%q},"gone":{"end":{"outcome":"lost"}}},
	"routes":{"call":{"ok":"__end__","error":"gone","elicitation_lost":"gone"}}}`, conn+".trigger-elicitation-request")
}

func TestAnElicitationCutOffByARestartEndsAsElicitationLost(t *testing.T) {
	t.Parallel() // its own mcpflow and upstream: see parallelTests
	if testing.Short() {
		t.Skip("kills and restarts the real binary")
	}
	is := is.New(t)
	node, script := everythingTS(t)
	// A source each, so that each run's call is the only one in flight on
	// its session (an elicitation during two calls is refused).
	plainConn, routedConn := "lostplain.default", "lostrouted.default"
	dir := t.TempDir()
	cfg := config.File{Version: 1, Server: config.Server{Store: config.Store{Root: filepath.Join(dir, "store")},
		Sources: []config.Connection{stdioSource(plainConn, node, script, "stdio"), stdioSource(routedConn, node, script, "stdio")}}}
	data, err := json.Marshal(cfg)
	is.NoErr(err)
	cfgPath := filepath.Join(dir, "mcpflow.json")
	is.NoErr(os.WriteFile(cfgPath, data, 0o600))

	first := startProcess(t, cfgPath, "first.log")
	c := dialURL(t, first.url)
	ctx := testContext(t)
	plain := buildToolDeployment(t, c, plainConn, "trigger-elicitation-request", "lost_plain")
	_, err = c.RefreshConnectionCatalog(ctx, routedConn)
	is.NoErr(err)
	saveArtifact(t, c, "lost_routed", lostRoutedDraft(routedConn), []string{"ok", "lost"})
	dep, err := c.SaveDeployment(ctx, p.Object{"id": "lost_routed.default", "artifact_id": "lost_routed", "artifact_version": 1,
		"bindings": []any{p.Object{"logical_source": routedConn, "concrete_source": routedConn}}})
	is.NoErr(err)
	plainRun, routedRun := startInterrupted(t, c, plain), startInterrupted(t, c, dep.DeploymentID)
	first.kill(t) // SIGKILL: the waiting calls die with their sessions

	second := startProcess(t, cfgPath, "second.log")
	c = dialURL(t, second.url)
	failed := ended(t, c, plainRun)
	is.Equal(failed.Status, "failed")
	is.True(strings.HasPrefix(*failed.Error, `step "call": elicitation_lost: mcpflow stopped while step "call" waited on an upstream elicitation request`)) // the typed outcome, and why
	is.Equal(len(failed.Interrupt), 0)                                                                                                                      // it waits on nothing any more

	routed := ended(t, c, routedRun)
	is.Equal(routed.Status, "completed")
	is.Equal(*routed.Outcome, "lost") // the workflow's route for it
	var traced p.RunResult
	is.NoErr(c.Call(ctx, p.MethodRunsTrace, p.TraceParams{RunID: routedRun}, &traced))
	is.Equal(traced.Trace[0].Outcome, "elicitation_lost") // the step's outcome
}

// ended waits until run id has ended: neither running nor interrupted (a
// recovered run is stored interrupted until its first commit).
func ended(t *testing.T, c *client.Client, id string) p.RunResult {
	t.Helper()
	ctx := testContext(t)
	return poll.Value(t, "run "+id+" ended", 60*time.Second, func() (p.RunResult, bool) {
		r, err := c.InspectRun(ctx, id)
		return r, err == nil && r.Status != "running" && r.Status != "interrupted"
	})
}
