package integration

import (
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
	"github.com/mcpflow/mcpflow/api/client"
	p "github.com/mcpflow/mcpflow/api/protocol"
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
	is := is.New(t)
	is.Helper()
	addr := freeAddr(t)
	logs := filepath.Join(filepath.Dir(cfgPath), logName)
	out, err := os.Create(logs)
	is.NoErr(err)
	defer out.Close()
	cmd := exec.Command(binary, append([]string{"serve", "--config", cfgPath, "--listen", addr, "--run-wait", "0s"}, extra...)...)
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
	})
	deadline := time.Now().Add(20 * time.Second)
	for {
		// Bounded too: the listener is bound before Start, and a Start
		// that takes long holds the request unanswered meanwhile.
		if err := getBefore(deadline, "http://"+addr+"/healthz"); err == nil {
			break
		}
		select {
		case <-exited:
			data, _ := os.ReadFile(logs)
			t.Logf("mcpflow exited before serving:\n%s", data)
			is.Fail() // mcpflow serves rather than exiting
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Logf("mcpflow did not serve on %s within 20s", addr)
			is.Fail() // mcpflow answers /healthz within the deadline
		}
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

func freeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	is.New(t).NoErr(err)
	defer l.Close()
	return l.Addr().String()
}

func dialURL(t testing.TB, url string) *client.Client {
	t.Helper()
	c, err := client.Dial(testContext(t), url)
	is.New(t).NoErr(err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// crash starts runs of tool (slow.default's sleep or idle, which wait
// {"ms"}) through the real binary, SIGKILLs it once killAfter starts are
// acknowledged, restarts it on the same store, and returns the ids of the
// acknowledged runs and a client of the second process. Every fifth run
// waits 1 ms and the others slowMS, so most are in flight at the kill.
func crash(t *testing.T, tool string, runs, killAfter, slowMS int) ([]string, *client.Client) {
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

	acked := make(chan string, runs)
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
				acked <- *res.RunID
			}
		}()
	}
	var ids []string
	for len(ids) < killAfter {
		select {
		case id := <-acked:
			ids = append(ids, id)
		case <-time.After(30 * time.Second):
			logs, _ := os.ReadFile(first.logs)
			t.Logf("only %d of %d runs acknowledged\n%s", len(ids), killAfter, logs)
			is.Fail() // enough runs are acknowledged before the kill
		}
	}
	first.kill(t)
	wg.Wait()
	close(acked)
	for id := range acked {
		ids = append(ids, id)
	}
	t.Logf("%d runs acknowledged before and while the process was killed", len(ids))
	second := startProcess(t, cfgPath, "second.log")
	return ids, dialURL(t, second.url)
}

// settled polls a run until it is no longer running.
func settled(t *testing.T, c *client.Client, id string) p.RunResult {
	t.Helper()
	is := is.New(t)
	is.Helper()
	ctx := testContext(t)
	deadline := time.Now().Add(60 * time.Second)
	for {
		run, err := c.InspectRun(ctx, id)
		is.NoErr(err) // every acknowledged run survived
		if run.Status != "running" {
			return run
		}
		if time.Now().After(deadline) {
			t.Logf("run %s still running after restart", id)
			is.Fail() // a resumed run ends
		}
		select {
		case <-ctx.Done():
			is.NoErr(ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// TestNothingAcknowledgedIsLostWhenTheProcessIsKilled kills the binary
// while runs wait in a tool that is not safe to repeat: after restart every
// acknowledged run is there; one cut off mid-call failed, saying the
// outcome of its step is unknown; one cut off before its call went out
// resumed and completed.
func TestNothingAcknowledgedIsLostWhenTheProcessIsKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test: starts and kills the real binary")
	}
	is := is.New(t)
	ids, c2 := crash(t, "sleep", 200, 150, 3_000)
	ctx := testContext(t)
	var completed, cutOff int
	for _, id := range ids {
		run := settled(t, c2, id)
		switch run.Status {
		case "completed":
			completed++
			is.True(run.Output["slept_ms"] != nil)
		case "failed":
			cutOff++
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
	t.Logf("after restart: %d completed, %d failed as cut off", completed, cutOff)
	is.True(cutOff > 0) // the kill did cut runs off

	_, err := c2.InspectArtifact(ctx, "sleep_workflow", 1)
	is.NoErr(err)
	ws, err := c2.GetDraftWorkspace(ctx, "sleep_ws", true)
	is.NoErr(err)
	is.Equal(ws.Revision, 1)
	is.Equal(ws.Status, "valid")
}

// TestRunsCutOffInAnIdempotentStepResumeAfterRestart kills the binary
// while runs wait in a tool annotated idempotentHint: after restart every
// acknowledged run resumes from its last committed step and completes.
func TestRunsCutOffInAnIdempotentStepResumeAfterRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test: starts and kills the real binary")
	}
	is := is.New(t)
	ids, c2 := crash(t, "idle", 40, 30, 2_000)
	for _, id := range ids {
		run := settled(t, c2, id)
		if run.Status != "completed" {
			t.Logf("run %s is %s: %v", id, run.Status, deref(run.Error))
		}
		is.Equal(run.Status, "completed") // resumed, then completed
		is.True(run.Output["slept_ms"] != nil)
	}
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
