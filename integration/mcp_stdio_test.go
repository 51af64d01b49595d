package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/api/client"
	"github.com/mcpflow/mcpflow/cmd/mcpflow/app"
)

// toolEnvelope is the structured result of a deployment's tool.
type toolEnvelope struct {
	RunID   string         `json:"run_id"`
	Status  string         `json:"status"`
	Outcome *string        `json:"outcome"`
	Output  map[string]any `json:"output"`
}

// TestMCPStdioRunsTheSeedJourney: `mcpflow mcp`, launched by go-sdk's
// client as a stdio server with a run token in $MCPFLOW_TOKEN, lists the
// counter deployment as a tool and answers two calls of it with counts 1
// then 2, on one upstream session; each call is a run started by the
// token's name. Its stdout carries MCP only (the client decodes every
// line of it), and it exits 0 once the host closes its stdin.
func TestMCPStdioRunsTheSeedJourney(t *testing.T) {
	is := is.New(t)
	svc := startServiceTuned(t, func(opts *app.Options) {
		opts.Config.Server.Access = &config.Access{Tokens: []config.Token{runToken, adminToken}}
	}, stdioSource("demo.default", binary, "demo-server"))
	ctx := testContext(t)
	admin, err := client.DialToken(ctx, svc.URL, adminToken.Token)
	is.NoErr(err)
	t.Cleanup(func() { _ = admin.Close() })
	buildCounterDeployment(t, admin, "demo.default")

	progress := make(chan *mcp.ProgressNotificationParams, 64)
	st := startStdio(t, svc.URL, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) { progress <- r.Params },
	}, "MCPFLOW_TOKEN="+runToken.Token)
	cs := st.session
	tools, err := cs.ListTools(ctx, nil)
	is.NoErr(err)
	var counter *mcp.Tool
	for _, tool := range tools.Tools {
		if tool.Name == "counter_workflow" {
			counter = tool
		}
	}
	is.True(counter != nil)              // the counter deployment is a tool
	is.True(counter.Description != "")   // with a description
	is.True(counter.InputSchema != nil)  // an input schema
	is.True(counter.OutputSchema != nil) // and the envelope's schema
	schema, err := json.Marshal(counter.InputSchema)
	is.NoErr(err)
	var input struct {
		Type string `json:"type"`
	}
	is.NoErr(json.Unmarshal(schema, &input))
	is.Equal(input.Type, "object")

	for want := 1; want <= 2; want++ {
		params := &mcp.CallToolParams{Name: counter.Name, Arguments: map[string]any{}}
		params.SetProgressToken(want)
		res, err := cs.CallTool(ctx, params)
		is.NoErr(err)
		// The run's events reach the call through the client's
		// subscription: the step's start and finish as progress.
		for range 2 {
			select {
			case n := <-progress:
				is.Equal(n.ProgressToken, any(float64(want)))
				is.True(strings.HasPrefix(n.Message, "call: "))
			case <-time.After(10 * time.Second):
				is.Fail() // the step's start and finish are reported
			}
		}
		is.True(!res.IsError)
		raw, err := json.Marshal(res.StructuredContent)
		is.NoErr(err)
		var env toolEnvelope
		is.NoErr(json.Unmarshal(raw, &env))
		is.Equal(env.Status, "completed")
		is.Equal(env.Output["count"], float64(want)) // one upstream session: the count goes on
		is.True(len(res.Content) > 0)
		text, ok := res.Content[0].(*mcp.TextContent)
		is.True(ok) // the output as a text block, for the model
		var fromText map[string]any
		is.NoErr(json.Unmarshal([]byte(text.Text), &fromText))
		is.Equal(fromText, env.Output)

		run, err := admin.InspectRun(ctx, env.RunID)
		is.NoErr(err)
		is.Equal(run.StartedBy, runToken.Name) // the run is the token's
	}

	statuses, err := admin.GetConnectionStatuses(ctx)
	is.NoErr(err)
	opened := -1
	for _, s := range statuses.Statuses {
		if s.ConnectionID == "demo.default" {
			opened = s.Session.SessionsOpened
		}
	}
	is.Equal(opened, 1) // both calls on one upstream session

	is.NoErr(st.close())
	is.Equal(st.cmd.ProcessState.ExitCode(), 0) // stdin closed: mcpflow mcp ends cleanly
}

// TestMCPStdioOffersANewDeployment: with a token that may follow the
// admin event log, `mcpflow mcp` tells its host of a deployment saved
// after it started (tools/list_changed), and the new tool can be called.
func TestMCPStdioOffersANewDeployment(t *testing.T) {
	is := is.New(t)
	svc := startServiceTuned(t, func(opts *app.Options) {
		opts.Config.Server.Access = &config.Access{Tokens: []config.Token{adminToken}}
	}, stdioSource("demo.default", binary, "demo-server"))
	ctx := testContext(t)
	admin, err := client.DialToken(ctx, svc.URL, adminToken.Token)
	is.NoErr(err)
	t.Cleanup(func() { _ = admin.Close() })
	changed := make(chan struct{}, 16)
	st := startStdio(t, svc.URL, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	}, "MCPFLOW_TOKEN="+adminToken.Token)
	before, err := st.session.ListTools(ctx, nil)
	is.NoErr(err)

	buildToolDeploymentFor(t, admin, "demo.default", "echo")
	// The catalog refresh before the save may change the tools too: list
	// again after each notification until the new tool is there.
	deadline := time.After(10 * time.Second)
	offered := func() bool {
		after, err := st.session.ListTools(ctx, nil)
		is.NoErr(err)
		return slices.ContainsFunc(after.Tools, func(tool *mcp.Tool) bool { return tool.Name == "echo_workflow" })
	}
	is.True(!slices.ContainsFunc(before.Tools, func(tool *mcp.Tool) bool { return tool.Name == "echo_workflow" }))
	for listed := false; !listed; {
		select {
		case <-changed:
			listed = offered()
		case <-deadline:
			t.Log("no tools/list_changed offered echo_workflow within 10s")
			is.Fail() // the host is told of the new tool
		}
	}
	res, err := st.session.CallTool(ctx, &mcp.CallToolParams{Name: "echo_workflow", Arguments: map[string]any{"message": "hello"}})
	is.NoErr(err)
	is.True(!res.IsError)
	raw, err := json.Marshal(res.StructuredContent)
	is.NoErr(err)
	var env toolEnvelope
	is.NoErr(json.Unmarshal(raw, &env))
	is.Equal(env.Status, "completed")
	is.Equal(env.Output["message"], "hello")
}

// TestMCPStdioExitsUnreachableWhenTheServerGoes: `mcpflow mcp` whose
// server dies ends its MCP session and exits 4, rather than leaving the
// host with a server that answers nothing.
func TestMCPStdioExitsUnreachableWhenTheServerGoes(t *testing.T) {
	is := is.New(t)
	pr := startProcess(t, writeConfig(t, t.TempDir()), "serve.log")
	st := startStdio(t, pr.url, nil)
	_, err := st.session.ListTools(testContext(t), nil)
	is.NoErr(err) // served while the server is up

	pr.kill(t)
	ended := make(chan error, 1)
	go func() { ended <- st.session.Wait() }()
	select {
	case <-ended:
	case <-time.After(10 * time.Second):
		is.Fail() // mcpflow mcp ends its session once the server is gone
	}
	is.True(st.close() != nil)                  // it exited with an error
	is.Equal(st.cmd.ProcessState.ExitCode(), 4) // unreachable
	is.True(strings.Contains(st.stderr.String(), "connection to the server was lost"))
}

// stdioServer is one `mcpflow mcp` subprocess and go-sdk's client session
// with it.
type stdioServer struct {
	cmd     *exec.Cmd
	session *mcp.ClientSession
	stderr  *bytes.Buffer // read only once the process has exited
	closed  bool
}

// startStdio launches `mcpflow mcp --url url` with env added to the
// test's environment, as a host does, and initializes a session with it
// as a client with opts; the session is closed at cleanup unless the test
// closed it.
func startStdio(t *testing.T, url string, opts *mcp.ClientOptions, env ...string) *stdioServer {
	t.Helper()
	is := is.New(t)
	is.Helper()
	st := &stdioServer{cmd: exec.Command(binary, "mcp", "--url", url), stderr: &bytes.Buffer{}}
	st.cmd.Env = append(os.Environ(), env...)
	st.cmd.Stderr = st.stderr
	host := mcp.NewClient(&mcp.Implementation{Name: "mcpflow-integration", Version: "0"}, opts)
	cs, err := host.Connect(testContext(t), &mcp.CommandTransport{Command: st.cmd, TerminateDuration: 5 * time.Second}, nil)
	is.NoErr(err) // mcpflow mcp initializes
	st.session = cs
	t.Cleanup(func() {
		if !st.closed {
			_ = st.close()
		}
		if t.Failed() {
			t.Logf("mcpflow mcp stderr:\n%s", st.stderr.String())
		}
	})
	return st
}

// close closes the session: stdin, then the wait for the process (SIGTERM
// after 5 s). Its error is the process's exit.
func (st *stdioServer) close() error {
	st.closed = true
	return st.session.Close()
}
