package authoring_test

import (
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/catalog"
	"github.com/mcpflow/mcpflow/actors/workflow"
	"github.com/mcpflow/mcpflow/actors/workflow/authoring"
)

func TestCompileAnswersAPlanOnlyWhenNothingBlocks(t *testing.T) {
	is := is.New(t)
	plan, diags, err := authoring.Compile(withBoundFetch(t), find)
	is.NoErr(err)
	is.Equal(len(workflow.Blocking(diags)), 0)
	is.True(plan != nil)
	is.Equal(plan.Start, "get")

	plan, diags, err = authoring.Compile(emptyDraft(t), find) // no start step yet
	is.NoErr(err)
	is.True(plan == nil)
	is.True(len(workflow.Blocking(diags)) > 0)
}

func TestCheckValidatesAgainstTheCapabilitiesItIsGiven(t *testing.T) {
	is := is.New(t)
	_, diags := authoring.Check(withBoundFetch(t), find)
	is.Equal(len(workflow.Blocking(diags)), 0)
	none := func(string) (catalog.Capability, bool) { return catalog.Capability{}, false }
	_, diags = authoring.Check(withBoundFetch(t), none) // the capability is gone
	is.Equal(workflow.Blocking(diags)[0].Code, "unknown_node_def")
}

// withBoundFetch is withFetch with fetch's required url bound from
// input.url: a draft with nothing to repair.
func withBoundFetch(t *testing.T) workflow.Object {
	t.Helper()
	doc, err := authoring.Bind(withFetch(t), authoring.BindParams{StepID: "get", SourcePath: "input.url", TargetPath: "local.url"}, find)
	is.New(t).NoErr(err)
	return doc
}

// TestCheckFindsARequiredInputLeftUnbound is issue 29's first validation
// mistake: fetch requires url, and the step binds nothing to it.
func TestCheckFindsARequiredInputLeftUnbound(t *testing.T) {
	is := is.New(t)
	_, diags := authoring.Check(withFetch(t), find)
	blocking := workflow.Blocking(diags)
	is.Equal(len(blocking), 1)
	is.Equal(blocking[0].Code, "required_input_unbound")
	is.Equal(blocking[0].Path, "steps.get.input")
	is.True(blocking[0].RepairHint != nil) // with how to repair it
}
