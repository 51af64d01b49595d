package records

import (
	"context"
	"testing"
	"time"

	"github.com/mcpflow/mcpflow/actors/store"
)

// bounded is a context that ends with the test, or after ten seconds.
func bounded(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// artifactA is a version that nothing uses: a@1, with no plan.
var artifactA = store.Artifact{ID: "a", Version: 1, Title: "A", Kind: KindWorkflow, Outcomes: []string{"ok"}, WorkflowDependencies: map[string]int{}}
