package records

import (
	"encoding/json"

	"github.com/mcpflow/mcpflow/actors/jsonconv"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/workflow"
	"github.com/mcpflow/mcpflow/actors/workflow/authoring"
)

// artifactDoc is the accepted form of a whole artifact: what
// workflow.artifacts.inspect answers. Kind defaults to "workflow", the
// schemas to the plan's, required_capabilities may be a list or a map
// keyed by "<source>.<capability_key>", and unknown keys are refused.
type artifactDoc struct {
	ID                        string          `json:"id"`
	Version                   int             `json:"version"`
	Title                     string          `json:"title"`
	Kind                      *string         `json:"kind"`
	Description               *string         `json:"description"`
	InputSchema               workflow.Object `json:"input_schema"`
	OutputSchema              workflow.Object `json:"output_schema"`
	Outcomes                  []string        `json:"outcomes"`
	Plan                      workflow.Object `json:"plan"`
	RequiredCapabilities      json.RawMessage `json:"required_capabilities"`
	WorkflowDependencies      map[string]int  `json:"workflow_dependencies"`
	CreatedFromCatalogVersion *string         `json:"created_from_catalog_version"`
}

// ParseArtifact decodes a whole artifact strictly: a wrong type, a missing
// key or an unknown key is invalid params, as the reference's model
// validation is.
func ParseArtifact(doc map[string]any) (store.Artifact, error) {
	if doc == nil {
		return store.Artifact{}, malformed("artifact must be a JSON object")
	}
	var in artifactDoc
	if err := jsonconv.Strict(doc, &in); err != nil {
		return store.Artifact{}, malformed("artifact: %v", err)
	}
	if err := CheckID("artifact id", in.ID); err != nil {
		return store.Artifact{}, err
	}
	kind := KindWorkflow
	if in.Kind != nil && *in.Kind != "" {
		kind = *in.Kind
	}
	switch {
	case in.Version < 1:
		return store.Artifact{}, malformed("artifact version must be 1 or more, not %d", in.Version)
	case in.Title == "":
		return store.Artifact{}, malformed("artifact title must not be empty")
	case in.Plan == nil:
		return store.Artifact{}, malformed("artifact plan must be a JSON object")
	case in.Outcomes == nil:
		return store.Artifact{}, malformed("artifact outcomes are required")
	case kind != KindWorkflow && kind != KindWrapper:
		return store.Artifact{}, malformed("artifact kind is %q or %q, not %q", KindWorkflow, KindWrapper, kind)
	}
	for child, version := range in.WorkflowDependencies {
		if version < 1 {
			return store.Artifact{}, malformed("workflow_dependencies[%q] must be a version of 1 or more", child)
		}
	}
	plan, err := authoring.DecodePlan(in.Plan)
	if err != nil {
		return store.Artifact{}, err
	}
	required, err := ParseRequirements(in.RequiredCapabilities)
	if err != nil {
		return store.Artifact{}, err
	}
	a := store.Artifact{
		ID: in.ID, Version: in.Version, Title: in.Title, Kind: kind, Description: in.Description,
		InputSchema: in.InputSchema, OutputSchema: in.OutputSchema, Outcomes: in.Outcomes, Plan: plan,
		RequiredCapabilities: required, WorkflowDependencies: in.WorkflowDependencies,
		CreatedFromCatalogVersion: in.CreatedFromCatalogVersion,
	}
	if a.InputSchema == nil {
		a.InputSchema = orEmpty(plan.InputSchema)
	}
	if a.OutputSchema == nil {
		a.OutputSchema = orEmpty(plan.OutputSchema)
	}
	if a.WorkflowDependencies == nil {
		a.WorkflowDependencies = map[string]int{}
	}
	return a, nil
}

// orEmpty is o, or an empty object for nil.
func orEmpty(o workflow.Object) workflow.Object {
	if o == nil {
		return workflow.Object{}
	}
	return o
}
