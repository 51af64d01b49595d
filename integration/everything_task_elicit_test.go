package integration

// server-everything's simulate-research-query with ambiguous: true elicits
// while its task runs (status input_required). Over stdio the request
// reaches mcpflow's session as any other; over streamable HTTP it comes on
// the stream that answers mcpflow's own tasks/result. Either way the run
// of the task's call is interrupted with it, and its resume's answer is
// what the task goes on with.

import (
	"strings"
	"testing"

	"github.com/matryer/is"

	p "github.com/mcpflow/mcpflow/api/protocol"
)

func TestServerEverythingElicitsDuringItsTask(t *testing.T) {
	t.Parallel() // its own mcpflow and upstream: see parallelTests
	for _, tc := range everythingTransports {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			conn := "taskelicit" + tc.name + ".default"
			c := serveEverything(t, tc, conn, nil)
			ctx := testContext(t)
			dep := buildToolDeployment(t, c, conn, researchTool, "task_elicit_"+tc.name)

			id := startInterruptedWith(t, c, dep, p.Object{"topic": "python", "ambiguous": true})
			r, err := c.InspectRun(ctx, id)
			is.NoErr(err)
			is.Equal(r.Interrupt["kind"], "elicitation")
			schema, _ := r.Interrupt["resume_schema"].(map[string]any)
			is.Equal(schema["required"], []any{"interpretation"}) // the task's question
			props, _ := schema["properties"].(map[string]any)
			field, _ := props["interpretation"].(map[string]any)
			choices, _ := field["oneOf"].([]any)
			is.True(len(choices) > 0)
			choice, _ := choices[0].(map[string]any)["const"].(string)
			is.True(choice != "")

			accept := "accept"
			_, err = c.ResumeRun(ctx, p.ResumeRunParams{RunID: id, ResumeOutcome: &accept, ResumePayload: p.Object{"interpretation": choice}})
			is.NoErr(err)
			done := settled(t, c, id)
			is.Equal(done.Status, "completed")
			text := reportText(done.Output)
			is.True(strings.Contains(text, "# Research Report: python ("+choice+")")) // the task went on with the answer
			is.True(strings.Contains(text, "After receiving clarification"))
		})
	}
}
