package integration

// server-everything's trigger-sampling-request behind the real mcpflow
// binary, with the source's "sampling": "interrupt": the run is
// interrupted with the request's messages, and its resume's message is
// the server's result. (With "refuse", mcpflow declares no sampling, and
// the server does not offer the tool: actors/run's
// TestARefusedSamplingRequestFailsTheStepSayingHowToTakeIt tests the
// refusal with a fake server that asks regardless.)

import (
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/config"
	p "github.com/mcpflow/mcpflow/api/protocol"
)

func TestServerEverythingSamplesThroughTheRun(t *testing.T) {
	t.Parallel() // its own mcpflow and upstream: see parallelTests
	for _, tc := range everythingTransports {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			conn := "sample" + tc.name + ".default"
			c := serveEverything(t, tc, conn, &config.Client{Sampling: config.PolicyInterrupt})
			ctx := testContext(t)
			sample := buildToolDeployment(t, c, conn, "trigger-sampling-request", "sample_"+tc.name)

			id := startInterruptedWith(t, c, sample, p.Object{"prompt": "the capital of France?"})
			r, err := c.InspectRun(ctx, id)
			is.NoErr(err)
			is.Equal(r.Interrupt["kind"], "sampling")
			is.Equal(r.Interrupt["outcomes"], []any{"accept", "decline"})
			payload, _ := r.Interrupt["payload"].(map[string]any)
			is.Equal(payload["connection"], conn)
			messages, _ := payload["messages"].([]any)
			is.Equal(len(messages), 1) // the request's messages: the prompt
			first, _ := messages[0].(map[string]any)
			content, _ := first["content"].(map[string]any)
			is.Equal(content["text"], "Resource trigger-sampling-request context: the capital of France?")
			is.Equal(payload["systemPrompt"], "You are a helpful test server.") // and its preferences

			accept := "accept"
			_, err = c.ResumeRun(ctx, p.ResumeRunParams{RunID: id, ResumeOutcome: &accept, ResumePayload: p.Object{
				"role": "assistant", "content": p.Object{"type": "text", "text": "Paris"}, "model": "mcpflow-test-model"}})
			is.NoErr(err)
			done := settled(t, c, id)
			is.Equal(done.Status, "completed")
			text := outputText(done.Output)
			is.True(strings.Contains(text, `"text": "Paris"`))               // the answered message reached the server's result
			is.True(strings.Contains(text, `"model": "mcpflow-test-model"`)) // with its model
		})
	}
}
