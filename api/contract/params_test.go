package contract_test

import (
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/api/contract"
)

func TestValidateParamsNamesTheOffendingKeyAndWhy(t *testing.T) {
	const (
		start   = "workflow.runs.start"
		create  = "workflow.draft_workspaces.create_from_capability"
		health  = "workflow.health"
		save    = "workflow.deployments.save"
		addStep = "workflow.draft_workspaces.add_step"
	)
	const (
		ws   = `"workspace_id":"w1","capability_name":"fixture.default.counter"`
		step = `"workspace_id":"w1","revision":1,"step_id":"check"`
	)
	tests := []struct {
		name   string
		method string
		params string
		want   string // "" when the params are valid
	}{
		{"runs.start minimal", start, `{"deployment_id":"d1"}`, ""},
		{"runs.start complete", start, `{"deployment_id":"d1","workflow_input":{"x":[1,{"y":null}]},"trace_range":{"start":0,"limit":100}}`, ""},
		{"runs.start null trace_range", start, `{"deployment_id":"d1","trace_range":null}`, ""},
		{"runs.start unknown key", start, `{"deployment_id":"d1","foo":1}`, `params: unknown key "foo"`},
		{"runs.start unknown keys", start, `{"deployment_id":"d1","b":1,"a":2}`, `params: unknown keys "a", "b"`},
		{"runs.start missing required key", start, `{}`, `params: missing required key "deployment_id"`},
		{"runs.start absent params", start, ``, `params: missing required key "deployment_id"`},
		{"runs.start wrong type", start, `{"deployment_id":5}`, "params.deployment_id: must be string, got integer"},
		{"runs.start empty string (minLength)", start, `{"deployment_id":""}`, "params.deployment_id: must not be empty"},
		{"runs.start workflow_input not an object", start, `{"deployment_id":"d1","workflow_input":[]}`, "params.workflow_input: must be object, got array"},
		{"runs.start nested ref, maximum", start, `{"deployment_id":"d1","trace_range":{"limit":500}}`, "params.trace_range.limit: must be <= 100"},
		{"runs.start nested ref, minimum", start, `{"deployment_id":"d1","trace_range":{"start":-1}}`, "params.trace_range.start: must be >= 0"},
		{"runs.start nested ref, integer", start, `{"deployment_id":"d1","trace_range":{"limit":1.5}}`, "params.trace_range.limit: must be integer, got number"},
		{"runs.start nested additionalProperties", start, `{"deployment_id":"d1","trace_range":{"foo":1}}`, `params.trace_range: unknown key "foo"`},
		{"runs.start anyOf with no matching type", start, `{"deployment_id":"d1","trace_range":5}`, "params.trace_range: must be TraceRangeParams or null, got integer"},
		{"runs.start positional params", start, `["d1"]`, "params: must be object, got array"},
		{"runs.start params not JSON", start, `{`, "params: must be valid JSON"},

		{"create_from_capability minimal", create, `{` + ws + `}`, ""},
		{"create_from_capability with bindings", create, `{` + ws + `,"name":"counter","input":[{"path":"input.x","target":"x"},{"target":"y","value":{"any":[1,"json"]}},` +
			`{"target":".","expression":{"kind":"path","path":"state.x"}}],"output":[{"source":"count","target":"state.count"}],"input_map":{"input.a":"a"},"error_message_source":42}`, ""},
		{"create_from_capability missing keys", create, `{"name":"x"}`, `params: missing required keys "workspace_id", "capability_name"`},
		{"create_from_capability empty capability", create, `{"workspace_id":"w1","capability_name":""}`, "params.capability_name: must not be empty"},
		{"create_from_capability binding of the wrong kind", create, `{` + ws + `,"input":[{"path":5,"target":"x"}]}`, "params.input[0].path: must be string or object, got integer"},
		{"create_from_capability ambiguous binding", create, `{` + ws + `,"input":[{"target":"x"}]}`, "params.input[0]: must be InputPathBinding, InputValueBinding or InputExpressionBinding"},
		{"create_from_capability structural path enum", create, `{` + ws + `,"input":[{"path":{"root":"disk","parts":[]},"target":"x"}]}`, `params.input[0].path.root: must be "input", "state" or "context"`},
		{"create_from_capability structural path const", create, `{` + ws + `,"output":[{"source":{"root":"input","parts":[]},"target":"state.x"}]}`, `params.output[0].source.root: must be "local"`},
		{"create_from_capability minItems", create, `{` + ws + `,"output":[{"source":"x","target":{"root":"state","parts":[]}}]}`, "params.output[0].target.parts: must have at least 1 items"},
		{"create_from_capability discriminated expression", create, `{` + ws + `,"input":[{"target":"x","expression":{"kind":"path","path":3}}]}`, "params.input[0].expression.path: must be string or object, got integer"},
		{"create_from_capability odd map key", create, `{` + ws + `,"input_map":{"a.b":3}}`, `params.input_map["a.b"]: must be string, got integer`},
		{"create_from_capability array instead of list", create, `{` + ws + `,"input":{}}`, "params.input: must be array of StepInputBinding or null, got object"},

		{"health with {}", health, `{}`, ""},
		{"health with null", health, `null`, ""},
		{"health without params", health, ``, ""},
		{"health with a key", health, `{"verbose":true}`, `params: unknown key "verbose"`},

		{"deployments.save nested deployment", save, `{"deployment":{"id":"d1","artifact_id":"a1","artifact_version":1,"drift_policy":"strict","bindings":[{"logical_source":"fixture","concrete_source":"fixture.default"}]}}`, ""},
		{"deployments.save deployment not an object", save, `{"deployment":"d1"}`, "params.deployment: must be object, got string"},
		{"deployments.save missing deployment", save, `{}`, `params: missing required key "deployment"`},

		{"add_step discriminated condition", addStep, `{` + step + `,"step":{"when":{"if":{"op":"eq","left":{"path":"input.x"},"right":{"value":1}},"then":"done"}}}`, ""},
		{"add_step nested condition", addStep, `{` + step + `,"step":{"when":{"if":{"op":"not","arg":{"op":"exists","path":"state.x"}},"then":"done"}}}`, ""},
		{"add_step condition picked by its op", addStep, `{` + step + `,"step":{"when":{"if":{"op":"gt","left":{"path":"input.x"}},"then":"done"}}}`, `params.step.when.if: missing required key "right"`},
		{"add_step unknown op", addStep, `{` + step + `,"step":{"when":{"if":{"op":"xor"},"then":"done"}}}`,
			"params.step.when.if: must be ExistsCondition, NotCondition, VariadicCondition or BinaryCondition"},

		{"set_contract revision", "workflow.draft_workspaces.set_contract", `{"workspace_id":"w1","revision":0}`, "params.revision: must be >= 1"},
		{"runs.list enum inside anyOf", "workflow.runs.list", `{"status":"bogus"}`, `params.status: must be "completed", "failed", "interrupted", "running" or "cancelled"`},
		{"capabilities.list maximum", "workflow.capabilities.list", `{"limit":201}`, "params.limit: must be <= 200"},
		{"add_step_from_capability exclusiveMinimum", "workflow.draft_workspaces.add_step_from_capability",
			`{"workspace_id":"w1","revision":1,"step_id":"s","capability_name":"c","timeout_seconds":0}`, "params.timeout_seconds: must be > 0"},
	}
	c := contract.Default()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			is := is.New(t)
			err := c.ValidateParams(tt.method, []byte(tt.params))
			if tt.want == "" {
				is.NoErr(err)
				return
			}
			is.True(err != nil)
			is.Equal(err.Error(), tt.want)
		})
	}
}

func TestValidationErrorsSplitPathAndReason(t *testing.T) {
	is := is.New(t)
	err := contract.Default().ValidateParams("workflow.draft_workspaces.set_contract", []byte(`{"workspace_id":"w1","revision":0}`))
	verr, ok := err.(*contract.ValidationError)
	is.True(ok)
	is.Equal(*verr, contract.ValidationError{Path: "params.revision", Reason: "must be >= 1"})
}

// The manifest declares deployments.save's deployment as a bare object; the shape it is read
// as is checked with ValidateComponent.
func TestValidateComponentChecksNestedShapes(t *testing.T) {
	is := is.New(t)
	c := contract.Default()
	good := map[string]any{"id": "d1", "artifact_id": "a1", "artifact_version": 1, "drift_policy": "strict",
		"bindings": []any{map[string]any{"logical_source": "fixture", "concrete_source": "fixture.default"}}}
	is.NoErr(c.ValidateComponent("WorkflowDeploymentPayload", good))

	good["bindings"] = []any{good["bindings"].([]any)[0], map[string]any{"logical_source": 3, "concrete_source": "x"}}
	is.Equal(c.ValidateComponent("WorkflowDeploymentPayload", good).Error(), "WorkflowDeploymentPayload.bindings[1].logical_source: must be string, got integer")

	is.True(c.ValidateComponent("NoSuchComponent", good) != nil)
}

// A deployment's retention is an mcpflow extension: marked so in the
// components rpc.discover serves, and checked as the service reads it.
func TestADeploymentRetentionIsAnExtensionInDiscover(t *testing.T) {
	is := is.New(t)
	c := contract.Default()
	deployment := map[string]any{"id": "d1", "artifact_id": "a1", "artifact_version": 1, "drift_policy": "block", "bindings": []any{},
		"retention": map[string]any{"finished_seconds": 0}}
	is.NoErr(c.ValidateComponent("WorkflowDeploymentPayload", deployment)) // 0: for ever
	deployment["retention"] = map[string]any{"finished_seconds": -1}
	is.True(c.ValidateComponent("WorkflowDeploymentPayload", deployment) != nil) // negative
	deployment["retention"] = map[string]any{"days": 3}
	is.True(c.ValidateComponent("WorkflowDeploymentPayload", deployment) != nil) // unknown field

	doc, err := contract.OpenRPC(c.Methods(), contract.Info{Title: "mcpflow", Version: "test"})
	is.NoErr(err)
	schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
	retention := schemas["WorkflowDeploymentPayload"].(map[string]any)["properties"].(map[string]any)["retention"].(map[string]any)
	is.Equal(retention["x-extension"], true) // marked in rpc.discover
}
