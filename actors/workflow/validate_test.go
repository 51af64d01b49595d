package workflow_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/workflow"
)

// draftWith is a draft with closed schemas (input x, state r, output r)
// and the given steps and routes, starting at a.
func draftWith(steps, routes string) string {
	return `{"name":"w","start":"a",
		"input_schema":{"type":"object","properties":{"x":{}},"additionalProperties":false},
		"state_schema":{"type":"object","properties":{"r":{}},"additionalProperties":false},
		"output_schema":{"type":"object","properties":{"r":{}},"additionalProperties":false},
		"steps":{` + steps + `},"routes":{` + routes + `}}`
}

// Steps used in the table.
const (
	joinA  = `"a":{"join":{}}`
	joinOK = `"a":{"done":"__end__"}`
)

func whenA(cond string) string {
	return `"a":{"when":{"if":` + cond + `,"then":"__end__"}}`
}

func TestValidationCodes(t *testing.T) {
	for _, tc := range []struct {
		name, doc, code, path string
		warning               bool
	}{
		// Parse and shape.
		{name: "no name", doc: `{"start":"a","steps":{"a":{"join":{}}},"routes":{"a":{"done":"__end__"}}}`, code: "draft_invalid", path: "name"},
		{name: "unknown step key", doc: draftWith(`"a":{"join":{},"colour":1}`, ""), code: "draft_invalid", path: "steps.a"},
		{name: "two kinds", doc: draftWith(`"a":{"join":{},"end":{}}`, ""), code: "draft_invalid", path: "steps.a"},
		{name: "interrupt without kind", doc: draftWith(`"a":{"interrupt":{}}`, `"a":{"submitted":"__end__"}`), code: "draft_invalid", path: "steps.a.interrupt.kind"},
		{name: "binding with two sources", doc: draftWith(`"a":{"use":"fx.default.anything","input":[{"target":"t","value":1,"path":"input.x"}]}`, `"a":{"ok":"__end__","error":"__end__"}`),
			code: "draft_invalid", path: "steps.a.input[0]"},
		{name: "binding without source", doc: draftWith(`"a":{"use":"fx.default.anything","input":[{"target":"t"}]}`, `"a":{"ok":"__end__","error":"__end__"}`),
			code: "draft_invalid", path: "steps.a.input[0]"},
		{name: "negative retry", doc: draftWith(`"a":{"use":"fx.default.anything","retry":-1}`, `"a":{"ok":"__end__","error":"__end__"}`), code: "draft_invalid", path: "steps.a.retry"},
		{name: "zero timeout", doc: draftWith(`"a":{"use":"fx.default.anything","timeout_seconds":0}`, `"a":{"ok":"__end__","error":"__end__"}`), code: "draft_invalid", path: "steps.a.timeout_seconds"},
		{name: "foreach without alias", doc: draftWith(`"a":{"foreach":{"over":"input.x"}},"b":{"join":{}}`, `"a":{"loop":"b","done":"__end__"},"b":{"done":"a"}`),
			code: "draft_invalid", path: "steps.a.foreach.as"},
		{name: "foreach alias is a context field", doc: draftWith(`"a":{"foreach":{"over":"input.x","as":"loop_item"}},"b":{"join":{}}`, `"a":{"loop":"b","done":"__end__"},"b":{"done":"a"}`),
			code: "draft_invalid", path: "steps.a.foreach.as"},
		{name: "foreach mode", doc: draftWith(`"a":{"foreach":{"over":"input.x","as":"i","mode":"parallel"}},"b":{"join":{}}`, `"a":{"loop":"b","done":"__end__"},"b":{"done":"a"}`),
			code: "draft_invalid", path: "steps.a.foreach.mode"},
		{name: "foreach item_error action", doc: draftWith(`"a":{"foreach":{"over":"input.x","as":"i","item_error":"retry"}},"b":{"join":{}}`, `"a":{"loop":"b","done":"__end__"},"b":{"done":"a"}`),
			code: "draft_invalid", path: "steps.a.foreach.item_error"},
		{name: "foreach concurrency limits", doc: draftWith(`"a":{"foreach":{"over":"input.x","as":"i","mode":"concurrent","concurrent":{"max_active":5,"max_outstanding":2}}},"b":{"join":{}}`, `"a":{"loop":"b","done":"__end__"},"b":{"done":"a"}`),
			code: "draft_invalid", path: "steps.a.foreach.concurrent"},
		{name: "subgraph without workflow", doc: draftWith(`"a":{"subgraph":{"workflow":{}}}`, `"a":{"ok":"__end__"}`), code: "draft_invalid", path: "steps.a.subgraph.workflow"},
		{name: "unknown condition operator", doc: draftWith(whenA(`{"op":"xor","args":[]}`), ""), code: "draft_invalid", path: "steps.a.when.if"},
		{name: "choose without clauses", doc: draftWith(`"a":{"choose":{"clauses":[]}}`, ""), code: "draft_invalid", path: "steps.a.choose.clauses"},
		{name: "match without cases", doc: draftWith(`"a":{"match":{"value":"input.x","cases":[]}}`, ""), code: "draft_invalid", path: "steps.a.match.cases"},

		// Graph.
		{name: "unknown start", doc: strings.Replace(draftWith(joinA, joinOK), `"start":"a"`, `"start":"nope"`, 1), code: "unknown_start", path: "start"},
		{name: "reserved step id", doc: draftWith(joinA+`,"__end__":{"join":{}}`, joinOK), code: "invalid_node_id", path: "steps.__end__"},
		{name: "generated id taken", doc: draftWith(`"a":{"choose":{"clauses":[{"if":{"op":"exists","path":"input.x"},"then":"a_2"},{"if":{"op":"exists","path":"input.x"},"then":"__end__"}]}},"a_2":{"join":{}}`, `"a_2":{"done":"__end__"}`),
			code: "duplicate_node_id", path: "steps.a_2"},
		{name: "route beside a decision's own", doc: draftWith(whenA(`{"op":"exists","path":"input.x"}`), `"a":{"true":"__end__"}`), code: "duplicate_edge", path: "routes.a.true"},
		{name: "route from an unknown step", doc: draftWith(joinA, joinOK+`,"ghost":{"ok":"__end__"}`), code: "unknown_edge_source", path: "routes.ghost.ok"},
		{name: "route to an unknown step", doc: draftWith(joinA, `"a":{"done":"nowhere"}`), code: "unknown_edge_destination", path: "routes.a.done"},
		{name: "when to an unknown step", doc: draftWith(`"a":{"when":{"if":{"op":"exists","path":"input.x"},"then":"nowhere"}}`, ""), code: "unknown_edge_destination", path: "steps.a.when.then"},
		{name: "choose default to an unknown step", doc: draftWith(`"a":{"choose":{"clauses":[{"if":{"op":"exists","path":"input.x"},"then":"__end__"}],"default":"nowhere"}}`, ""),
			code: "unknown_edge_destination", path: "steps.a.choose.default"},
		{name: "match case to an unknown step", doc: draftWith(`"a":{"match":{"value":"input.x","cases":[{"equals":1,"then":"__end__"},{"equals":2,"then":"nowhere"}]}}`, ""),
			code: "unknown_edge_destination", path: "steps.a.match.cases[1].then"},
		{name: "route of an undeclared outcome", doc: draftWith(joinA, `"a":{"done":"__end__","maybe":"__end__"}`), code: "undeclared_edge_outcome", path: "routes.a.maybe"},
		{name: "route from an end step", doc: draftWith(`"a":{"end":{}}`, `"a":{"ok":"__end__"}`), code: "undeclared_edge_outcome", path: "routes.a.ok"},
		{name: "unrouted outcome", doc: draftWith(`"a":{"use":"fx.default.echo","input":[{"target":"text","value":"x"}]}`, `"a":{"ok":"__end__"}`), code: "missing_outcome_edge", path: "steps.a"},
		{name: "unrouted foreach loop", doc: draftWith(`"a":{"foreach":{"over":"input.x","as":"i"}}`, `"a":{"done":"__end__"}`), code: "missing_outcome_edge", path: "steps.a"},
		{name: "end outcome not declared", doc: draftWith(`"a":{"end":{"outcome":"maybe"}}`, ""), code: "undeclared_workflow_outcome", path: "steps.a.end.outcome"},
		{name: "route to __end__ without ok", doc: strings.Replace(draftWith(joinA, joinOK), `"name":"w"`, `"name":"w","outcomes":["done"]`, 1),
			code: "undeclared_workflow_outcome", path: "routes.a.done"},
		{name: "unreachable step", doc: draftWith(joinA+`,"b":{"join":{}}`, joinOK+`,"b":{"done":"__end__"}`), code: "unreachable_step", path: "steps.b", warning: true},
		{name: "loop without exit", doc: draftWith(joinA+`,"b":{"join":{}}`, `"a":{"done":"b"},"b":{"done":"a"}`), code: "loop_without_exit", path: "steps.b"},

		// Capabilities and bindings.
		{name: "unknown capability", doc: draftWith(`"a":{"use":"fx.default.nope"}`, `"a":{"ok":"__end__"}`), code: "unknown_node_def", path: "steps.a.use"},
		{name: "undeclared input field", doc: draftWith(`"a":{"use":"fx.default.echo","input":[{"target":"colour","value":"x"}]}`, `"a":{"ok":"__end__","error":"__end__"}`),
			code: "invalid_node_input_field", path: "steps.a.input[0].target"},
		{name: "overlapping input targets", doc: draftWith(`"a":{"use":"fx.default.anything","input":[{"target":"t","value":{}},{"target":"t.u","value":1}]}`, `"a":{"ok":"__end__","error":"__end__"}`),
			code: "invalid_node_input_field", path: "steps.a.input[1].target"},
		{name: "malformed input target", doc: draftWith(`"a":{"use":"fx.default.anything","input":[{"target":"a b","value":1}]}`, `"a":{"ok":"__end__","error":"__end__"}`),
			code: "invalid_node_input_field", path: "steps.a.input[0].target"},
		{name: "undeclared input path", doc: draftWith(`"a":{"use":"fx.default.anything","input":[{"target":"t","path":"input.nope"}]}`, `"a":{"ok":"__end__","error":"__end__"}`),
			code: "invalid_source_path", path: "steps.a.input[0]"},
		{name: "undeclared state path", doc: draftWith(`"a":{"use":"fx.default.anything","input":[{"target":"t","path":"state.nope"}]}`, `"a":{"ok":"__end__","error":"__end__"}`),
			code: "invalid_source_path", path: "steps.a.input[0]"},
		{name: "unknown context field", doc: draftWith(`"a":{"use":"fx.default.anything","input":[{"target":"t","path":"context.clock"}]}`, `"a":{"ok":"__end__","error":"__end__"}`),
			code: "invalid_source_path", path: "steps.a.input[0]"},
		{name: "path of an unknown root", doc: draftWith(`"a":{"use":"fx.default.anything","input":[{"target":"t","path":"output.r"}]}`, `"a":{"ok":"__end__","error":"__end__"}`),
			code: "invalid_source_path", path: "steps.a.input[0]"},
		{name: "expression too deep", doc: draftWith(`"a":{"use":"fx.default.anything","input":[{"target":"t","expression":`+nested(65)+`}]}`, `"a":{"ok":"__end__","error":"__end__"}`),
			code: "invalid_source_path", path: "steps.a.input[0].expression"},
		{name: "undeclared output field", doc: draftWith(`"a":{"use":"fx.default.echo","input":[{"target":"text","value":"x"}],"output":[{"source":"colour","target":"state.r"}]}`, `"a":{"ok":"__end__","error":"__end__"}`),
			code: "invalid_node_output_field", path: "steps.a.output[0].source"},
		{name: "undeclared state target", doc: draftWith(`"a":{"use":"fx.default.anything","output":[{"source":"v","target":"state.nope"}]}`, `"a":{"ok":"__end__","error":"__end__"}`),
			code: "invalid_destination_path", path: "steps.a.output[0].target"},
		{name: "bare state target", doc: draftWith(`"a":{"use":"fx.default.anything","output":[{"source":"v","target":"state"}]}`, `"a":{"ok":"__end__","error":"__end__"}`),
			code: "invalid_destination_path", path: "steps.a.output[0].target"},
		{name: "overlapping state targets", doc: draftWith(`"a":{"use":"fx.default.anything","output":[{"source":"v","target":"state.r"},{"source":"w","target":"state.r.s"}]}`, `"a":{"ok":"__end__","error":"__end__"}`),
			code: "invalid_destination_path", path: "steps.a.output[1].target"},
		{name: "subgraph output to an undeclared state field", doc: draftWith(`"a":{"subgraph":{"workflow":{"name":"c"},"output":[{"source":"v","target":"state.nope"}]}}`, `"a":{"ok":"__end__"}`),
			code: "invalid_destination_path", path: "steps.a.subgraph.output[0].target"},
		{name: "subgraph input reads an undeclared field", doc: draftWith(`"a":{"subgraph":{"workflow":{"name":"c"},"input":[{"target":"v","path":"input.nope"}]}}`, `"a":{"ok":"__end__"}`),
			code: "invalid_source_path", path: "steps.a.subgraph.input[0]"},
		{name: "subgraph input target its schema lacks", doc: draftWith(`"a":{"subgraph":{"workflow":{"name":"c"},"input_schema":{"type":"object","properties":{"q":{}}},"input":[{"target":"v","value":1}]}}`, `"a":{"ok":"__end__"}`),
			code: "invalid_node_input_field", path: "steps.a.subgraph.input[0].target"},
		{name: "output target not in the output schema", doc: strings.Replace(draftWith(joinA, joinOK), `"steps"`, `"output":[{"target":"nope","path":"state.r"}],"steps"`, 1),
			code: "invalid_workflow_output_field", path: "output[0].target"},
		{name: "output with an expression", doc: strings.Replace(draftWith(joinA, joinOK), `"steps"`, `"output":[{"target":"r","expression":{"kind":"literal","value":1}}],"steps"`, 1),
			code: "invalid_workflow_output_field", path: "output[0]"},
		{name: "output reads context", doc: strings.Replace(draftWith(joinA, joinOK), `"steps"`, `"output":[{"target":"r","path":"context.scope_id"}],"steps"`, 1),
			code: "invalid_source_path", path: "output[0].path"},
		{name: "output reads an undeclared state field", doc: strings.Replace(draftWith(joinA, joinOK), `"steps"`, `"output":[{"target":"r","path":"state.nope"}],"steps"`, 1),
			code: "invalid_source_path", path: "output[0].path"},

		// Conditions.
		{name: "and without args", doc: draftWith(whenA(`{"op":"and","args":[]}`), ""), code: "empty_condition_args", path: "steps.a.when.if"},
		{name: "not without arg", doc: draftWith(whenA(`{"op":"not"}`), ""), code: "empty_condition_args", path: "steps.a.when.if"},
		{name: "exists without path", doc: draftWith(whenA(`{"op":"exists"}`), ""), code: "invalid_condition_path", path: "steps.a.when.if"},
		{name: "exists of an undeclared field", doc: draftWith(whenA(`{"op":"exists","path":"state.nope"}`), ""), code: "invalid_condition_path", path: "steps.a.when.if"},
		{name: "comparison without right", doc: draftWith(whenA(`{"op":"eq","left":{"path":"input.x"}}`), ""), code: "invalid_condition_path", path: "steps.a.when.if"},
		{name: "operand with path and value", doc: draftWith(whenA(`{"op":"eq","left":{"path":"input.x","value":1},"right":{"value":1}}`), ""), code: "invalid_condition_path", path: "steps.a.when.if"},
		{name: "second clause reads a bad path", doc: draftWith(`"a":{"choose":{"clauses":[{"if":{"op":"exists","path":"input.x"},"then":"__end__"},{"if":{"op":"exists","path":"input.nope"},"then":"__end__"}]}}`, ""),
			code: "invalid_condition_path", path: "steps.a.choose.clauses[1].if"},
		{name: "match case without equals", doc: draftWith(`"a":{"match":{"value":"input.x","cases":[{"then":"__end__"}]}}`, ""), code: "invalid_condition_path", path: "steps.a.match.cases[0]"},
		{name: "match of an undeclared value", doc: draftWith(`"a":{"match":{"value":"input.nope","cases":[{"equals":1,"then":"__end__"}]}}`, ""), code: "invalid_condition_path", path: "steps.a.match.cases[0]"},

		// Foreach and interrupt.
		{name: "foreach over an undeclared field", doc: draftWith(`"a":{"foreach":{"over":"input.nope","as":"i"}},"b":{"join":{}}`, `"a":{"loop":"b","done":"__end__"},"b":{"done":"a"}`),
			code: "invalid_foreach_source", path: "steps.a.foreach.over"},
		{name: "foreach over a malformed path", doc: draftWith(`"a":{"foreach":{"over":"items","as":"i"}},"b":{"join":{}}`, `"a":{"loop":"b","done":"__end__"},"b":{"done":"a"}`),
			code: "invalid_foreach_source", path: "steps.a.foreach.over"},
		{name: "collect without collect_to", doc: draftWith(`"a":{"foreach":{"over":"input.x","as":"i","item_error":"collect"}},"b":{"join":{}}`, `"a":{"loop":"b","done":"__end__","completed_with_errors":"__end__"},"b":{"done":"a"}`),
			code: "invalid_foreach_collect_destination", path: "steps.a.foreach.item_error"},
		{name: "collect_to an undeclared field", doc: draftWith(`"a":{"foreach":{"over":"input.x","as":"i","item_error":{"action":"collect","collect_to":"state.nope"}}},"b":{"join":{}}`, `"a":{"loop":"b","done":"__end__","completed_with_errors":"__end__"},"b":{"done":"a"}`),
			code: "invalid_foreach_collect_destination", path: "steps.a.foreach.item_error.collect_to"},
		{name: "collect_to outside state", doc: draftWith(`"a":{"foreach":{"over":"input.x","as":"i","item_error":{"action":"collect","collect_to":"input.x"}}},"b":{"join":{}}`, `"a":{"loop":"b","done":"__end__","completed_with_errors":"__end__"},"b":{"done":"a"}`),
			code: "invalid_foreach_collect_destination", path: "steps.a.foreach.item_error.collect_to"},
		{name: "skip leaves completed_with_errors unrouted", doc: draftWith(`"a":{"foreach":{"over":"input.x","as":"i","item_error":"skip"}},"b":{"join":{}}`, `"a":{"loop":"b","done":"__end__"},"b":{"done":"a"}`),
			code: "missing_outcome_edge", path: "steps.a"},
		{name: "interrupt request reads an undeclared field", doc: draftWith(`"a":{"interrupt":{"kind":"k","request":[{"target":"q","path":"state.nope"}]}}`, `"a":{"submitted":"__end__"}`),
			code: "invalid_interrupt_source", path: "steps.a.interrupt.request[0]"},
		{name: "interrupt request target malformed", doc: draftWith(`"a":{"interrupt":{"kind":"k","request":[{"target":"a b","value":1}]}}`, `"a":{"submitted":"__end__"}`),
			code: "invalid_interrupt_source", path: "steps.a.interrupt.request[0].target"},
		{name: "interrupt resume into an undeclared field", doc: draftWith(`"a":{"interrupt":{"kind":"k","resume":[{"source":"v","target":"state.nope"}]}}`, `"a":{"submitted":"__end__"}`),
			code: "invalid_interrupt_destination", path: "steps.a.interrupt.resume[0].target"},
		{name: "interrupt outcome unrouted", doc: draftWith(`"a":{"interrupt":{"kind":"k","outcomes":["yes","no"]}}`, `"a":{"yes":"__end__"}`),
			code: "missing_outcome_edge", path: "steps.a"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			d, diags := parse(t, tc.doc)
			diags = append(diags, workflow.ValidateDraft(d, fixtures)...)
			var found *workflow.Diagnostic
			for i, dg := range diags {
				if dg.Code == tc.code && dg.Path == tc.path {
					found = &diags[i]
				}
			}
			if found == nil {
				t.Fatalf("no %s at %s in:\n%s", tc.code, tc.path, describe(diags))
			}
			is.Equal(found.IsError(), !tc.warning)
			if tc.warning {
				is.Equal(found.Severity, workflow.SeverityWarning)
			}
			is.True(found.Message != "")
			is.True(found.RepairHint != nil && *found.RepairHint != "") // its code's repair (DiagnosticCodes)
			if strings.HasPrefix(tc.path, "steps.") {
				is.True(found.StepID != nil) // a step's finding names the step
			}
			// Compile refuses a draft with an error, not one with only warnings.
			_, err := workflow.Compile(d)
			if tc.warning {
				is.NoErr(err)
			}
		})
	}
}

func describe(diags []workflow.Diagnostic) string {
	var b strings.Builder
	for _, d := range diags {
		fmt.Fprintf(&b, "  %s at %s: %s\n", d.Code, d.Path, d.Message)
	}
	return b.String()
}

func TestAValidDraftHasNoFindings(t *testing.T) {
	is := is.New(t)
	for _, doc := range []string{useDraft, approvalDraft, parentDraft, childDraft, foreachDoc(`{"over":"input.fruits","as":"fruit"}`, "")} {
		d, diags := parse(t, doc)
		is.Equal(diags, nil)
		is.Equal(workflow.Blocking(workflow.ValidateDraft(d, fixtures)), nil) // useDraft routes error to the end: a warning
	}
}

func TestValidatePlanNamesPlanFields(t *testing.T) {
	plan := func(nodes, edges string) workflow.Plan {
		var p workflow.Plan
		doc := `{"name":"w","start":"a","outcomes":["ok"],
			"input_schema":{"type":"object","properties":{"x":{}},"additionalProperties":false},
			"state_schema":{"type":"object","properties":{"r":{}},"additionalProperties":false},
			"output_schema":{},"output":[],"nodes":` + nodes + `,"edges":` + edges + `}`
		if err := json.Unmarshal([]byte(doc), &p); err != nil {
			t.Fatalf("plan: %v", err)
		}
		return p
	}
	for _, tc := range []struct {
		name, nodes, edges, code, path string
	}{
		{"unknown type", `[{"id":"a","type":"loop"}]`, `[]`, "unsupported_step_type", "nodes[0].type"},
		{"empty id", `[{"id":"a","type":"join"},{"id":"","type":"join"}]`, `[{"from":"a","outcome":"done","to":"__end__"}]`, "invalid_node_id", "nodes[1].id"},
		{"duplicate id", `[{"id":"a","type":"join"},{"id":"a","type":"join"}]`, `[{"from":"a","outcome":"done","to":"__end__"}]`, "duplicate_node_id", "nodes[1].id"},
		{"duplicate edge", `[{"id":"a","type":"join"}]`, `[{"from":"a","outcome":"done","to":"__end__"},{"from":"a","outcome":"done","to":"a"}]`, "duplicate_edge", "edges[1]"},
		{"unknown capability", `[{"id":"a","type":"node","node":"fx.default.nope"}]`, `[]`, "unknown_node_def", "nodes[0].node"},
		{"capability named nowhere", `[{"id":"a","type":"node"}]`, `[]`, "unknown_node_def", "nodes[0].node"},
		{"foreach over", `[{"id":"a","type":"foreach","over":"input.nope","as":"i"},{"id":"b","type":"join"}]`,
			`[{"from":"a","outcome":"loop","to":"b"},{"from":"a","outcome":"done","to":"__end__"},{"from":"b","outcome":"done","to":"a"}]`, "invalid_foreach_source", "nodes[0].over"},
		{"foreach collect_to", `[{"id":"a","type":"foreach","over":"input.x","as":"i","item_error":{"action":"collect","collect_to":"state.nope"}},{"id":"b","type":"join"}]`,
			`[{"from":"a","outcome":"loop","to":"b"},{"from":"a","outcome":"done","to":"__end__"},{"from":"a","outcome":"completed_with_errors","to":"__end__"},{"from":"b","outcome":"done","to":"a"}]`,
			"invalid_foreach_collect_destination", "nodes[0].item_error.collect_to"},
		{"end outcome", `[{"id":"a","type":"end","outcome":"maybe"}]`, `[]`, "undeclared_workflow_outcome", "nodes[0].outcome"},
		{"interrupt kind", `[{"id":"a","type":"interrupt","outcomes":["submitted"]}]`, `[{"from":"a","outcome":"submitted","to":"__end__"}]`, "draft_invalid", "nodes[0].kind"},
		{"interrupt resume", `[{"id":"a","type":"interrupt","kind":"k","resume":[{"source":"v","target":"state.nope"}]}]`, `[{"from":"a","outcome":"submitted","to":"__end__"}]`,
			"invalid_interrupt_destination", "nodes[0].resume[0].target"},
		{"subgraph workflow", `[{"id":"a","type":"subgraph"}]`, `[{"from":"a","outcome":"ok","to":"__end__"}]`, "draft_invalid", "nodes[0].workflow"},
		{"condition", `[{"id":"a","type":"condition","check":{"op":"and","args":[]}}]`, `[{"from":"a","outcome":"true","to":"__end__"},{"from":"a","outcome":"false","to":"__end__"}]`,
			"empty_condition_args", "nodes[0].check"},
		{"call input", `[{"id":"a","type":"node","node":"fx.default.echo","input":[{"target":"colour","value":1}]}]`,
			`[{"from":"a","outcome":"ok","to":"__end__"},{"from":"a","outcome":"error","to":"__end__"}]`, "invalid_node_input_field", "nodes[0].input[0].target"},
		{"unreachable", `[{"id":"a","type":"join"},{"id":"b","type":"join"}]`, `[{"from":"a","outcome":"done","to":"__end__"},{"from":"b","outcome":"done","to":"__end__"}]`, "unreachable_step", "nodes[1]"},
		{"missing route", `[{"id":"a","type":"join"}]`, `[]`, "missing_outcome_edge", "nodes[0]"},
		{"loop", `[{"id":"a","type":"join"}]`, `[{"from":"a","outcome":"done","to":"a"}]`, "loop_without_exit", "nodes[0]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			diags := workflow.ValidatePlan(plan(tc.nodes, tc.edges), fixtures)
			for _, dg := range diags {
				if dg.Code == tc.code && dg.Path == tc.path {
					return
				}
			}
			t.Fatalf("no %s at %s in:\n%s", tc.code, tc.path, describe(diags))
		})
	}
}

func TestCheckPlanNeedsNoCapabilities(t *testing.T) {
	is := is.New(t)
	p := planOf(t, useDraft)
	p.Nodes[0].Node = "gone.tool" // unknown, but CheckPlan does not look capabilities up
	is.Equal(workflow.Blocking(workflow.CheckPlan(p)), nil)
	diags := workflow.Blocking(workflow.ValidatePlan(p, fixtures))
	is.Equal(len(diags), 1)
	is.Equal(diags[0].Code, "unknown_node_def")
	is.Equal(diags[0].Path, "nodes[0].node")
}

// An error routed straight to the end completes a failed call's run ok:
// a warning, at the route, that does not block compiling; routed to a
// step, or an end step with an outcome, it is none.
func TestAnErrorRoutedToTheEndIsAWarning(t *testing.T) {
	is := is.New(t)
	d, diags := parse(t, useDraft)
	is.Equal(diags, nil)
	found := workflow.ValidateDraft(d, fixtures)
	is.Equal(len(found), 1)
	is.Equal(found[0].Code, "error_routed_to_end")
	is.Equal(found[0].Severity, workflow.SeverityWarning)
	is.Equal(found[0].Path, "routes.call.error")
	is.Equal(*found[0].StepID, "call")
	is.True(found[0].RepairHint != nil) // it says how to fix it
	_, err := workflow.Compile(d)
	is.NoErr(err) // a warning does not block

	failing := strings.Replace(useDraft, `"error":"__end__"`, `"error":"failed"`, 1)
	failing = strings.Replace(failing, `"steps":{`, `"steps":{"failed":{"use":"wf.std.runtime_error","input":[{"target":"message","value":"echo failed"},{"target":"details","path":"context.prior_error"}]},`, 1)
	failing = strings.Replace(failing, `"routes":{`, `"routes":{"failed":{"ok":"__end__"},`, 1)
	d, diags = parse(t, failing)
	is.Equal(diags, nil)
	is.Equal(workflow.ValidateDraft(d, fixtures), nil) // routed to a failing step, reading context.prior_error: nothing to say
}
