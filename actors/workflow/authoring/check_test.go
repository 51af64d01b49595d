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
	plan, diags, err := authoring.Compile(withFetch(t), find)
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
	_, diags := authoring.Check(withFetch(t), find)
	is.Equal(len(workflow.Blocking(diags)), 0)
	none := func(string) (catalog.Capability, bool) { return catalog.Capability{}, false }
	_, diags = authoring.Check(withFetch(t), none) // the capability is gone
	is.Equal(workflow.Blocking(diags)[0].Code, "unknown_node_def")
}
