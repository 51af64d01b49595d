package integration

// server-everything's tools that ask their client (elicitation, roots)
// behind the real mcpflow binary, over stdio and streamable HTTP: with the
// defaults, mcpflow declares elicitation and roots, so the server offers
// the tools that need them; an elicitation interrupts the run while the
// call waits, and the run's resume answers it.

import (
	"encoding/json"
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

// everythingTransport is a transport server-everything is served over
// behind mcpflow.
type everythingTransport struct{ name, mode, endpoint, transport string }

// everythingTransports are stdio and streamable HTTP.
var everythingTransports = []everythingTransport{
	{name: "stdio", mode: "stdio", transport: config.TransportStdio},
	{name: "http", mode: "streamableHttp", endpoint: "/mcp", transport: config.TransportHTTP},
}

// serveEverything starts server-everything over tc as source conn, whose
// client block is block, behind a started mcpflow, and returns a client
// of that mcpflow.
func serveEverything(t *testing.T, tc everythingTransport, conn string, block *config.Client) *client.Client {
	t.Helper()
	is := is.New(t)
	node, script := everythingTS(t)
	var src config.Connection
	if tc.transport == config.TransportStdio {
		src = stdioSource(conn, node, script, tc.mode)
	} else {
		preload, err := filepath.Abs(filepath.Join("testdata", "loopback-only.cjs"))
		is.NoErr(err)
		addr := startEverythingTSServer(t, node, preload, script, tc.mode)
		src = config.Connection{Kind: "mcp", ID: conn, Transport: config.Transport{Kind: tc.transport, URL: "http://" + addr + tc.endpoint}}
	}
	src.Client = block
	dir := t.TempDir()
	cfg := config.File{Version: 1, Server: config.Server{Store: config.Store{Root: filepath.Join(dir, "store")}, Sources: []config.Connection{src}}}
	data, err := json.Marshal(cfg)
	is.NoErr(err)
	cfgPath := filepath.Join(dir, "mcpflow.json")
	is.NoErr(os.WriteFile(cfgPath, data, 0o600))
	pr := startProcess(t, cfgPath, "mcpflow.log")
	t.Cleanup(func() { stopEverythingMCPFlow(t, pr, nil) })
	return dialURL(t, pr.url)
}

func TestServerEverythingElicitsThroughTheRun(t *testing.T) {
	t.Parallel() // its own mcpflow and upstream: see parallelTests
	for _, tc := range everythingTransports {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			conn := "elicit" + tc.name + ".default"
			c := serveEverything(t, tc, conn, &config.Client{Roots: []config.Root{{URI: "file:///srv/elicit-" + tc.name, Name: "workspace"}}})
			ctx := testContext(t)

			_, err := c.RefreshConnectionCatalog(ctx, conn)
			is.NoErr(err)
			for _, tool := range []string{"trigger-elicitation-request", "trigger-url-elicitation", "get-roots-list"} {
				_, err := c.InspectCapability(ctx, conn+"."+tool)
				if err != nil {
					t.Logf("%s: %v", tool, err)
				}
				is.NoErr(err) // offered to a client that declares elicitation and roots
			}

			roots := buildToolDeployment(t, c, conn, "get-roots-list", "roots_"+tc.name)
			run := startAndSettle(t, c, roots)
			is.Equal(run.Status, "completed")
			is.True(strings.Contains(outputText(run.Output), "file:///srv/elicit-"+tc.name)) // the configured root

			elicit := buildToolDeployment(t, c, conn, "trigger-elicitation-request", "elicit_"+tc.name)
			id := startInterrupted(t, c, elicit)
			r, err := c.InspectRun(ctx, id)
			is.NoErr(err)
			is.Equal(r.Interrupt["kind"], "elicitation")
			schema, _ := r.Interrupt["resume_schema"].(map[string]any)
			is.Equal(schema["required"], []any{"name"}) // the requested schema
			payload, _ := r.Interrupt["payload"].(map[string]any)
			is.Equal(payload["connection"], conn)
			is.Equal(payload["mode"], "form")

			accept := "accept"
			_, err = c.ResumeRun(ctx, p.ResumeRunParams{RunID: id, ResumeOutcome: &accept, ResumePayload: p.Object{"name": 42}})
			is.True(err != nil) // a payload that breaks the schema is refused
			r, err = c.InspectRun(ctx, id)
			is.NoErr(err)
			is.Equal(r.Status, "interrupted") // and the run stays interrupted

			_, err = c.ResumeRun(ctx, p.ResumeRunParams{RunID: id, ResumeOutcome: &accept, ResumePayload: p.Object{"name": "Ada Lovelace", "check": true}})
			is.NoErr(err)
			done := settled(t, c, id)
			is.Equal(done.Status, "completed")
			is.True(strings.Contains(outputText(done.Output), "- Name: Ada Lovelace")) // the accepted content reached the server

			for _, outcome := range []string{"decline", "cancel"} {
				id := startInterrupted(t, c, elicit)
				_, err = c.ResumeRun(ctx, p.ResumeRunParams{RunID: id, ResumeOutcome: &outcome})
				is.NoErr(err)
				done := settled(t, c, id)
				is.Equal(done.Status, "completed")
				is.True(strings.Contains(outputText(done.Output), `"action": "`+outcome+`"`)) // the outcome reached the server
			}
		})
	}
}

// startAndSettle runs deployment and waits for it to end.
func startAndSettle(t *testing.T, c *client.Client, deployment string) p.RunResult {
	t.Helper()
	is := is.New(t)
	started, err := c.RunDeployment(testContext(t), p.StartRunParams{DeploymentID: deployment, WorkflowInput: p.Object{}})
	is.NoErr(err)
	return settled(t, c, *started.RunID)
}

// startInterrupted starts deployment and waits for its run to be
// interrupted.
func startInterrupted(t *testing.T, c *client.Client, deployment string) string {
	t.Helper()
	return startInterruptedWith(t, c, deployment, p.Object{})
}

// startInterruptedWith is startInterrupted of a run with input.
func startInterruptedWith(t *testing.T, c *client.Client, deployment string, input p.Object) string {
	t.Helper()
	is := is.New(t)
	ctx := testContext(t)
	started, err := c.RunDeployment(ctx, p.StartRunParams{DeploymentID: deployment, WorkflowInput: input})
	is.NoErr(err)
	id := *started.RunID
	var status string
	poll.For(t, "run "+id+" is interrupted", 30*time.Second, func() bool {
		r, err := c.InspectRun(ctx, id)
		is.NoErr(err)
		status = r.Status
		return status != "running"
	})
	is.Equal(status, "interrupted")
	return id
}

// outputText is the text of a run's output, as JSON.
func outputText(o p.Object) string {
	data, _ := json.Marshal(o)
	return strings.ReplaceAll(string(data), `\"`, `"`)
}
