package integration

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
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

// TestRegistrySourceGoesLiveSurvivesARestartAndIsRemoved adds a real stdio
// MCP server (fakemcp) through the source registry of the real binary,
// applies, and runs a workflow on it; restarts the binary on the same
// store and runs it again; then removes the source, applies, and sees its
// upstream process gone.
func TestRegistrySourceGoesLiveSurvivesARestartAndIsRemoved(t *testing.T) {
	t.Parallel() // its own mcpflow: see parallelTests
	if testing.Short() {
		t.Skip("starts and restarts the real binary")
	}
	is := is.New(t)
	dir := t.TempDir()
	cfg := config.File{Version: 1, Server: config.Server{Store: config.Store{Root: filepath.Join(dir, "store")}}}
	data, err := json.Marshal(cfg)
	is.NoErr(err)
	cfgPath := filepath.Join(dir, "mcpflow.json")
	is.NoErr(os.WriteFile(cfgPath, data, 0o600))

	first := startProcess(t, cfgPath, "first.log")
	c := dialURL(t, first.url)
	ctx := testContext(t)
	var added p.RegistryEntryMutationResult
	is.NoErr(c.Call(ctx, p.MethodRegistryAdd, p.AddRegistryEntryParams{Entry: p.Object{
		"id": "reg.fake", "transport": p.Object{"kind": "stdio", "command": fakeMCP},
	}}, &added))
	is.Equal(added.Entry.ID, "reg.fake")
	_, err = c.RefreshConnectionCatalog(ctx, "reg.fake")
	is.True(err != nil) // desired, not live, until applied

	applied := apply(t, c)
	is.Equal(applied.Registered, []string{"reg.fake"})
	is.Equal(applied.ConnectionCount, 1)
	deployment := buildCounterDeployment(t, c, "reg.fake")
	is.Equal(runCounter(t, c, deployment), p.Object{"count": float64(1)})
	is.True(len(upstreams(t, first.cmd.Process.Pid)) == 1) // one fakemcp, started by mcpflow

	// Restart on the same store: the registry source is still there.
	first.stop(t)
	second := startProcess(t, cfgPath, "second.log")
	c = dialURL(t, second.url)
	var list p.ListRegistryEntriesResult
	is.NoErr(c.Call(ctx, p.MethodRegistryList, p.ListRegistryParams{}, &list))
	is.Equal(list.Total, 1)
	is.Equal(list.Entries[0].ID, "reg.fake")
	conns, err := c.ListConnections(ctx)
	is.NoErr(err)
	is.Equal(len(conns.Connections), 1)
	is.Equal(conns.Connections[0].ID, "reg.fake") // live without an apply
	is.Equal(runCounter(t, c, deployment), p.Object{"count": float64(1)})
	pids := upstreams(t, second.cmd.Process.Pid)
	is.Equal(len(pids), 1)
	upstream := pids[0]

	// Remove and apply: the session closes and the upstream process ends.
	var removed p.RemoveRegistryEntryResult
	is.NoErr(c.Call(ctx, p.MethodRegistryRemove, p.RegistrySourceParams{SourceID: "reg.fake"}, &removed))
	is.True(removed.Removed)
	is.True(alive(upstream)) // removing the entry alone changes nothing live
	applied = apply(t, c)
	is.Equal(applied.Removed, []string{"reg.fake"})
	is.Equal(applied.ConnectionCount, 0)
	if !poll.Until(10*time.Second, func() bool { return !alive(upstream) }) {
		logs, _ := os.ReadFile(second.logs)
		t.Logf("fakemcp %d still running 10s after the apply\n%s", upstream, logs)
		is.Fail() // the removed source's upstream process exits
	}
	is.Equal(len(upstreams(t, second.cmd.Process.Pid)), 0)
	_, err = c.InspectCapability(ctx, "reg.fake.counter")
	is.True(err != nil) // its capabilities are gone
	run, err := c.RunDeployment(ctx, p.StartRunParams{DeploymentID: deployment, WorkflowInput: p.Object{}})
	is.NoErr(err)
	is.Equal(run.Status, "unrunnable") // and deployments bound to it cannot run
}

func apply(t *testing.T, c *client.Client) p.ApplyRegistryChangesResult {
	t.Helper()
	is := is.New(t)
	is.Helper()
	var res p.ApplyRegistryChangesResult
	is.NoErr(c.Call(testContext(t), p.MethodRegistryApply, p.Empty{}, &res))
	is.True(res.Applied)
	return res
}

// runCounter runs the counter deployment to its end and returns its output.
func runCounter(t *testing.T, c *client.Client, deployment string) p.Object {
	t.Helper()
	is := is.New(t)
	is.Helper()
	started, err := c.RunDeployment(testContext(t), p.StartRunParams{DeploymentID: deployment, WorkflowInput: p.Object{}})
	is.NoErr(err)
	is.True(started.RunID != nil)
	run := settled(t, c, *started.RunID)
	if run.Status != "completed" {
		t.Logf("run %s is %s: %v", *started.RunID, run.Status, deref(run.Error))
	}
	is.Equal(run.Status, "completed")
	return run.Output
}

// stop ends the process as an operator does (SIGTERM) and waits until it
// is gone.
func (pr *process) stop(t testing.TB) {
	t.Helper()
	is := is.New(t)
	is.Helper()
	is.NoErr(pr.cmd.Process.Signal(syscall.SIGTERM))
	select {
	case <-pr.exited:
	case <-time.After(30 * time.Second):
		t.Log("mcpflow did not stop within 30s of SIGTERM")
		is.Fail() // mcpflow stops after SIGTERM
	}
}

// upstreams returns the pids of the running fakemcp processes whose parent
// is pid, or whose parent's parent is (a stdio server runs under a reaper).
func upstreams(t *testing.T, pid int) []int {
	t.Helper()
	dirs, err := os.ReadDir("/proc")
	is.New(t).NoErr(err)
	var out []int
	for _, d := range dirs {
		child, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		ppid, state, ok := procStat(child)
		if !ok || state == "Z" {
			continue
		}
		if grand, _, ok := procStat(ppid); ppid != pid && (!ok || grand != pid) {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", d.Name(), "cmdline"))
		if err == nil && string(bytes.SplitN(cmdline, []byte{0}, 2)[0]) == fakeMCP {
			out = append(out, child)
		}
	}
	return out
}

// alive reports whether pid runs (a zombie has exited).
func alive(pid int) bool {
	_, state, ok := procStat(pid)
	return ok && state != "Z"
}

// procStat reads the parent pid and state of pid from /proc.
func procStat(pid int) (ppid int, state string, ok bool) {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, "", false
	}
	// pid (comm) state ppid ...; comm may hold spaces and parentheses.
	s := string(data)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fields) < 2 {
		return 0, "", false
	}
	ppid, err = strconv.Atoi(fields[1])
	return ppid, fields[0], err == nil
}
