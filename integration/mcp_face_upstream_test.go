package integration

// What an upstream server asks during a run started through the MCP face
// reaches the MCP client that started it: server-everything's
// elicitation, answered by a real @modelcontextprotocol/sdk client, and
// its answer back to the server, which the run's result shows.

import (
	"strings"
	"testing"

	"github.com/matryer/is"
)

// faceEverything is the face's server-everything source (startFace's
// everything option).
const faceEverything = "everything.default"

func TestMCPFaceAnUpstreamElicitationReachesTheClient(t *testing.T) {
	// Both eras: an elicitation/create request (2025-11-25) and an
	// input_required answer (2026-07-28).
	eachClient(t, []mcpClient{tsV1, tsV2}, func(t *testing.T, c mcpClient) { upstreamElicitation(t, c) })
}

func upstreamElicitation(t *testing.T, c mcpClient) {
	is := is.New(t)
	f := startFace(t, faceOptions{everything: true})
	_, err := f.ws.RefreshConnectionCatalog(testContext(t), faceEverything)
	is.NoErr(err)
	buildToolDeployment(t, f.ws, faceEverything, "trigger-elicitation-request", "face_elicit")
	f.awaitTools(t, "face_elicit")

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
}
