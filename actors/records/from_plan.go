package records

import (
	"cmp"
	"context"

	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/workflow"
)

// Header names and describes the artifact made from a plan, and says how
// its sources and requirements are to be read.
type Header struct {
	ID          string
	Version     int
	Title       string
	Kind        string // KindWorkflow when empty
	Description *string
	Outcomes    []string
	// SourceBindings are {logical: concrete}: the plan's refs to a
	// concrete source are rewritten to the logical one.
	SourceBindings map[string]string
	// RequiredCapabilities, when not nil, are the requirements as given,
	// keyed by name; else they are observed from the catalog.
	RequiredCapabilities      map[string]workflow.Object
	CreatedFromCatalogVersion *string
}

// FromPlan makes the artifact of a compiled or decoded plan, as a draft's
// create_artifact and create_from_plan do, and saves it (Save): its
// outcomes must cover the plan's ends, its refs are rewritten to logical
// sources, its requirements recorded, its schemas the plan's.
func FromPlan(ctx context.Context, st store.Store, h Header, plan workflow.Plan, seen Observed) (store.Artifact, error) {
	if err := CheckOutcomes(plan, h.Outcomes); err != nil {
		return store.Artifact{}, err
	}
	RewriteToLogical(&plan, h.SourceBindings)
	required, err := Requirements(plan, h.SourceBindings, h.RequiredCapabilities, seen)
	if err != nil {
		return store.Artifact{}, err
	}
	a := store.Artifact{
		ID: h.ID, Version: h.Version, Title: h.Title, Kind: cmp.Or(h.Kind, KindWorkflow), Description: h.Description,
		InputSchema: orEmpty(plan.InputSchema), OutputSchema: orEmpty(plan.OutputSchema), Outcomes: h.Outcomes,
		Plan: plan, RequiredCapabilities: required, WorkflowDependencies: map[string]int{},
		CreatedFromCatalogVersion: h.CreatedFromCatalogVersion,
	}
	return a, Save(ctx, st, a)
}
