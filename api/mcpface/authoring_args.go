package mcpface

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/mcpflow/mcpflow/actors/workflow/std"
	"github.com/mcpflow/mcpflow/api/protocol"
)

// The arguments of an authoring tool's call, and how an operation makes
// of them its method's params where their shape is not the method's: a
// step as {kind, spec}, after as the route into it, a deployment from
// flat arguments, the reducers' source.

// arguments are a tool call's arguments, each as the JSON it was given.
type arguments map[string]json.RawMessage

// given picks a variant where the argument key is given (and not null).
func given(key string) func(arguments) bool {
	return func(a arguments) bool { return a.has(key) }
}

func (a arguments) has(key string) bool {
	v, ok := a[key]
	return ok && string(v) != "null"
}

// str is the string argument key ("" where absent or not a string).
func (a arguments) str(key string) string {
	var s string
	_ = json.Unmarshal(a[key], &s)
	return s
}

// without is a copy of a less keys.
func (a arguments) without(keys ...string) arguments {
	out := make(arguments, len(a))
	for k, v := range a {
		if !slices.Contains(keys, k) {
			out[k] = v
		}
	}
	return out
}

// reducersParams are sources.inspect's for the source of the built-in
// reducers.
func reducersParams(a arguments) (arguments, error) {
	if err := a.refuse("reducers", "query", "source_id", "limit", "cursor", "qualified_name"); err != nil {
		return nil, err
	}
	return arguments{"source_id": mustJSON(std.StdSource)}, nil
}

// reducersView is the reducers of a sources.inspect result: each one's
// name and what it does.
func reducersView(result json.RawMessage) (json.RawMessage, error) {
	var src protocol.InspectSourceResult
	if err := json.Unmarshal(result, &src); err != nil {
		return nil, fmt.Errorf("read the reducers: %w", err)
	}
	type reducer struct {
		Name        string  `json:"name"`
		Description *string `json:"description"`
	}
	out := []reducer{}
	for _, r := range src.Capabilities.ReducerDetails {
		out = append(out, reducer{r.Name, r.Description})
	}
	return mustJSON(map[string]any{"reducers": out}), nil
}

// kindIs picks a variant where the kind argument is k.
func kindIs(k string) func(arguments) bool {
	return func(a arguments) bool { return a.str("kind") == k }
}

// The arguments of the step tool that are not the method's params.
var stepOwn = []string{"op", "kind", "spec", "after"}

// spec is the spec argument as an object ({} where absent).
func (a arguments) spec() (arguments, error) {
	out := arguments{}
	if !a.has("spec") {
		return out, nil
	}
	if err := json.Unmarshal(a["spec"], &out); err != nil {
		return nil, fmt.Errorf("spec must be an object: %w", err)
	}
	return out, nil
}

// refuse is an error where any of keys is given: an argument the
// operation does not take is said, never dropped.
func (a arguments) refuse(op string, keys ...string) error {
	for _, k := range keys {
		if a.has(k) {
			return fmt.Errorf("%s does not take %s", op, k)
		}
	}
	return nil
}

// addUseParams are add_step_from_capability's: the spec's fields beside
// the step's id, routes and revision; after is route_from_step and
// route_from_outcome.
func addUseParams(a arguments) (arguments, error) {
	spec, err := a.spec()
	if err != nil {
		return nil, err
	}
	out := a.without(stepOwn...)
	for k, v := range spec {
		out[k] = v
	}
	if a.has("after") {
		var after protocol.RouteSource
		if err := json.Unmarshal(a["after"], &after); err != nil {
			return nil, fmt.Errorf("after: %w", err)
		}
		out["route_from_step"] = mustJSON(after.StepID)
		if after.Outcome != "" {
			out["route_from_outcome"] = mustJSON(after.Outcome)
		}
	}
	return out, nil
}

// addStepParams are add_step's: the step is {kind: spec}; after is
// incoming.
func addStepParams(a arguments) (arguments, error) {
	step, err := kindStep(a)
	if err != nil {
		return nil, err
	}
	out := a.without(stepOwn...)
	out["step"] = step
	if a.has("after") {
		out["incoming"] = a["after"]
	}
	return out, nil
}

// kindStep is the step {kind: spec} (spec {} where absent).
func kindStep(a arguments) (json.RawMessage, error) {
	kind := a.str("kind")
	if !slices.Contains(stepKinds, any(kind)) {
		return nil, fmt.Errorf("kind must be one of %v", stepKinds)
	}
	spec := json.RawMessage("{}")
	if a.has("spec") {
		spec = a["spec"]
	}
	return mustJSON(map[string]json.RawMessage{kind: spec}), nil
}

// updateUseParams are update_capability_step's: the spec is the update.
func updateUseParams(a arguments) (arguments, error) {
	if err := a.refuse("update", "routes", "after"); err != nil {
		return nil, fmt.Errorf("%w: route with %s", err, toolDraftRoute)
	}
	out := a.without(stepOwn...)
	out["update"] = json.RawMessage("{}")
	if a.has("spec") {
		out["update"] = a["spec"]
	}
	return out, nil
}

// replaceStepParams update a step of another kind: a patch that replaces
// the step with {kind: spec}, as workflow.draft_workspaces.patch applies
// and checks it.
func replaceStepParams(a arguments) (arguments, error) {
	if err := a.refuse("update", "routes", "after"); err != nil {
		return nil, fmt.Errorf("%w: route with %s", err, toolDraftRoute)
	}
	step, err := kindStep(a)
	if err != nil {
		return nil, err
	}
	out := a.without(append(stepOwn, "step_id")...)
	out["patch"] = mustJSON([]any{map[string]any{"op": "replace", "path": "/steps/" + pointerToken(a.str("step_id")), "value": step}})
	return out, nil
}

func removeStepParams(a arguments) (arguments, error) {
	if err := a.refuse("remove", "kind", "spec", "routes", "after"); err != nil {
		return nil, err
	}
	return a.without("op"), nil
}

// pointerToken escapes a JSON Pointer reference token (RFC 6901).
func pointerToken(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// deployParams are deployments.save's: the deployment given whole, or
// one made of artifact_id, artifact_version, bindings and deployment_id
// (<artifact_id>.default, the id `mcpflow deploy` gives, when omitted).
func deployParams(a arguments) (arguments, error) {
	if a.has("deployment") {
		if err := a.refuse("deploy with a deployment", "artifact_id", "artifact_version", "bindings", "deployment_id"); err != nil {
			return nil, err
		}
		return a.without("op"), nil
	}
	var flat struct {
		ArtifactID      string            `json:"artifact_id"`
		ArtifactVersion int               `json:"artifact_version"`
		Bindings        map[string]string `json:"bindings"`
		DeploymentID    string            `json:"deployment_id"`
	}
	if err := json.Unmarshal(mustJSON(a.without("op", "dry_run")), &flat); err != nil {
		return nil, fmt.Errorf("deploy: %w", err)
	}
	if flat.ArtifactID == "" || flat.ArtifactVersion < 1 {
		return nil, fmt.Errorf("deploy takes artifact_id and artifact_version (or a whole deployment)")
	}
	if flat.DeploymentID == "" {
		flat.DeploymentID = flat.ArtifactID + ".default"
	}
	bindings := []protocol.Binding{}
	for _, logical := range slices.Sorted(maps.Keys(flat.Bindings)) {
		bindings = append(bindings, protocol.Binding{LogicalSource: logical, ConcreteSource: flat.Bindings[logical]})
	}
	out := arguments{"deployment": mustJSON(map[string]any{
		"id": flat.DeploymentID, "artifact_id": flat.ArtifactID, "artifact_version": flat.ArtifactVersion, "bindings": bindings,
	})}
	if a.has("dry_run") {
		out["dry_run"] = a["dry_run"]
	}
	return out, nil
}

// mustJSON is v as JSON; v is always of JSON values.
func mustJSON(v any) json.RawMessage {
	raw, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("mcpface: encode %T: %v", v, err))
	}
	return raw
}
