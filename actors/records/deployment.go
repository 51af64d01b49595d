package records

import (
	"bytes"
	"encoding/json"
	"sort"

	"github.com/mcpflow/mcpflow/actors/jsonconv"
	"github.com/mcpflow/mcpflow/actors/store"
)

// deploymentDoc is the accepted input form of a deployment: "id" or
// "deployment_id", bindings as a list or a {logical: concrete} map.
type deploymentDoc struct {
	ID              string             `json:"id"`
	DeploymentID    string             `json:"deployment_id"`
	ArtifactID      string             `json:"artifact_id"`
	ArtifactVersion int                `json:"artifact_version"`
	Bindings        json.RawMessage    `json:"bindings"`
	DriftPolicy     string             `json:"drift_policy"`
	Limits          *store.RunLimits   `json:"limits"`
	Retention       *store.Retention   `json:"retention"`
	MCP             *store.MCPExposure `json:"mcp"`
}

// ParseDeployment decodes a deployment document strictly: a wrong
// type, a missing or unknown key, a bad limit, id, drift policy or
// binding is malformed.
func ParseDeployment(doc map[string]any) (store.Deployment, error) {
	var in deploymentDoc
	if err := jsonconv.Strict(doc, &in); err != nil {
		return store.Deployment{}, malformed("deployment: %v", err)
	}
	d := store.Deployment{ID: in.ID, ArtifactID: in.ArtifactID, ArtifactVersion: in.ArtifactVersion, DriftPolicy: in.DriftPolicy, Limits: in.Limits, Retention: in.Retention, MCP: in.MCP}
	if l := in.Limits; l != nil && (l.MaxSteps != nil && *l.MaxSteps < 1 || l.RunTimeoutSeconds != nil && *l.RunTimeoutSeconds < 1) {
		return d, malformed("deployment limits: max_steps and run_timeout_seconds are at least 1")
	}
	if r := in.Retention; r != nil && r.FinishedSeconds != nil && *r.FinishedSeconds < 0 {
		return d, malformed("deployment retention: finished_seconds is at least 0 (0 keeps the runs for ever)")
	}
	switch {
	case in.ID != "" && in.DeploymentID != "":
		return d, malformed("deployment: give id or deployment_id, not both")
	case in.ID == "":
		d.ID = in.DeploymentID
	}
	if err := CheckID("deployment id", d.ID); err != nil {
		return d, err
	}
	if in.ArtifactID == "" || in.ArtifactVersion < 1 {
		return d, malformed("deployment needs artifact_id and artifact_version >= 1")
	}
	switch d.DriftPolicy {
	case "":
		d.DriftPolicy = "block"
	case "block", "warn", "allow":
	default:
		return d, malformed("drift_policy must be block, warn or allow, got %q", d.DriftPolicy)
	}
	bindings, err := parseBindings(in.Bindings)
	if err != nil {
		return d, err
	}
	d.Bindings = bindings
	return d, nil
}

// parseBindings accepts a list of {logical_source, concrete_source} or a
// {logical: concrete} map; duplicate logical sources are rejected.
func parseBindings(raw json.RawMessage) ([]store.Binding, error) {
	var list []store.Binding
	trimmed := bytes.TrimSpace(raw)
	switch {
	case len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")):
	case trimmed[0] == '{':
		var m map[string]string
		if err := json.Unmarshal(trimmed, &m); err != nil {
			return nil, malformed("deployment bindings: %v", err)
		}
		for logical, concrete := range m {
			list = append(list, store.Binding{LogicalSource: logical, ConcreteSource: concrete})
		}
		sort.Slice(list, func(i, j int) bool { return list[i].LogicalSource < list[j].LogicalSource })
	default:
		dec := json.NewDecoder(bytes.NewReader(trimmed))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&list); err != nil {
			return nil, malformed("deployment bindings: %v", err)
		}
	}
	seen := map[string]bool{}
	sessions := map[string]string{} // by concrete source
	onReplaced := map[string]string{}
	for _, b := range list {
		if b.LogicalSource == "" || b.ConcreteSource == "" {
			return nil, malformed("a binding needs logical_source and concrete_source")
		}
		if seen[b.LogicalSource] {
			return nil, malformed("logical source %q is bound twice", b.LogicalSource)
		}
		seen[b.LogicalSource] = true
		session := sessionOf(b)
		switch session {
		case store.SessionShared, store.SessionDeployment, store.SessionRun:
		default:
			return nil, malformed("binding of logical source %q: session must be shared, deployment or run, got %q", b.LogicalSource, b.Session)
		}
		switch b.Task {
		case "", store.TaskAuto, store.TaskAlways:
		default:
			return nil, malformed("binding of logical source %q: task must be auto or always, got %q", b.LogicalSource, b.Task)
		}
		if other, ok := sessions[b.ConcreteSource]; ok && other != session {
			return nil, malformed("connection %q is bound with session %q and %q; the bindings of one connection must ask for the same session", b.ConcreteSource, other, session)
		}
		sessions[b.ConcreteSource] = session
		on := onReplacedOf(b)
		switch on {
		case store.OnReplacedContinue, store.OnReplacedFail:
		default:
			return nil, malformed("binding of logical source %q: on_session_replaced must be continue or fail, got %q", b.LogicalSource, b.OnSessionReplaced)
		}
		if other, ok := onReplaced[b.ConcreteSource]; ok && other != on {
			return nil, malformed("connection %q is bound with on_session_replaced %q and %q; the bindings of one connection must ask for the same", b.ConcreteSource, other, on)
		}
		onReplaced[b.ConcreteSource] = on
	}
	if list == nil {
		list = []store.Binding{}
	}
	return list, nil
}

// onReplacedOf is what a binding asks a run to do when its session is
// replaced; absent is continue.
func onReplacedOf(b store.Binding) string {
	if b.OnSessionReplaced == "" {
		return store.OnReplacedContinue
	}
	return b.OnSessionReplaced
}

// sessionOf is the session scope a binding asks for; absent is shared.
func sessionOf(b store.Binding) string {
	if b.Session == "" {
		return store.SessionShared
	}
	return b.Session
}
