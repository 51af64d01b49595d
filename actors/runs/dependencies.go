package runs

import (
	"fmt"

	"github.com/mcpflow/mcpflow/actors/catalog"
	"github.com/mcpflow/mcpflow/actors/sources"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/workflow"
)

// Diagnostic is one finding of a deployment's dependency check; a run
// record keeps its deployment's as JSON objects of this shape.
type Diagnostic struct {
	Severity    string  `json:"severity"` // error | warning
	Code        string  `json:"code"`
	LogicalRef  string  `json:"logical_ref"`
	BoundSource *string `json:"bound_source"`
	Message     string  `json:"message"`
	RepairHint  *string `json:"repair_hint"`
}

// DiagError is an error-severity diagnostic.
func DiagError(code, ref string, bound *string, message, hint string) Diagnostic {
	return Diagnostic{Severity: "error", Code: code, LogicalRef: ref, BoundSource: bound, Message: message, RepairHint: &hint}
}

// FirstError is the first error-severity diagnostic, if any.
func FirstError(diags []Diagnostic) (Diagnostic, bool) {
	for _, d := range diags {
		if d.Severity == "error" {
			return d, true
		}
	}
	return Diagnostic{}, false
}

// Dependencies validates an artifact's requirements against the
// deployment's bindings and the live catalogs, and warns of a
// limits.max_steps above the step ceiling (stepsClamped). Unlike the
// reference system, only error diagnostics make a deployment unrunnable;
// warnings inform.
func (m *Manager) Dependencies(d store.Deployment, a store.Artifact) []Diagnostic {
	bound := map[string]string{}
	diags := []Diagnostic{}
	if clamped := m.stepsClamped(d); clamped != nil {
		diags = append(diags, *clamped)
	}
	for _, b := range d.Bindings {
		bound[b.LogicalSource] = b.ConcreteSource
		if b.LogicalSource == workflow.PlatformSource && b.ConcreteSource != b.LogicalSource {
			diags = append(diags, DiagError("platform_binding_forbidden", b.LogicalSource, &b.ConcreteSource, "the platform source cannot be rebound", "remove this binding"))
		}
	}
	for _, req := range a.RequiredCapabilities {
		ref := req.Ref.Source + "." + req.Ref.CapabilityKey
		if req.Ref.Source == workflow.PlatformSource {
			continue
		}
		concrete, ok := bound[req.Ref.Source]
		if !ok {
			diags = append(diags, DiagError("binding_missing", ref, nil, fmt.Sprintf("logical source %q is not bound", req.Ref.Source), fmt.Sprintf("bind %q to a configured connection", req.Ref.Source)))
			continue
		}
		conn, ok := m.cfg.Connections.Get(concrete)
		switch {
		case !ok:
			diags = append(diags, DiagError("source_missing", ref, &concrete, fmt.Sprintf("connection %q is not configured", concrete), "bind to a configured connection"))
			continue
		case !conn.IsEnabled():
			diags = append(diags, DiagError("source_disabled", ref, &concrete, fmt.Sprintf("connection %q is disabled", concrete), "enable the connection"))
			continue
		case !m.catalogued(concrete):
			diags = append(diags, Diagnostic{Severity: "warning", Code: "catalog_missing", LogicalRef: ref, BoundSource: &concrete,
				Message: fmt.Sprintf("connection %q has no catalog yet, so %q cannot be checked", concrete, req.Ref.CapabilityKey), RepairHint: ptr("call workflow.admin.connections.refresh_catalog")})
			continue
		}
		live, ok := m.findCapability(concrete + "." + req.Ref.CapabilityKey)
		if !ok {
			diags = append(diags, DiagError("capability_missing", ref, &concrete, fmt.Sprintf("connection %q has no tool %q", concrete, req.Ref.CapabilityKey), "refresh the catalog or bind another connection"))
			continue
		}
		if drift := schemaDrift(req, live.InputSchema, live.OutputSchema, d.DriftPolicy, ref, concrete); drift != nil {
			diags = append(diags, *drift)
		}
		diags = append(diags, unboundRequired(a.Plan, ref, concrete, live.InputSchema)...)
	}
	return diags
}

// findCapability finds a capability by its qualified name: a built-in,
// or a tool of an enabled connection (sources.Capabilities).
func (m *Manager) findCapability(name string) (catalog.Capability, bool) {
	return sources.Capabilities{Catalogs: m.cfg.Catalogs, Connections: m.cfg.Connections}.Find(name)
}

// catalogued reports whether a connection has a catalog snapshot.
func (m *Manager) catalogued(connectionID string) bool {
	_, ok := m.cfg.Catalogs.Get(connectionID)
	return ok
}

// schemaDrift compares a requirement's saved schema hashes with the live
// ones. The drift policy sets the severity: block is an error, warn a
// warning, allow reports nothing.
func schemaDrift(req store.RequiredCapability, in, out workflow.Object, policy, ref, concrete string) *Diagnostic {
	if policy == "allow" {
		return nil
	}
	changed := func(saved *string, live workflow.Object) bool {
		if saved == nil {
			return false
		}
		h, err := catalog.SchemaHash(live)
		return err == nil && h != *saved
	}
	if !changed(req.InputSchemaHash, in) && !changed(req.OutputSchemaHash, out) {
		return nil
	}
	severity := "error"
	if policy == "warn" {
		severity = "warning"
	}
	return &Diagnostic{Severity: severity, Code: "schema_changed", LogicalRef: ref, BoundSource: &concrete,
		Message:    fmt.Sprintf("the schema of %q changed since the artifact was saved", ref),
		RepairHint: ptr("save a new artifact version against the current catalog, or set drift_policy to warn")}
}

// storedDiags are diagnostics as a run record keeps them: JSON objects.
func storedDiags(diags []Diagnostic) ([]workflow.Object, error) {
	stored := make([]workflow.Object, 0, len(diags))
	for _, dg := range diags {
		obj, err := toObject(dg)
		if err != nil {
			return nil, err
		}
		stored = append(stored, obj)
	}
	return stored, nil
}

// toObject turns a value into a fresh JSON object, through its JSON.
func toObject(v any) (workflow.Object, error) {
	var obj workflow.Object
	if err := viaJSON(v, &obj); err != nil {
		return nil, fmt.Errorf("document as a JSON object: %w", err)
	}
	if obj == nil {
		obj = workflow.Object{}
	}
	return obj, nil
}

func ptr[T any](v T) *T { return &v }

// PlanWarnings are the warnings of an artifact's own plan (structure
// only, workflow.CheckPlan), such as an error routed straight to the end
// or a step never reached, as deployment diagnostics whose logical_ref is
// the step's id. They never make a deployment unrunnable.
func PlanWarnings(a store.Artifact) []Diagnostic {
	var out []Diagnostic
	for _, d := range workflow.CheckPlan(a.Plan) {
		if d.IsError() {
			continue
		}
		ref := "plan"
		if d.StepID != nil {
			ref = *d.StepID
		}
		out = append(out, Diagnostic{Severity: "warning", Code: d.Code, LogicalRef: ref, Message: d.Message, RepairHint: d.RepairHint})
	}
	return out
}
