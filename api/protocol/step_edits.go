package protocol

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Method names: the semantic step edits of draft workspaces.
const (
	MethodWorkspaceAddStep               = "workflow.draft_workspaces.add_step"
	MethodWorkspaceAddStepFromCapability = "workflow.draft_workspaces.add_step_from_capability"
	MethodWorkspaceBind                  = "workflow.draft_workspaces.bind"
	MethodWorkspaceBranch                = "workflow.draft_workspaces.branch"
	MethodWorkspaceHandle                = "workflow.draft_workspaces.handle"
	MethodWorkspaceUpdateCapabilityStep  = "workflow.draft_workspaces.update_capability_step"
)

// DraftEditResult answers the step edits: the manifest's
// DraftWorkspaceResult, plus advice on what to call next.
type DraftEditResult struct {
	WorkspaceResult
	NextActions NextActions `json:"next_actions"`
}

// RouteSource is one outcome of one step: where a route starts.
// Outcome is "ok" when empty.
type RouteSource struct {
	StepID  string `json:"step_id"`
	Outcome string `json:"outcome,omitempty"`
}

// AddStepParams are the params of workflow.draft_workspaces.add_step. Step
// is one draft step of any of the nine kinds, as JSON.
type AddStepParams struct {
	WorkspaceID string            `json:"workspace_id"`
	Revision    int               `json:"revision"`
	StepID      string            `json:"step_id"`
	Step        json.RawMessage   `json:"step"`
	Incoming    *RouteSource      `json:"incoming,omitempty"`
	Routes      map[string]string `json:"routes,omitempty"`
}

// AddStepFromCapabilityParams are the params of
// workflow.draft_workspaces.add_step_from_capability. InputMap (graph path
// to local target) and InputBindings are alternatives; BindOutputs maps a
// local output field to a state path. RouteFromOutcome is "ok" when nil.
type AddStepFromCapabilityParams struct {
	WorkspaceID      string            `json:"workspace_id"`
	Revision         int               `json:"revision"`
	StepID           string            `json:"step_id"`
	CapabilityName   string            `json:"capability_name"`
	RouteFromStep    *string           `json:"route_from_step,omitempty"`
	RouteFromOutcome *string           `json:"route_from_outcome,omitempty"`
	Routes           map[string]string `json:"routes,omitempty"`
	InputMap         map[string]string `json:"input_map,omitempty"`
	InputBindings    []InputBinding    `json:"input_bindings,omitempty"`
	BindOutputs      map[string]string `json:"bind_outputs,omitempty"`
	Desc             *string           `json:"desc,omitempty"`
	Retry            *int              `json:"retry,omitempty"`
	TimeoutSeconds   *int              `json:"timeout_seconds,omitempty"`
}

// BindParams are the params of workflow.draft_workspaces.bind.
type BindParams struct {
	WorkspaceID string `json:"workspace_id"`
	Revision    int    `json:"revision"`
	StepID      string `json:"step_id"`
	SourcePath  string `json:"source_path"`
	TargetPath  string `json:"target_path"`
}

// BranchParams are the params of workflow.draft_workspaces.branch.
type BranchParams struct {
	WorkspaceID string            `json:"workspace_id"`
	Revision    int               `json:"revision"`
	StepID      string            `json:"step_id"`
	Routes      map[string]string `json:"routes"`
}

// HandleBranch is one (step, outcome) pair of workflow.draft_workspaces.handle.
type HandleBranch struct {
	StepID  string `json:"step_id"`
	Outcome string `json:"outcome"`
}

// HandleParams are the params of workflow.draft_workspaces.handle.
type HandleParams struct {
	WorkspaceID string         `json:"workspace_id"`
	Revision    int            `json:"revision"`
	Branches    []HandleBranch `json:"branches"`
	Target      string         `json:"target"`
}

// UpdateCapabilityStepParams are the params of
// workflow.draft_workspaces.update_capability_step.
type UpdateCapabilityStepParams struct {
	WorkspaceID string               `json:"workspace_id"`
	Revision    int                  `json:"revision"`
	StepID      string               `json:"step_id"`
	Update      CapabilityStepUpdate `json:"update"`
}

// Field is one field of a presence-aware patch: Set when the key was
// given, with Value nil when it was given as null (which clears it).
type Field[T any] struct {
	Set   bool
	Value *T
}

// Put is a field set to v; Clear is a field given as null.
func Put[T any](v T) Field[T] { return Field[T]{Set: true, Value: &v} }
func Clear[T any]() Field[T]  { return Field[T]{Set: true} }

// CapabilityStepUpdate is the manifest's CapabilityStepUpdate: a
// presence-aware patch of one use step. An omitted field keeps its value;
// desc, retry or timeout_seconds given as null are removed; input replaces
// the step's input bindings (null is refused).
type CapabilityStepUpdate struct {
	Desc           Field[string]
	Retry          Field[int]
	TimeoutSeconds Field[int]
	Input          Field[[]InputBinding]
}

// MarshalJSON writes the fields that are set, null for a cleared one.
func (u CapabilityStepUpdate) MarshalJSON() ([]byte, error) {
	out := map[string]any{}
	put := func(key string, set bool, v any) {
		if set {
			out[key] = v
		}
	}
	put("desc", u.Desc.Set, u.Desc.Value)
	put("retry", u.Retry.Set, u.Retry.Value)
	put("timeout_seconds", u.TimeoutSeconds.Set, u.TimeoutSeconds.Value)
	put("input", u.Input.Set, u.Input.Value)
	return json.Marshal(out)
}

// UnmarshalJSON reads which fields were given; unknown keys are errors.
func (u *CapabilityStepUpdate) UnmarshalJSON(data []byte) error {
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(data, &keys); err != nil {
		return err
	}
	if keys == nil {
		return fmt.Errorf("update must be an object")
	}
	*u = CapabilityStepUpdate{}
	for key, raw := range keys {
		var err error
		switch key {
		case "desc":
			u.Desc, err = decodeField[string](raw)
		case "retry":
			u.Retry, err = decodeField[int](raw)
		case "timeout_seconds":
			u.TimeoutSeconds, err = decodeField[int](raw)
		case "input":
			u.Input, err = decodeField[[]InputBinding](raw)
		default:
			return fmt.Errorf("update has no field %q", key)
		}
		if err != nil {
			return fmt.Errorf("update.%s: %w", key, err)
		}
	}
	return nil
}

func decodeField[T any](raw json.RawMessage) (Field[T], error) {
	if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return Clear[T](), nil
	}
	var v T
	if err := json.Unmarshal(raw, &v); err != nil {
		return Field[T]{}, err
	}
	return Put(v), nil
}
