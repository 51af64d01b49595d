package integration

// What an upstream server asks during a run started through the MCP face
// reaches the MCP client that started it: server-everything's
// elicitation, answered by a real @modelcontextprotocol/sdk client, and
// its answer back to the server, which the run's result shows.

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/config"
	p "github.com/mcpflow/mcpflow/api/protocol"
)

// faceEverything is the face's server-everything source (startFace's
// everything option).
const faceEverything = "everything.default"

// everythingFace starts a face with server-everything as a source, its
// client block client, and a deployment (and tool) name of its tool.
func everythingFace(t *testing.T, client *config.Client, tool, name string) (*faceServer, string) {
	t.Helper()
	f := startFace(t, faceOptions{everything: true, everythingClient: client})
	_, err := f.ws.RefreshConnectionCatalog(testContext(t), faceEverything)
	is.New(t).NoErr(err)
	dep := buildToolDeployment(t, f.ws, faceEverything, tool, name)
	f.awaitTools(t, name)
	return f, dep
}

func TestMCPFaceAnUpstreamElicitationReachesTheClient(t *testing.T) {
	t.Parallel() // its own mcpflow and upstream: see parallelTests
	// Both eras: an elicitation/create request (2025-11-25) and an
	// input_required answer (2026-07-28).
	eachClient(t, []mcpClient{tsV1, tsV2}, func(t *testing.T, c mcpClient) { upstreamElicitation(t, c) })
}

func upstreamElicitation(t *testing.T, c mcpClient) {
	is := is.New(t)
	f, _ := everythingFace(t, nil, "trigger-elicitation-request", "face_elicit")

	accepted := map[string]any{"name": "Ada Lovelace", "check": true}
	sc := f.scenario(callStep("face_elicit", nil), callStep("face_elicit", nil))
	sc.Elicitation = true
	sc.Elicit = []elicitAnswer{{Action: "accept", Content: accepted}, {Action: "decline"}}
	got := c.run(t, sc)
	is.Equal(got.ProtocolVersion >= "2026-07-28", c.modern()) // the era the client speaks

	is.Equal(len(got.Elicitations), 2) // one per run: the server's, forwarded
	e := got.Elicitations[0]
	is.Equal(e.Message, "Please provide inputs for the following fields:") // the server's message
	props, _ := e.RequestedSchema["properties"].(map[string]any)
	is.True(props["name"] != nil)                                       // the server's requested schema,
	is.True(props["untitledMultipleSelectEnum"] != nil)                 // as it asked it,
	is.True(props["outcome"] == nil && props["mcpflow_outcome"] == nil) // with no field of mcpflow's

	env := completed(t, got.Steps[0])
	out := outputText(env.Output)
	is.True(strings.Contains(out, "- Name: Ada Lovelace"))    // the accepted content reached the server
	is.True(strings.Contains(out, "- Agreed to terms: true")) // and the step's output holds it

	declined := completed(t, got.Steps[1])
	is.True(strings.Contains(outputText(declined.Output), `"action": "decline"`)) // the decline reached the server
	is.Equal(len(f.runs(t)), 2)                                                   // each answer resumed its own run

	// A client that declared no elicitation gets the interrupted run, and
	// mcpflow_resume_run answers the server.
	first := 0
	resume := callStep("mcpflow_resume_run", map[string]any{"outcome": "cancel"})
	resume.RunIDFrom = &first
	got = c.run(t, f.scenario(callStep("face_elicit", nil), resume))
	is.Equal(len(got.Elicitations), 0)
	_, waiting := called(t, got.Steps[0])
	is.Equal(waiting.Status, "interrupted")
	is.Equal(waiting.Interrupt["kind"], "elicitation")
	cancelled := completed(t, got.Steps[1])
	is.Equal(cancelled.RunID, waiting.RunID)
	is.True(strings.Contains(outputText(cancelled.Output), `"action": "cancel"`)) // the cancel reached the server
}

func TestMCPFaceAnUpstreamURLElicitationReachesAClientThatDeclaredIt(t *testing.T) {
	t.Parallel() // its own mcpflow and upstream: see parallelTests
	eachClient(t, []mcpClient{goSDK2025, goSDK}, func(t *testing.T, c mcpClient) {
		is := is.New(t)
		f, _ := everythingFace(t, nil, "trigger-url-elicitation", "face_url")

		const url = "https://example.com/consent"
		sc := f.scenario(callStep("face_url", map[string]any{"url": url, "elicitationId": "el-7"}))
		sc.Elicitation, sc.ElicitationURL = true, true
		sc.Elicit = []elicitAnswer{{Action: "accept"}}
		got := c.run(t, sc)
		is.Equal(got.ProtocolVersion >= "2026-07-28", c.modern()) // the era the client speaks
		is.Equal(len(got.Elicitations), 1)
		e := got.Elicitations[0]
		is.Equal(e.Mode, "url") // asked as the server asked it:
		is.Equal(e.URL, url)    // its URL,
		is.Equal(e.ElicitationID, "el-7")
		is.Equal(e.Message, "Please open the link to complete this action.") // and its message
		env := completed(t, got.Steps[0])
		is.True(strings.Contains(outputText(env.Output), "User completed the URL elicitation flow")) // the accept reached the server
	})
}

func TestMCPFaceSamplingPolicyClientForwardsToTheClientThatStartedTheRun(t *testing.T) {
	t.Parallel() // its own mcpflow and upstream: see parallelTests
	// Both eras: a sampling/createMessage request (2025-11-25) and an
	// input request (2026-07-28).
	eachClient(t, []mcpClient{tsV1, goSDK}, func(t *testing.T, c mcpClient) { samplingClient(t, c) })
}

func samplingClient(t *testing.T, c mcpClient) {
	is := is.New(t)
	f, dep := everythingFace(t, &config.Client{Sampling: config.PolicyClient}, "trigger-sampling-request", "face_sample")
	ctx := testContext(t)

	sc := f.scenario(callStep("face_sample", map[string]any{"prompt": "Name a colour", "maxTokens": 20}))
	sc.Sampling = true
	sc.Sample = map[string]any{"role": "assistant", "model": "test-model", "stopReason": "endTurn",
		"content": map[string]any{"type": "text", "text": "Vermilion"}}
	got := c.run(t, sc)
	is.Equal(got.ProtocolVersion >= "2026-07-28", c.modern()) // the era the client speaks
	is.Equal(len(got.Samplings), 1)                           // the server's request, forwarded to the client
	s := got.Samplings[0]
	is.Equal(s.SystemPrompt, "You are a helpful test server.")
	is.Equal(s.MaxTokens, 20)
	is.True(len(s.Messages) == 1 && strings.Contains(outputText(s.Messages[0]), "Name a colour")) // the server's prompt
	env := completed(t, got.Steps[0])
	out := outputText(env.Output)
	is.True(strings.Contains(out, "Vermilion"))  // the client's message reached the server's result
	is.True(strings.Contains(out, "test-model")) // as the client answered it

	var trace json.RawMessage
	is.NoErr(f.ws.Call(ctx, p.MethodRunsTrace, p.TraceParams{RunID: env.RunID, TraceRange: p.TraceRange{}}, &trace))
	exchanges := string(trace)
	is.True(strings.Contains(exchanges, `"upstream_requests"`)) // the exchange is in the step's trace,
	is.True(strings.Contains(exchanges, `"outcome":"accept"`))  // answered

	// A run that no MCP client that samples started: the request is
	// refused, the step fails saying why, and the refusal is counted.
	started, err := f.ws.RunDeployment(ctx, p.StartRunParams{DeploymentID: dep, WorkflowInput: p.Object{"prompt": "Name a colour"}})
	is.NoErr(err)
	done := settled(t, f.ws, *started.RunID)
	is.Equal(done.Status, "failed")
	is.True(done.Error != nil && strings.Contains(*done.Error, "not started by an MCP client that declared sampling"))
	refused, _ := scrapeMetrics(t, f.pr.url).Value("mcpflow_upstream_requests_total", "connection", faceEverything, "kind", "sampling", "outcome", "refused_no_client")
	is.Equal(refused, 1.0)
}
