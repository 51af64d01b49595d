package service

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/workflow"
	"github.com/mcpflow/mcpflow/api/protocol"
)

// This file converts the store's and the workflow language's values into
// the API's own types (api/protocol), field by field, so that a change to
// the on-disk format or the language's Go types cannot change the public
// contract unnoticed: it stops compiling here instead. A nil slice or map
// stays nil and an empty one empty, so the JSON keeps null and [] apart.

// each converts every element of in; nil stays nil.
func each[T, U any](in []T, conv func(T) U) []U {
	if in == nil {
		return nil
	}
	out := make([]U, len(in))
	for i, v := range in {
		out[i] = conv(v)
	}
	return out
}

func apiDiagnostic(d workflow.Diagnostic) protocol.Diagnostic { return protocol.Diagnostic(d) }

// apiDiagnostics converts validation findings.
func apiDiagnostics(in []workflow.Diagnostic) []protocol.Diagnostic {
	return each(in, apiDiagnostic)
}

func apiTraceEntry(e workflow.TraceEntry) protocol.TraceEntry { return protocol.TraceEntry(e) }

// apiHints converts a capability's wrapper hints.
func apiHints(h workflow.Hints) protocol.Hints {
	return protocol.Hints{
		CapabilityName: h.CapabilityName, Confidence: h.Confidence, DeclaredOutcomes: h.DeclaredOutcomes,
		SuggestedWrapperOutcomes: h.SuggestedWrapperOutcomes, OutcomePolicy: h.OutcomePolicy,
		InputSchema: h.InputSchema, StateSchema: h.StateSchema, OutputSchema: h.OutputSchema,
		InputMap: h.InputMap, OutputMap: h.OutputMap,
		OutcomeCandidates: each(h.OutcomeCandidates, func(c workflow.OutcomeCandidate) protocol.OutcomeCandidate {
			return protocol.OutcomeCandidate(c)
		}),
		MissingDecisions: each(h.MissingDecisions, func(d workflow.MissingDecision) protocol.MissingDecision {
			return protocol.MissingDecision(d)
		}),
		Notes: h.Notes,
	}
}

// apiPlan is a compiled plan's JSON, as the workflow language encodes it
// and as the API passes it on unread. It is encoded as every result is
// (no HTML escaping), so the bytes on the wire are those a plan value
// would have had.
func apiPlan(p workflow.Plan) (protocol.Plan, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(p); err != nil {
		return nil, fmt.Errorf("encode plan %q: %w", p.Name, err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

func apiRequiredCapability(r store.RequiredCapability) protocol.RequiredCapability {
	return protocol.RequiredCapability{
		Ref: protocol.CapabilityRef(r.Ref), Kind: r.Kind,
		InputSchemaHash: r.InputSchemaHash, InputSchemaSnapshot: r.InputSchemaSnapshot,
		OutputSchemaHash: r.OutputSchemaHash, OutputSchemaSnapshot: r.OutputSchemaSnapshot,
		ObservedConcreteSource: r.ObservedConcreteSource, ObservedAtEpochMs: r.ObservedAtEpochMs,
	}
}

// apiRequirementsByName converts the dependencies of a compiled workspace,
// keyed "<source>.<capability_key>".
func apiRequirementsByName(in map[string]store.RequiredCapability) map[string]protocol.RequiredCapability {
	if in == nil {
		return nil
	}
	out := make(map[string]protocol.RequiredCapability, len(in))
	for k, r := range in {
		out[k] = apiRequiredCapability(r)
	}
	return out
}

// apiArtifact converts a stored artifact.
func apiArtifact(a store.Artifact) (protocol.Artifact, error) {
	plan, err := apiPlan(a.Plan)
	if err != nil {
		return protocol.Artifact{}, fmt.Errorf("artifact %q version %d: %w", a.ID, a.Version, err)
	}
	return protocol.Artifact{
		ID: a.ID, Version: a.Version, Title: a.Title, Kind: a.Kind, Description: a.Description,
		InputSchema: a.InputSchema, OutputSchema: a.OutputSchema, Outcomes: a.Outcomes, Plan: plan,
		RequiredCapabilities:      each(a.RequiredCapabilities, apiRequiredCapability),
		WorkflowDependencies:      a.WorkflowDependencies,
		CreatedFromCatalogVersion: a.CreatedFromCatalogVersion,
	}, nil
}

// apiDeployment converts a stored deployment.
func apiDeployment(d store.Deployment) protocol.Deployment {
	out := protocol.Deployment{
		ID: d.ID, ArtifactID: d.ArtifactID, ArtifactVersion: d.ArtifactVersion, DriftPolicy: d.DriftPolicy,
		Bindings: each(d.Bindings, func(b store.Binding) protocol.Binding { return protocol.Binding(b) }),
	}
	if d.Limits != nil {
		l := protocol.RunLimits(*d.Limits)
		out.Limits = &l
	}
	if r := d.Retention; r != nil && !r.Transient { // Transient is a pass-through run's own, never a deployment's
		out.Retention = &protocol.Retention{FinishedSeconds: r.FinishedSeconds}
	}
	if d.MCP != nil {
		m := protocol.MCPExposure(*d.MCP)
		out.MCP = &m
	}
	return out
}
