package storetest

import (
	"time"

	"github.com/mcpflow/mcpflow/actors/catalog"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/workflow"
)

// The fixtures hold only what survives a JSON round trip unchanged (numbers
// are float64), so a record read back equals the one written.

// t0 is the fixtures' clock, at millisecond precision: the least a store
// must keep.
var t0 = time.Date(2026, 3, 1, 12, 0, 0, 123_000_000, time.UTC)

func ptr[T any](v T) *T { return &v }

func workspace(id string, revision int) store.Workspace {
	return store.Workspace{
		ID:       id,
		Revision: revision,
		Title:    ptr("Draft " + id),
		Draft: workflow.Object{
			"name":  id,
			"steps": map[string]any{"fetch": map[string]any{"use": "web.fetch", "retry": 2.0}},
		},
		Status:      "invalid",
		Diagnostics: []workflow.Diagnostic{{Code: "missing_start", Path: "/start", Message: "start is not set"}},
		CreatedAtMs: 1_000,
		UpdatedAtMs: 2_000,
	}
}

func artifact(id string, version int, kind, title string, description *string) store.Artifact {
	return store.Artifact{
		ID:           id,
		Version:      version,
		Title:        title,
		Kind:         kind,
		Description:  description,
		InputSchema:  workflow.Object{"type": "object"},
		OutputSchema: workflow.Object{"type": "object"},
		Outcomes:     []string{workflow.OutcomeOK},
		Plan: workflow.Plan{
			Name:  id,
			Start: "fetch",
			Nodes: []workflow.Node{{ID: "fetch", Type: workflow.NodeCall, Node: "web.fetch"}},
			Edges: []workflow.Edge{{From: "fetch", Outcome: workflow.OutcomeOK, To: workflow.End}},
		},
		RequiredCapabilities: []store.RequiredCapability{{
			Ref:  store.CapabilityRef{Source: "web", CapabilityKey: "fetch"},
			Kind: "tool",
		}},
		WorkflowDependencies: map[string]int{},
	}
}

func deployment(id string) store.Deployment {
	return store.Deployment{
		ID:              id,
		ArtifactID:      "wf",
		ArtifactVersion: 1,
		Bindings: []store.Binding{
			{LogicalSource: "web", ConcreteSource: "web-prod"},
			{LogicalSource: "db", ConcreteSource: "db-prod", Session: store.SessionRun},
		},
		DriftPolicy: "block",
	}
}

func snapshot(connectionID string) catalog.Snapshot {
	return catalog.Snapshot{
		ConnectionID:     connectionID,
		FetchedAtEpochMs: 1_000,
		MaxAgeSeconds:    catalog.DefaultMaxAgeSeconds,
		Tools:            []catalog.Tool{{Name: "fetch", InputSchema: catalog.Object{"type": "object"}}},
		Resources:        []catalog.Resource{{URI: "file:///readme"}},
		Prompts:          []catalog.Prompt{},
	}
}

func run(id, status string, updatedAt time.Time) store.Run {
	return store.Run{
		ID:              id,
		DeploymentID:    "dep",
		ArtifactID:      "wf",
		ArtifactVersion: 1,
		Status:          status,
		ResumeReadiness: "not_applicable",
		Input:           workflow.Object{"url": "https://example.com"},
		Deployment:      deployment("dep"),
		CreatedAt:       t0,
		UpdatedAt:       updatedAt,
	}
}

func entry(node, next string) workflow.TraceEntry {
	return workflow.TraceEntry{
		FrameID:       "root",
		NodeID:        node,
		StepType:      workflow.NodeCall,
		ResolvedInput: workflow.Object{"node": node},
		Outcome:       workflow.OutcomeOK,
		NextNodeID:    next,
		Output:        workflow.Object{"status": 200.0},
		StateChanges:  workflow.Object{},
	}
}

// secret is in every auth payload the fixtures make: no error message may
// carry it.
const secret = "s3cr3t"

func authRecord(id string) store.AuthRecord {
	return store.AuthRecord{
		ID:       id,
		Scheme:   "bearer",
		Payload:  map[string]any{"access_token": secret + "-" + id},
		Metadata: map[string]any{"owner": "ops", "scopes": []any{"repo", "read:org"}},
	}
}

func registryEntry(id string) store.RegistryEntry {
	return store.RegistryEntry{
		ID:       id,
		Kind:     "mcp",
		Enabled:  true,
		Provider: "github",
		Account:  "acme",
		Transport: map[string]any{
			"kind":    "streamable_http",
			"url":     "https://mcp.example.com/" + id,
			"headers": map[string]any{"X-Tenant": "acme"},
		},
		AuthRef:  ptr("auth-" + id),
		Metadata: map[string]any{"note": "seeded"},
	}
}

// event is the i-th fixture event; the store numbers it.
func event(i int) store.Event {
	return store.Event{
		Kind:             "tool_call_completed",
		TimestampEpochMs: 1_000 + int64(i),
		ConnectionID:     ptr("web"),
		CapabilityID:     ptr("web.fetch"),
		Payload:          map[string]any{"i": float64(i), "result": map[string]any{"ok": true}},
	}
}

// numbered is e as stored under seq.
func numbered(e store.Event, seq int64) store.Event {
	e.Seq = seq
	return e
}
