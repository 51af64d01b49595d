package integration

// What npm @modelcontextprotocol/server-everything returns, through the
// real mcpflow binary, over stdio and streamable HTTP: content blocks keep
// their kind in the step's output, the trace and the run's output and over
// the MCP face; a structured result stays the structured output; a call
// the server rejects fails the run with the server's own words, in runs
// inspect, --follow and the MCP face (issue 28, items 6 and 7).

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/matryer/is"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflow/mcpflow/actors/config"
	p "github.com/mcpflow/mcpflow/api/protocol"
)

// everythingTinyImage starts the base64 PNG that get-tiny-image answers.
const everythingTinyImage = "iVBORw0KGgoAAAANSUhEUgAAABQAAAAUCAYAAACNiR0N"

// everythingRejected is what server-everything says of a resourceId its
// input schema lets through (a number) and its handler refuses.
const everythingRejected = "Invalid resourceId: 0. Must be a finite positive integer."

func TestServerEverythingResultsKeepTheirKindAndFailuresSayWhy(t *testing.T) {
	t.Parallel() // its own mcpflow and upstream: see parallelTests
	node, script := everythingTS(t)
	preload, err := filepath.Abs(filepath.Join("testdata", "loopback-only.cjs"))
	is.New(t).NoErr(err)

	for _, tc := range []struct {
		name, mode, endpoint, transport string
	}{
		{name: "stdio", mode: "stdio", transport: config.TransportStdio},
		{name: "http", mode: "streamableHttp", endpoint: "/mcp", transport: config.TransportHTTP},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			conn := "results" + tc.name + ".default"
			src := stdioSource(conn, node, script, tc.mode)
			if tc.transport != config.TransportStdio {
				addr := startEverythingTSServer(t, node, preload, script, tc.mode)
				src = config.Connection{Kind: "mcp", ID: conn, Transport: config.Transport{Kind: tc.transport, URL: "http://" + addr + tc.endpoint}}
			}
			pr, c := serveMCPFlowWith(t, t.TempDir(), conn, config.Server{Sources: []config.Connection{src}})
			ctx := testContext(t)

			run := func(deployment string, input p.Object) p.RunResult {
				t.Helper()
				started, err := c.RunDeployment(ctx, p.StartRunParams{DeploymentID: deployment, WorkflowInput: input})
				is.NoErr(err)
				settled(t, c, *started.RunID)
				var r p.RunResult // with its trace
				is.NoErr(c.Call(ctx, p.MethodRunsTrace, p.Object{"run_id": *started.RunID, "trace_range": p.Object{"limit": 20}}, &r))
				if r.Status != "completed" {
					t.Logf("run of %s: %s, error %v", deployment, r.Status, deref(r.Error))
				}
				return r
			}
			blocks := func(out p.Object) []map[string]any {
				t.Helper()
				list, ok := out["content"].([]any)
				is.True(ok) // the output holds the tool's content blocks
				var got []map[string]any
				for _, b := range list {
					got = append(got, b.(map[string]any))
				}
				return got
			}

			// get-tiny-image: text, an image, text; the image stays an
			// image (base64 PNG) in the run's output and the trace.
			image := run(buildToolDeployment(t, c, conn, "get-tiny-image", "tiny"), p.Object{})
			is.Equal(image.Status, "completed")
			got := blocks(image.Output)
			is.Equal(len(got), 3)
			is.Equal(got[1]["type"], "image")
			is.Equal(got[1]["mimeType"], "image/png")
			is.True(strings.HasPrefix(got[1]["data"].(string), everythingTinyImage)) // the PNG itself, not a description of it
			is.Equal(len(image.Trace), 1)
			is.Equal(image.Trace[0].Output["content"].([]any)[1].(map[string]any)["type"], "image") // the step's output too

			// get-resource-links: a text, then resource_link blocks.
			links := run(buildToolDeployment(t, c, conn, "get-resource-links", "links"), p.Object{"count": 3})
			is.Equal(links.Status, "completed")
			got = blocks(links.Output)
			is.Equal(len(got), 4)
			for _, b := range got[1:] {
				is.Equal(b["type"], "resource_link")
				is.True(strings.HasPrefix(b["uri"].(string), "demo://resource/dynamic/"))
			}

			// get-resource-reference: an embedded resource, with its contents.
			refDeployment := buildToolDeployment(t, c, conn, "get-resource-reference", "reference")
			ref := run(refDeployment, p.Object{"resourceType": "Text", "resourceId": 2})
			is.Equal(ref.Status, "completed")
			got = blocks(ref.Output)
			is.Equal(got[1]["type"], "resource")
			embedded := got[1]["resource"].(map[string]any)
			is.Equal(embedded["uri"], "demo://resource/dynamic/text/2")
			is.True(embedded["text"] != nil) // its contents came with it

			// get-structured-content: the structured output is the output.
			weather := run(buildToolDeployment(t, c, conn, "get-structured-content", "weather"), p.Object{"location": "Chicago"})
			is.Equal(weather.Status, "completed")
			is.Equal(weather.Output, p.Object{"temperature": 36.0, "conditions": "Light rain / drizzle", "humidity": 82.0})
			is.Equal(weather.Trace[0].Content, []any(nil)) // its only block was the JSON copy

			// A call the server rejects fails the run with its words.
			rejected := run(refDeployment, p.Object{"resourceType": "Text", "resourceId": 0})
			is.Equal(rejected.Status, "failed")
			is.True(rejected.Error != nil && strings.Contains(*rejected.Error, everythingRejected)) // the run's error
			is.Equal(rejected.Trace[0].Outcome, "error")
			is.True(strings.Contains(rejected.Trace[0].Error, everythingRejected)) // the step's error

			cli := cliTool{t: t, url: pr.url}
			inspected := cli.want(0, "runs", "inspect", *rejected.RunID)
			is.True(strings.Contains(inspected.stdout, everythingRejected)) // runs inspect says why
			traced := cli.want(0, "runs", "trace", *rejected.RunID)
			is.True(strings.Contains(traced.stdout, "Invalid resourceId: 0")) // so does the trace table
			input, err := json.Marshal(rejected.Trace[0].ResolvedInput)
			is.NoErr(err)
			followed := cli.want(2, "run", refDeployment, "--input", string(input), "--follow")
			t.Logf("run --follow of a rejected call:\n%s%s", followed.stdout, followed.stderr)
			is.True(strings.Contains(followed.stdout, "call: error"))                        // the step's line
			is.True(strings.Count(followed.stdout+followed.stderr, everythingRejected) >= 2) // on the step's line and the run's

			// The MCP face: isError with the server's text; an image as an image.
			session := connectFace(t, strings.Replace(strings.Replace(pr.url, "ws://", "http://", 1), "/ws", "/mcp", 1))
			res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "reference", Arguments: rejected.Trace[0].ResolvedInput})
			is.NoErr(err)
			is.True(res.IsError) // a failed run is an error result
			said := ""
			for _, b := range res.Content {
				if text, ok := b.(*mcp.TextContent); ok {
					said += text.Text + "\n"
				}
			}
			is.True(strings.Contains(said, everythingRejected)) // its text is why, with the server's reason
			res, err = session.CallTool(ctx, &mcp.CallToolParams{Name: "tiny", Arguments: map[string]any{}})
			is.NoErr(err)
			is.True(!res.IsError)
			var images int
			for _, b := range res.Content {
				if img, ok := b.(*mcp.ImageContent); ok {
					images++
					is.Equal(img.MIMEType, "image/png")
				}
			}
			is.Equal(images, 1) // the image reaches the MCP client as an image
		})
	}
}

// connectFace opens a go-sdk client session on mcpflow's /mcp.
func connectFace(t *testing.T, endpoint string) *mcp.ClientSession {
	t.Helper()
	return connectFaceAs(t, endpoint, nil, "")
}

// connectFaceAs opens a go-sdk client session with opts on mcpflow's
// /mcp, asking for protocol version ("": go-sdk's latest).
func connectFaceAs(t *testing.T, endpoint string, opts *mcp.ClientOptions, version string) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "results-test", Version: "0"}, opts)
	cs, err := client.Connect(testContext(t), &mcp.StreamableClientTransport{Endpoint: endpoint, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	is.New(t).NoErr(err) // connect to /mcp
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}
