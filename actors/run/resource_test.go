package run_test

import (
	"testing"
	"time"

	"github.com/anthdm/hollywood/actor"
	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/reply"
	"github.com/mcpflow/mcpflow/actors/run"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/workflow"
	"github.com/mcpflow/mcpflow/fakes"
)

// readPlan reads fakes.GreetingURI of logical source "docs" into state.text.
func readPlan(maxChars int) workflow.Plan {
	return workflow.Plan{
		Name: "read", Start: "read", Outcomes: []string{"ok"},
		OutputSchema: workflow.Object{"type": "object", "properties": workflow.Object{"text": workflow.Object{}, "truncated": workflow.Object{}}},
		Nodes: []workflow.Node{{ID: "read", Type: workflow.NodeCall, Node: workflow.ReadResource, Input: []workflow.InputBinding{
			workflow.ValueBinding("ref", map[string]any{"kind": "source_resource_ref", "logical_source": "docs", "uri": fakes.GreetingURI}),
			workflow.ValueBinding("max_chars", maxChars),
		}, Output: []workflow.OutputBinding{workflow.OutputTo("text", "state.text"), workflow.OutputTo("truncated", "state.truncated")}}},
		Edges: []workflow.Edge{{From: "read", Outcome: "ok", To: workflow.End}},
	}
}

func TestReadResourceReadsThroughTheBoundSourcesSession(t *testing.T) {
	for _, tc := range []struct {
		name      string
		maxChars  int
		want      string
		truncated bool
	}{
		{"whole", 4000, fakes.Greeting, false},
		{"truncated", 5, fakes.Greeting[:5], true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			w := newWorld(t)
			plan := readPlan(tc.maxChars)
			prog := workflow.Program{Root: plan}
			targets, err := run.Resolve(prog, nil, func(c string) bool { return c == "fake.one" })
			is.NoErr(err)
			is.Equal(targets[workflow.ReadResource], run.Target{Resource: true})
			done := reply.Expect[run.Stopped](w.replies)
			now := time.Now().UTC()
			w.engine.Spawn(run.New(run.Spec{
				Record:  store.Run{ID: "run-read", Status: store.RunRunning, CreatedAt: now, UpdatedAt: now},
				Program: prog, Targets: targets,
				Sources:    func(logical string) (string, bool) { return "fake.one", logical == "docs" },
				Supervisor: w.sup.PID(), Lines: w.sup.Lines(), Store: w.store,
				CallTimeout: 2 * time.Second, StoreTimeout: 2 * time.Second, Done: done.To(),
			}), "run", actor.WithID("run-read"))
			stopped, err := done.Wait(wait(t))
			final := stopped.Run
			is.NoErr(err)
			if final.Status != store.RunCompleted {
				t.Logf("run failed: %v", *final.Error)
			}
			is.Equal(final.Status, store.RunCompleted)
			is.Equal(final.Output, workflow.Object{"text": tc.want, "truncated": tc.truncated})
			is.Equal(len(w.rec.ToolCalls()), 0) // a read, not a tool call
			trace, err := w.store.ReadTrace(wait(t), "run-read", 0, 0)
			is.NoErr(err)
			is.Equal(trace[0].Generation, int64(1)) // the read's entry names its session
			is.Equal(final.Sessions[0].Connection, "fake.one")
		})
	}
}
