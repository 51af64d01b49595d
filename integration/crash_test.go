package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/store/sqlite"
	"github.com/mcpflow/mcpflow/api/client"
	p "github.com/mcpflow/mcpflow/api/protocol"
	"github.com/mcpflow/mcpflow/cmd/mcpflow/app"
	"github.com/mcpflow/mcpflow/fakes/poll"
)

// process is a real `mcpflow serve` subprocess.
type process struct {
	cmd    *exec.Cmd
	url    string
	logs   string
	exited chan struct{} // closed once the process is reaped
}

// startProcess runs `mcpflow serve` on cfgPath with runs answered at once
// (--run-wait 0s) and any extra flags, and waits until it answers /healthz.
func startProcess(t testing.TB, cfgPath, logName string, extra ...string) *process {
	t.Helper()
	return startProcessOf(t, binary, cfgPath, logName, extra...)
}

// startProcessOf is startProcess of the mcpflow executable bin (one built
// otherwise, e.g. with coverage).
func startProcessOf(t testing.TB, bin, cfgPath, logName string, extra ...string) *process {
	t.Helper()
	is := is.New(t)
	is.Helper()
	addr := freeAddr(t)
	logs := filepath.Join(filepath.Dir(cfgPath), logName)
	out, err := os.Create(logs)
	is.NoErr(err)
	defer out.Close()
	cmd := exec.Command(bin, append([]string{"serve", "--config", cfgPath, "--listen", addr, "--run-wait", "0s"}, extra...)...)
	cmd.Stdout, cmd.Stderr = out, out
	is.NoErr(cmd.Start())
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
		// A race-built mcpflow reports a data race in its log, and so
		// does, through mcpflow's log of its stderr, a stdio server.
		if data, err := os.ReadFile(logs); err == nil && bytes.Contains(data, []byte("WARNING: DATA RACE")) {
			t.Errorf("a data race in %s:\n%s", logs, data)
		}
	})
	deadline := time.Now().Add(20 * time.Second)
	if !poll.Until(time.Until(deadline), func() bool {
		// Bounded too: the listener is bound before Start, and a Start
		// that takes long holds the request unanswered meanwhile.
		if getBefore(deadline, "http://"+addr+"/healthz") == nil {
			return true
		}
		select {
		case <-exited:
			data, _ := os.ReadFile(logs)
			t.Logf("mcpflow exited before serving:\n%s", data)
			is.Fail() // mcpflow serves rather than exiting
		default:
		}
		return false
	}) {
		t.Logf("mcpflow did not serve on %s within 20s", addr)
		is.Fail() // mcpflow answers /healthz within the deadline
	}
	return &process{cmd: cmd, url: "ws://" + addr + "/ws", logs: logs, exited: exited}
}

// getBefore GETs url, giving up at deadline.
func getBefore(deadline time.Time, url string) error {
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	return resp.Body.Close()
}

// kill SIGKILLs the process and waits until it is gone.
func (pr *process) kill(t *testing.T) {
	t.Helper()
	is := is.New(t)
	is.Helper()
	is.NoErr(pr.cmd.Process.Signal(syscall.SIGKILL)) // SIGKILL mcpflow
	select {
	case <-pr.exited:
	case <-time.After(10 * time.Second):
		t.Log("mcpflow did not die within 10s of SIGKILL")
		is.Fail() // mcpflow dies promptly after SIGKILL
	}
}

// handedOut are the addresses freeAddr has returned in this test process.
var handedOut struct {
	sync.Mutex
	addrs map[string]bool
}

// freeAddr is a loopback address nothing listens on now, and one it has
// not returned before: the kernel may hand out a port just closed again,
// and a cluster node then got its cluster address as its HTTP one too
// ("bind: address already in use").
func freeAddr(t testing.TB) string {
	t.Helper()
	handedOut.Lock()
	defer handedOut.Unlock()
	if handedOut.addrs == nil {
		handedOut.addrs = map[string]bool{}
	}
	for {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		is.New(t).NoErr(err)
		addr := l.Addr().String()
		_ = l.Close()
		if !handedOut.addrs[addr] {
			handedOut.addrs[addr] = true
			return addr
		}
	}
}

func dialURL(t testing.TB, url string) *client.Client {
	t.Helper()
	c, err := client.Dial(testContext(t), url)
	is.New(t).NoErr(err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// crashed is what crash left: the acknowledged runs, those of them the
// store had completed at the kill and those it had with a call in flight
// then, and the restarted process with a client.
type crashed struct {
	ids              []string
	finished, flying map[string]bool
	second           *process
	c                *client.Client
}

// crash starts runs of tool (slow.default's sleep or idle, which wait
// {"ms"}) through the real binary, SIGKILLs it once killAfter starts are
// acknowledged and a slow run's call is in flight, reads from the store
// where each run was at the kill, restarts the binary on the same store,
// and says what it left. Every fifth run waits 1 ms and the others
// slowMS, so that most are calling at the kill.
func crash(t *testing.T, tool string, runs, killAfter, slowMS int) crashed {
	t.Helper()
	return crashWith(t, tool, runs, killAfter, slowMS, nil)
}

// crashWith is crash, calling killed, when not nil, with the folder of
// the store as the kill left it, before anything opens it again.
func crashWith(t *testing.T, tool string, runs, killAfter, slowMS int, killed func(dir string)) crashed {
	t.Helper()
	is := is.New(t)
	dir := t.TempDir()
	cfg := config.File{Version: 1, Server: config.Server{
		Store:   config.Store{Root: filepath.Join(dir, "store")},
		Sources: []config.Connection{stdioSource("slow.default", fakeMCP)},
	}}
	data, err := json.Marshal(cfg)
	is.NoErr(err)
	cfgPath := filepath.Join(dir, "mcpflow.json")
	is.NoErr(os.WriteFile(cfgPath, data, 0o600))

	first := startProcess(t, cfgPath, "first.log")
	c := dialURL(t, first.url)
	deployment := buildToolDeploymentFor(t, c, "slow.default", tool)

	type ack struct {
		id   string
		slow bool
	}
	acked := make(chan ack, runs)
	var wg sync.WaitGroup
	clients := []*client.Client{c, dialURL(t, first.url), dialURL(t, first.url), dialURL(t, first.url)}
	for i := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ms := slowMS // in flight when the process dies
			if i%5 == 0 {
				ms = 1 // finishes before
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			res, err := clients[i%len(clients)].RunDeployment(ctx, p.StartRunParams{DeploymentID: deployment, WorkflowInput: p.Object{"ms": ms}})
			if err == nil && res.RunID != nil {
				acked <- ack{*res.RunID, ms == slowMS}
			}
		}()
	}
	var before []ack
	for len(before) < killAfter {
		select {
		case a := <-acked:
			before = append(before, a)
		case <-time.After(30 * time.Second):
			logs, _ := os.ReadFile(first.logs)
			t.Logf("only %d of %d runs acknowledged\n%s", len(before), killAfter, logs)
			is.Fail() // enough runs are acknowledged before the kill
		}
	}
	ctx := testContext(t)
	poll.For(t, "a slow run's call in flight", settleWait, func() bool {
		for _, a := range before {
			if status, last := runPosition(t, ctx, c, a.id); a.slow && status == "running" && last >= 2 { // created, step_started
				return true
			}
		}
		return false
	})
	first.kill(t)
	if killed != nil {
		killed(dir)
	}
	wg.Wait()
	close(acked)
	out := crashed{finished: map[string]bool{}, flying: map[string]bool{}}
	for _, a := range before {
		out.ids = append(out.ids, a.id)
	}
	for a := range acked {
		out.ids = append(out.ids, a.id)
	}

	// Where the kill left each run, as the store has it.
	st, err := sqlite.Open(ctx, filepath.Join(dir, "store", app.DatabaseFile))
	is.NoErr(err)
	for _, id := range out.ids {
		r, err := st.GetRun(ctx, id)
		is.NoErr(err) // every acknowledged run is stored
		switch {
		case r.Status == store.RunCompleted:
			out.finished[id] = true
		case r.Status == store.RunRunning && r.Checkpoint != nil && len(r.Checkpoint.Calls) > 0:
			out.flying[id] = true
		}
	}
	is.NoErr(st.Close())
	t.Logf("%d runs acknowledged before and while the process was killed: %d completed, %d calling", len(out.ids), len(out.finished), len(out.flying))
	out.second = startProcess(t, cfgPath, "second.log")
	out.c = dialURL(t, out.second.url)
	return out
}

// runPosition is run id's status and last event sequence number, as a
// subscription's reply tells them (the subscription is ended at once; c
// has no notification handler, so its replay is dropped).
func runPosition(t *testing.T, ctx context.Context, c *client.Client, id string) (string, int64) {
	t.Helper()
	is := is.New(t)
	is.Helper()
	sub, err := c.SubscribeRun(ctx, p.SubscribeRunParams{RunID: id})
	is.NoErr(err)
	if sub.Active {
		_, err = c.UnsubscribeRun(ctx, sub.SubscriptionID)
		is.NoErr(err)
	}
	return sub.Status, sub.LastSequence
}

// resumedAfterTheStop reports whether pr logged that it resumed run id
// after the stop (service.RecoverRuns).
func resumedAfterTheStop(t *testing.T, pr *process, id string) bool {
	t.Helper()
	logs, err := os.ReadFile(pr.logs)
	is.New(t).NoErr(err)
	for line := range strings.SplitSeq(string(logs), "\n") {
		if strings.Contains(line, `msg="run resumed after a stop"`) && strings.Contains(line, " run="+id+" ") {
			return true
		}
	}
	return false
}

// settled polls a run until it is no longer running.
func settled(t *testing.T, c *client.Client, id string) p.RunResult {
	t.Helper()
	is := is.New(t)
	is.Helper()
	ctx := testContext(t)
	var run p.RunResult
	if !poll.Until(60*time.Second, func() bool {
		var err error
		run, err = c.InspectRun(ctx, id)
		is.NoErr(err) // every acknowledged run survived
		return run.Status != "running"
	}) {
		t.Logf("run %s still running after restart", id)
		is.Fail() // a resumed run ends
	}
	return run
}

// TestNothingAcknowledgedIsLostWhenTheProcessIsKilled kills the binary
// while runs wait in a tool that is not safe to repeat: after restart every
// acknowledged run is there; one cut off mid-call failed, saying the
// outcome of its step is unknown; one that had completed is as it was;
// one cut off before its call went out, if any, resumed and completed.
func TestNothingAcknowledgedIsLostWhenTheProcessIsKilled(t *testing.T) {
	t.Parallel() // its own mcpflow: see parallelTests
	if testing.Short() {
		t.Skip("crash test: starts and kills the real binary")
	}
	is := is.New(t)
	cr := crash(t, "sleep", 200, 150, 3_000)
	c2 := cr.c
	ctx := testContext(t)
	var completed, cutOff, resumed int
	for _, id := range cr.ids {
		run := settled(t, c2, id)
		switch run.Status {
		case "completed":
			completed++
			is.True(run.Output["slept_ms"] != nil)
			is.True(!cr.flying[id]) // a call cut off is not made again
			if !cr.finished[id] {
				is.True(resumedAfterTheStop(t, cr.second, id)) // not completed before the kill: resumed after it
				resumed++
			}
		case "failed":
			cutOff++
			is.True(!cr.finished[id]) // a run that completed stays so
			if run.Error == nil || !strings.Contains(*run.Error, `executing step "call"; the outcome of that step is unknown`) {
				t.Logf("run %s failed without naming the step in flight: %v", id, deref(run.Error))
				is.Fail() // a run cut off mid-call names the step in flight
			}
		default:
			t.Logf("run %s is %q after restart", id, run.Status)
			is.Fail() // after restart every acknowledged run is completed or failed
		}
		var trace p.RunResult
		is.NoErr(c2.Call(ctx, p.MethodRunsTrace, p.TraceParams{RunID: id, TraceRange: p.TraceRange{}}, &trace))
		is.Equal(len(trace.Trace), trace.TraceCount) // the trace reads back whole
	}
	t.Logf("after restart: %d completed (%d resumed before their call went out), %d failed as cut off", completed, resumed, cutOff)
	is.True(len(cr.flying) > 0)       // the kill did cut calls off
	is.True(cutOff >= len(cr.flying)) // and each of them failed

	_, err := c2.InspectArtifact(ctx, "sleep_workflow", 1)
	is.NoErr(err)
	ws, err := c2.GetDraftWorkspace(ctx, "sleep_ws", true)
	is.NoErr(err)
	is.Equal(ws.Revision, 1)
	is.Equal(ws.Status, "valid")
}

// TestRunsCutOffInAnIdempotentStepResumeAfterRestart kills the binary
// while runs wait in a tool annotated idempotentHint: after restart every
// acknowledged run completes, and each whose call was in flight at the
// kill was resumed from its last committed step.
func TestRunsCutOffInAnIdempotentStepResumeAfterRestart(t *testing.T) {
	t.Parallel() // its own mcpflow: see parallelTests
	if testing.Short() {
		t.Skip("crash test: starts and kills the real binary")
	}
	is := is.New(t)
	cr := crash(t, "idle", 40, 30, 2_000)
	for _, id := range cr.ids {
		run := settled(t, cr.c, id)
		if run.Status != "completed" {
			t.Logf("run %s is %s: %v", id, run.Status, deref(run.Error))
		}
		is.Equal(run.Status, "completed") // resumed, then completed
		is.True(run.Output["slept_ms"] != nil)
		if cr.flying[id] {
			is.True(resumedAfterTheStop(t, cr.second, id)) // in flight at the kill: resumed after it
		}
		if cr.finished[id] {
			is.True(!resumedAfterTheStop(t, cr.second, id)) // completed before: left alone
		}
	}
	is.True(len(cr.flying) > 0) // calls were in flight at the kill
}

// buildToolDeploymentFor wraps one tool of connID in a saved, deployed
// workflow named "<tool>_workflow".
func buildToolDeploymentFor(t *testing.T, c *client.Client, connID, tool string) string {
	t.Helper()
	is := is.New(t)
	ctx := testContext(t)
	_, err := c.RefreshConnectionCatalog(ctx, connID)
	is.NoErr(err)
	name := tool + "_workflow"
	_, err = c.CreateDraftWorkspaceFromCapability(ctx, p.CreateFromCapabilityParams{WorkspaceID: tool + "_ws", CapabilityName: connID + "." + tool, Name: &name})
	is.NoErr(err)
	saved, err := c.CreateArtifactFromWorkspace(ctx, p.CreateArtifactParams{WorkspaceID: tool + "_ws", ArtifactID: name, Version: 1, Title: name, Outcomes: []string{"ok", "error"}})
	is.NoErr(err)
	is.True(saved.Saved)
	id := name + ".default"
	_, err = c.SaveDeployment(ctx, p.Object{"id": id, "artifact_id": name, "artifact_version": 1,
		"bindings": []any{p.Object{"logical_source": connID, "concrete_source": connID}}})
	is.NoErr(err)
	return id
}
