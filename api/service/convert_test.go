package service

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/workflow"
	"github.com/mcpflow/mcpflow/api/protocol"
)

// wireGolden is the JSON each representative value had on the wire while
// api/protocol embedded the store's and the workflow package's types
// (captured from that code, unescaped as every result is encoded). The
// API's own types, converted at the boundary, must keep it byte for byte.
var wireGolden = map[string]string{
	"artifact":           `{"id":"a1","version":2,"title":"T <1>","kind":"wrapper","description":"d","input_schema":{"type":"object"},"output_schema":null,"outcomes":["ok"],"plan":{"name":"golden <&>","input_schema":{"properties":{"q":{"type":"string"}},"type":"object"},"state_schema":{"type":"object"},"output_schema":{"type":"object"},"outcomes":["ok","error"],"output":[{"target":"answer","path":"state.answer"}],"start":"call","nodes":[{"id":"call","type":"node","node":"src.tool","desc":"calls <b>","input":[{"target":"q","path":"input.q"},{"target":"n","value":3},{"target":"c","expression":{"kind":"object","fields":{"a":{"kind":"literal","value":"x"},"b":{"kind":"path","path":"input.q"}}}}],"output":[{"source":"result","target":"answer"}],"retry":2,"timeout_seconds":5},{"id":"each","type":"foreach","over":"state.items","as":"item","mode":"concurrent","item_error":{"action":"collect","collect_to":"errors"},"concurrent":{"max_active":2,"max_outstanding":4}},{"id":"ask","type":"interrupt","kind":"approval","request":[{"target":"why","value":"because"}],"resume":[{"source":"ok","target":"approved"}],"outcomes":["submitted"],"request_schema":{"type":"object"},"resume_schema":{"type":"object"}},{"id":"sub","type":"subgraph","outcomes":["ok"],"workflow":{"artifact_id":"child","version":2},"input_schema":{"type":"object"},"output_schema":{"type":"object"}},{"id":"fin","type":"end","outcome":"ok"}],"edges":[{"from":"call","outcome":"ok","to":"each"},{"from":"each","outcome":"done","to":"__end__"}]},"required_capabilities":[{"ref":{"source":"src","capability_key":"tool"},"kind":"node_spec","input_schema_hash":"h1","input_schema_snapshot":{"type":"object"},"output_schema_hash":null,"output_schema_snapshot":null,"observed_concrete_source":"conn","observed_at_epoch_ms":17},{"ref":{"source":"b","capability_key":"k"},"kind":"wrapper_artifact","input_schema_hash":null,"input_schema_snapshot":null,"output_schema_hash":null,"output_schema_snapshot":null,"observed_concrete_source":null,"observed_at_epoch_ms":null}],"workflow_dependencies":{"child":2},"created_from_catalog_version":"v9"}`,
	"capability_detail":  `{"name":"src.tool","source_id":"","description":null,"outcomes":null,"input_schema":null,"output_schema":null,"is_async":false,"accepts_context":false,"kind":"","wrapper_hints":{"capability_name":"src.tool","confidence":"high","declared_outcomes":["ok"],"suggested_wrapper_outcomes":[],"outcome_policy":"preserve_declared","input_schema":{"type":"object"},"state_schema":null,"output_schema":{},"input_map":{"input.q":"q"},"output_map":{},"outcome_candidates":[{"kind":"boolean","source":"ok","candidate_outcomes":["ok","failed"],"confidence":"low","automatic":true,"reason":"a <flag>"}],"missing_decisions":[{"kind":"outcome","message":"choose"}],"notes":null}}`,
	"codes":              `[{"code":"c","severity":"error","means":"m <x>","repair":"r"}]`,
	"compiled_workspace": `{"compiled_plan":{"name":"golden <&>","input_schema":{"properties":{"q":{"type":"string"}},"type":"object"},"state_schema":{"type":"object"},"output_schema":{"type":"object"},"outcomes":["ok","error"],"output":[{"target":"answer","path":"state.answer"}],"start":"call","nodes":[{"id":"call","type":"node","node":"src.tool","desc":"calls <b>","input":[{"target":"q","path":"input.q"},{"target":"n","value":3},{"target":"c","expression":{"kind":"object","fields":{"a":{"kind":"literal","value":"x"},"b":{"kind":"path","path":"input.q"}}}}],"output":[{"source":"result","target":"answer"}],"retry":2,"timeout_seconds":5},{"id":"each","type":"foreach","over":"state.items","as":"item","mode":"concurrent","item_error":{"action":"collect","collect_to":"errors"},"concurrent":{"max_active":2,"max_outstanding":4}},{"id":"ask","type":"interrupt","kind":"approval","request":[{"target":"why","value":"because"}],"resume":[{"source":"ok","target":"approved"}],"outcomes":["submitted"],"request_schema":{"type":"object"},"resume_schema":{"type":"object"}},{"id":"sub","type":"subgraph","outcomes":["ok"],"workflow":{"artifact_id":"child","version":2},"input_schema":{"type":"object"},"output_schema":{"type":"object"}},{"id":"fin","type":"end","outcome":"ok"}],"edges":[{"from":"call","outcome":"ok","to":"each"},{"from":"each","outcome":"done","to":"__end__"}]},"required_capabilities":{"b.k":{"ref":{"source":"b","capability_key":"k"},"kind":"wrapper_artifact","input_schema_hash":null,"input_schema_snapshot":null,"output_schema_hash":null,"output_schema_snapshot":null,"observed_concrete_source":null,"observed_at_epoch_ms":null},"src.tool":{"ref":{"source":"src","capability_key":"tool"},"kind":"node_spec","input_schema_hash":"h1","input_schema_snapshot":{"type":"object"},"output_schema_hash":null,"output_schema_snapshot":null,"observed_concrete_source":"conn","observed_at_epoch_ms":17}}}`,
	"deployment":         `{"id":"d1","artifact_id":"a1","artifact_version":2,"bindings":[{"logical_source":"src","concrete_source":"conn"},{"logical_source":"b","concrete_source":"c2","session":"run"}],"drift_policy":"warn","limits":{"max_steps":10,"run_timeout_seconds":30},"retention":{"finished_seconds":60},"mcp":{"tool_name":"t","hidden":true}}`,
	"invalid_draft":      `{"status":"invalid","diagnostics":[{"code":"unknown_start","path":"$.start","message":"start <x> & more"},{"code":"unused_step","path":"$.steps.a","message":"m","step_id":"a","repair_hint":"remove it","severity":"warning"}]}`,
	"patch_draft":        `{"status":"valid","diagnostics":[],"compiled_plan":{"name":"golden <&>","input_schema":{"properties":{"q":{"type":"string"}},"type":"object"},"state_schema":{"type":"object"},"output_schema":{"type":"object"},"outcomes":["ok","error"],"output":[{"target":"answer","path":"state.answer"}],"start":"call","nodes":[{"id":"call","type":"node","node":"src.tool","desc":"calls <b>","input":[{"target":"q","path":"input.q"},{"target":"n","value":3},{"target":"c","expression":{"kind":"object","fields":{"a":{"kind":"literal","value":"x"},"b":{"kind":"path","path":"input.q"}}}}],"output":[{"source":"result","target":"answer"}],"retry":2,"timeout_seconds":5},{"id":"each","type":"foreach","over":"state.items","as":"item","mode":"concurrent","item_error":{"action":"collect","collect_to":"errors"},"concurrent":{"max_active":2,"max_outstanding":4}},{"id":"ask","type":"interrupt","kind":"approval","request":[{"target":"why","value":"because"}],"resume":[{"source":"ok","target":"approved"}],"outcomes":["submitted"],"request_schema":{"type":"object"},"resume_schema":{"type":"object"}},{"id":"sub","type":"subgraph","outcomes":["ok"],"workflow":{"artifact_id":"child","version":2},"input_schema":{"type":"object"},"output_schema":{"type":"object"}},{"id":"fin","type":"end","outcome":"ok"}],"edges":[{"from":"call","outcome":"ok","to":"each"},{"from":"each","outcome":"done","to":"__end__"}]}}`,
	"reducer":            `{"name":"r","ref":{"source":"src","capability_key":"tool"},"description":null,"config_schema":null}`,
	"run_result_trace":   `{"deployment_id":"","artifact_id":"","artifact_version":0,"status":"completed","run_id":null,"resume_readiness":null,"interrupt":null,"outcome":null,"error":null,"output":null,"diagnostics":null,"trace_count":0,"next_actions":{"can_continue":false,"can_save_now":null,"recommended_next_tool":null,"reason":"","patch_examples":null,"warnings":null},"trace":[{"frame_id":"root","node_id":"call","step_type":"node","resolved_input":{"q":"a<b"},"outcome":"ok","next_node_id":"each","output":{"result":1.5},"state_changes":{"answer":["x"]},"attempts":2,"session_generation":3,"session_node":"n1","lease_epoch":4,"error":"e"},{"frame_id":"root","node_id":"fin","step_type":"end","resolved_input":null,"outcome":"","next_node_id":"","output":null,"state_changes":null}]}`,
	"valid_draft":        `{"status":"valid","diagnostics":[{"code":"unused_step","path":"$.steps.a","message":"m","step_id":"a","repair_hint":"remove it","severity":"warning"}],"compiled_plan":{"name":"golden <&>","input_schema":{"properties":{"q":{"type":"string"}},"type":"object"},"state_schema":{"type":"object"},"output_schema":{"type":"object"},"outcomes":["ok","error"],"output":[{"target":"answer","path":"state.answer"}],"start":"call","nodes":[{"id":"call","type":"node","node":"src.tool","desc":"calls <b>","input":[{"target":"q","path":"input.q"},{"target":"n","value":3},{"target":"c","expression":{"kind":"object","fields":{"a":{"kind":"literal","value":"x"},"b":{"kind":"path","path":"input.q"}}}}],"output":[{"source":"result","target":"answer"}],"retry":2,"timeout_seconds":5},{"id":"each","type":"foreach","over":"state.items","as":"item","mode":"concurrent","item_error":{"action":"collect","collect_to":"errors"},"concurrent":{"max_active":2,"max_outstanding":4}},{"id":"ask","type":"interrupt","kind":"approval","request":[{"target":"why","value":"because"}],"resume":[{"source":"ok","target":"approved"}],"outcomes":["submitted"],"request_schema":{"type":"object"},"resume_schema":{"type":"object"}},{"id":"sub","type":"subgraph","outcomes":["ok"],"workflow":{"artifact_id":"child","version":2},"input_schema":{"type":"object"},"output_schema":{"type":"object"}},{"id":"fin","type":"end","outcome":"ok"}],"edges":[{"from":"call","outcome":"ok","to":"each"},{"from":"each","outcome":"done","to":"__end__"}]}}`,
}

// wire encodes v as results are: no HTML escaping, no trailing newline.
func wire(t *testing.T, v any) string {
	t.Helper()
	is := is.New(t)
	is.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	is.NoErr(enc.Encode(v)) // the value encodes
	return string(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
}

func TestTheAPIsOwnTypesMarshalAsTheEmbeddedOnesDid(t *testing.T) {
	is := is.New(t)
	plan, err := apiPlan(goldenPlan())
	is.NoErr(err)
	artifact, err := apiArtifact(goldenArtifact())
	is.NoErr(err)
	req := map[string]store.RequiredCapability{}
	for _, r := range goldenRequired() {
		req[r.Ref.Source+"."+r.Ref.CapabilityKey] = r
	}
	cases := map[string]any{
		"compiled_workspace": protocol.CompiledWorkspace{CompiledPlan: plan, RequiredCapabilities: apiRequirementsByName(req)},
		"valid_draft":        protocol.ValidDraft{Status: "valid", Diagnostics: apiDiagnostics(goldenDiagnostics()[1:]), CompiledPlan: plan},
		"invalid_draft":      protocol.InvalidDraft{Status: "invalid", Diagnostics: apiDiagnostics(goldenDiagnostics())},
		"patch_draft":        protocol.PatchDraftResult{Status: "valid", Diagnostics: apiDiagnostics([]workflow.Diagnostic{}), CompiledPlan: plan},
		"capability_detail":  protocol.CapabilityDetail{Name: "src.tool", WrapperHints: apiHints(goldenHints())},
		"run_result_trace":   protocol.RunResult{Status: "completed", Trace: each(goldenTrace(), apiTraceEntry)},
		"codes":              each(goldenCodes(), func(c workflow.CodeInfo) protocol.CodeInfo { return protocol.CodeInfo(c) }),
		"artifact":           artifact,
		"deployment":         apiDeployment(goldenDeployment()),
		"reducer":            protocol.ReducerInventory{Name: "r", Ref: apiRequiredCapability(goldenRequired()[0]).Ref},
	}
	is.Equal(len(cases), len(wireGolden)) // every golden case is checked
	for name, v := range cases {
		is.Equal(wire(t, v), wireGolden[name]) // the result's bytes on the wire
		var escaped bytes.Buffer
		json.HTMLEscape(&escaped, []byte(wireGolden[name]))
		data, err := json.Marshal(v)
		is.NoErr(err)
		is.Equal(string(data), escaped.String()) // and through json.Marshal, as the MCP face encodes
	}
}

// Representative values of the converted types: every field set, some
// nil next to some empty, and characters HTML escaping would change.

const goldenPlanJSON = `{"name":"golden <&>","input_schema":{"type":"object","properties":{"q":{"type":"string"}}},"state_schema":{"type":"object"},"output_schema":{"type":"object"},"outcomes":["ok","error"],"output":[{"target":"answer","path":"state.answer"}],"start":"call","nodes":[{"id":"call","type":"node","node":"src.tool","desc":"calls <b>","input":[{"target":"q","path":"input.q"},{"target":"n","value":3},{"target":"c","expression":{"kind":"object","fields":{"a":{"kind":"literal","value":"x"},"b":{"kind":"path","path":"input.q"}}}}],"output":[{"source":"result","target":"answer"}],"retry":2,"timeout_seconds":5},{"id":"each","type":"foreach","over":"state.items","as":"item","mode":"concurrent","item_error":{"action":"collect","collect_to":"errors"},"concurrent":{"max_active":2,"max_outstanding":4}},{"id":"ask","type":"interrupt","kind":"approval","request":[{"target":"why","value":"because"}],"resume":[{"source":"ok","target":"approved"}],"outcomes":["submitted"],"request_schema":{"type":"object"},"resume_schema":{"type":"object"}},{"id":"sub","type":"subgraph","workflow":{"artifact_id":"child","version":2},"input_schema":{"type":"object"},"output_schema":{"type":"object"},"outcomes":["ok"]},{"id":"fin","type":"end","outcome":"ok"}],"edges":[{"from":"call","outcome":"ok","to":"each"},{"from":"each","outcome":"done","to":"__end__"}]}`

func goldenPlan() workflow.Plan {
	var p workflow.Plan
	if err := json.Unmarshal([]byte(goldenPlanJSON), &p); err != nil {
		panic(err)
	}
	return p
}

func goldenDiagnostics() []workflow.Diagnostic {
	return []workflow.Diagnostic{
		{Code: "unknown_start", Path: "$.start", Message: "start <x> & more"},
		{Code: "unused_step", Path: "$.steps.a", Message: "m", StepID: ptr("a"), RepairHint: ptr("remove it"), Severity: workflow.SeverityWarning},
	}
}

func goldenHints() workflow.Hints {
	return workflow.Hints{
		CapabilityName: "src.tool", Confidence: "high", DeclaredOutcomes: []string{"ok"}, SuggestedWrapperOutcomes: []string{},
		OutcomePolicy: "preserve_declared", InputSchema: workflow.Object{"type": "object"}, StateSchema: nil, OutputSchema: workflow.Object{},
		InputMap: map[string]string{"input.q": "q"}, OutputMap: map[string]string{},
		OutcomeCandidates: []workflow.OutcomeCandidate{{Kind: "boolean", Source: "ok", CandidateOutcomes: []string{"ok", "failed"}, Confidence: "low", Automatic: true, Reason: "a <flag>"}},
		MissingDecisions:  []workflow.MissingDecision{{Kind: "outcome", Message: "choose"}},
		Notes:             nil,
	}
}

func goldenTrace() []workflow.TraceEntry {
	return []workflow.TraceEntry{
		{FrameID: "root", NodeID: "call", StepType: "node", ResolvedInput: workflow.Object{"q": "a<b"}, Outcome: "ok", NextNodeID: "each",
			Output: workflow.Object{"result": 1.5}, StateChanges: workflow.Object{"answer": []any{"x"}}, Attempts: 2, Generation: 3, Node: "n1", Epoch: 4, Error: "e"},
		{FrameID: "root", NodeID: "fin", StepType: "end"},
	}
}

func goldenCodes() []workflow.CodeInfo {
	return []workflow.CodeInfo{{Code: "c", Severity: "error", Means: "m <x>", Repair: "r"}}
}

func goldenRequired() []store.RequiredCapability {
	return []store.RequiredCapability{
		{Ref: store.CapabilityRef{Source: "src", CapabilityKey: "tool"}, Kind: "node_spec", InputSchemaHash: ptr("h1"), InputSchemaSnapshot: workflow.Object{"type": "object"},
			OutputSchemaHash: nil, OutputSchemaSnapshot: nil, ObservedConcreteSource: ptr("conn"), ObservedAtEpochMs: ptr(int64(17))},
		{Ref: store.CapabilityRef{Source: "b", CapabilityKey: "k"}, Kind: "wrapper_artifact"},
	}
}

func goldenArtifact() store.Artifact {
	return store.Artifact{ID: "a1", Version: 2, Title: "T <1>", Kind: "wrapper", Description: ptr("d"), InputSchema: workflow.Object{"type": "object"}, OutputSchema: nil,
		Outcomes: []string{"ok"}, Plan: goldenPlan(), RequiredCapabilities: goldenRequired(), WorkflowDependencies: map[string]int{"child": 2}, CreatedFromCatalogVersion: ptr("v9")}
}

func goldenDeployment() store.Deployment {
	return store.Deployment{ID: "d1", ArtifactID: "a1", ArtifactVersion: 2,
		Bindings:    []store.Binding{{LogicalSource: "src", ConcreteSource: "conn"}, {LogicalSource: "b", ConcreteSource: "c2", Session: store.SessionRun}},
		DriftPolicy: "warn", Limits: &store.RunLimits{MaxSteps: ptr(10), RunTimeoutSeconds: ptr(30)}, Retention: &store.Retention{FinishedSeconds: ptr(int64(60))},
		MCP: &store.MCPExposure{ToolName: "t", Hidden: true}}
}
