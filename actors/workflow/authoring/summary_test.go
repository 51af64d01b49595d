package authoring_test

import (
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/workflow"
	"github.com/mcpflow/mcpflow/actors/workflow/authoring"
)

func TestSummarizeReadsTheGraphFactsOfAnInvalidDraftToo(t *testing.T) {
	is := is.New(t)
	g := authoring.Summarize(workflow.Object{"name": "w", "steps": map[string]any{"b": map[string]any{}, "a": map[string]any{}},
		"routes": map[string]any{"a": map[string]any{"ok": "b", "error": "b"}, "b": "not a map"}})
	is.Equal(g.Name, "w")
	is.Equal(g.Start, nil)
	is.Equal(g.Steps, []string{"a", "b"})
	is.Equal(g.StepCount, 2)
	is.Equal(g.RouteCount, 2)
}
