package integration

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	p "github.com/mcpflow/mcpflow/api/protocol"
	"github.com/mcpflow/mcpflow/fakes/poll"
)

// goRunInvocation is how the README runs mcpflow from its clone; the
// binary under test prints "mcpflow" where a go run build prints it.
const goRunInvocation = "go run ./cmd/mcpflow"

// TestREADMEJourneysAgreeOnOneServer is issue 29's sixth item: on one
// server started as the README starts it (serve with no config, in a
// fresh folder), its serve log names the console's and the MCP face's
// URLs; the README's CLI journey, run as README.md writes it, prints what
// the README shows; then the console's journey, through the API calls
// the console makes (Discover's Create workflow, the Workbench's Save
// artifact with the workspace's title, Deploy, Run it), scaffolds the
// same capability to the same artifact: Save artifact does not fail with
// "version 1 already exists with different content", and the run goes on
// counting on the same session.
func TestREADMEJourneysAgreeOnOneServer(t *testing.T) {
	t.Parallel() // its own mcpflow: see parallelTests
	if testing.Short() {
		t.Skip("starts the real binary")
	}
	is := is.New(t)
	dir := t.TempDir()
	addr := freeAddr(t)
	logPath := filepath.Join(t.TempDir(), "serve.log")
	log, err := os.Create(logPath)
	is.NoErr(err)
	defer log.Close()
	serve := exec.Command(binary, "serve", "--listen", addr)
	serve.Dir = dir // the README's default store: ./.mcpflow
	serve.Stdout, serve.Stderr = log, log
	is.NoErr(serve.Start())
	exited := make(chan struct{})
	go func() {
		_ = serve.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		_ = serve.Process.Kill()
		<-exited
	})
	var serving string
	poll.For(t, "the serve log's serving line", 30*time.Second, func() bool {
		data, err := os.ReadFile(logPath)
		serving = string(data)
		return err == nil && strings.Contains(serving, "mcpflow serving")
	})
	is.True(strings.Contains(serving, "console=http://"+addr+"/console")) // where the README sends a browser
	is.True(strings.Contains(serving, "mcp=http://"+addr+"/mcp"))         // and an agent
	c := cliTool{t: t, url: "ws://" + addr + "/ws"}

	// The CLI journey, as the README writes it.
	journey := docCommands(t, "README.md", "A first workflow", goRunInvocation)
	is.True(len(journey) >= 4) // workflow new, run twice, status
	for _, step := range journey {
		r := c.want(0, step.args...)
		got := strings.Split(strings.TrimRight(r.stdout, "\n"), "\n")
		switch step.args[0] {
		case "workflow":
			want := strings.Join(step.output, "\n")
			want = strings.ReplaceAll(want, goRunInvocation, "mcpflow") // a go run build suggests go run
			is.Equal(strings.Join(got, "\n"), want)                     // what the README shows, line for line
		case "run":
			is.True(strings.Contains(r.stdout, "output:"))
			is.True(strings.Contains(r.stdout, "completed, outcome ok"))
		case "status":
			is.True(strings.HasPrefix(r.stdout, "server: ok, store: "))
			is.True(strings.Contains(r.stdout, strings.Fields(step.output[2])[0])) // the table's header
			is.True(strings.Contains(r.stdout, "demo.default  yes      open     1       0"))
		}
	}

	// The console's journey, through the calls the console makes.
	cl := dialURL(t, c.url)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var created p.CreateFromCapabilityResult
	is.NoErr(cl.Call(ctx, p.MethodWorkspaceFromCapability, p.Object{"workspace_id": "counter_ws", "capability_name": "demo.default.counter", "name": "counter_workflow"}, &created))
	is.Equal(created.WorkspaceID, "counter_ws") // the CLI's, as it is
	var ws p.WorkspaceResult
	is.NoErr(cl.Call(ctx, p.MethodWorkspaceGet, p.Object{"workspace_id": "counter_ws", "include_draft": true}, &ws))
	is.True(ws.Title != nil)
	is.Equal(*ws.Title, "Counter Workflow") // the scaffold's title, server side
	var saved p.SavedArtifact
	is.NoErr(cl.Call(ctx, p.MethodWorkspaceCreateArtifact, p.Object{"workspace_id": "counter_ws", "artifact_id": "counter_workflow", "version": 1,
		"title": *ws.Title, "outcomes": ws.Draft["outcomes"]}, &saved))
	is.True(saved.Saved) // the same artifact as the CLI's: no "already exists with different content"
	// Deploy asks first: a dry run says what the save would change.
	deployment := p.Object{"id": "counter_workflow.default", "artifact_id": "counter_workflow", "artifact_version": 1,
		"bindings": []p.Object{{"logical_source": "demo.default", "concrete_source": "demo.default"}}}
	var dry p.SaveDeploymentResult
	is.NoErr(cl.Call(ctx, p.MethodDeploymentsSave, p.Object{"deployment": deployment, "dry_run": true}, &dry))
	is.True(!dry.Saved && dry.Change != nil && dry.Change.Previous != nil)
	is.Equal(dry.Change.Previous.ArtifactVersion, 1) // what it runs now
	is.Equal(dry.Change.Next.ArtifactVersion, 1)     // and would run
	is.True(strings.Contains(dry.Change.Next.ToolDescription, `Runs the mcpflow workflow "Counter Workflow"`))
	is.Equal(dry.Change.Previous.ToolDescription, dry.Change.Next.ToolDescription) // agents see no change
	var fresh p.SaveDeploymentResult
	is.NoErr(cl.Call(ctx, p.MethodDeploymentsSave, p.Object{"deployment": p.Object{"id": "counter.new", "artifact_id": "counter_workflow", "artifact_version": 1,
		"bindings": deployment["bindings"]}, "dry_run": true}, &fresh))
	is.True(fresh.Change.Previous == nil)              // a new deployment
	c.want(1, "deployments", "inspect", "counter.new") // a dry run saves nothing
	var deployed p.SaveDeploymentResult
	is.NoErr(cl.Call(ctx, p.MethodDeploymentsSave, p.Object{"deployment": deployment}, &deployed))
	is.Equal(deployed.ArtifactVersion, 1)
	var run p.RunResult
	is.NoErr(cl.Call(ctx, p.MethodRunsStart, p.Object{"deployment_id": "counter_workflow.default"}, &run))
	is.Equal(run.Status, "completed")
	is.Equal(run.Output["count"], float64(3)) // the same session as the CLI's two runs
}
