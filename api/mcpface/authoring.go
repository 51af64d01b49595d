package mcpface

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflow/mcpflow/api/contract"
	mfrpc "github.com/mcpflow/mcpflow/api/jsonrpc"
	"github.com/mcpflow/mcpflow/api/protocol"
)

// The authoring tools, offered where server.mcp.authoring is on: with
// them an agent builds, fixes, saves and deploys the workflow it then
// calls. Each is a family of operations, its "op" argument picking one;
// each operation calls one workflow API method (the arguments given pick
// which, where it has two), through the same table as /ws, its arguments
// that method's params. So the contract checks them, and the tool answers
// what the method answers: the diagnostics with their repair hints and
// the next call to make, as text and, whole, as structuredContent.
const (
	toolSearchCapabilities = "mcpflow_search_capabilities"
	toolDraft              = "mcpflow_draft"
	toolDraftStep          = "mcpflow_draft_step"
	toolDraftBind          = "mcpflow_draft_bind"
	toolDraftRoute         = "mcpflow_draft_route"
	toolPublish            = "mcpflow_publish"
)

// authoringTool is one authoring tool: its operations and the
// properties of its arguments beside op.
type authoringTool struct {
	name, title, description string
	props                    map[string]any
	required                 []string
	readOnly                 bool
	ops                      []authoringOp
}

// authoringOp is one operation of a tool: the methods it may call, the
// first whose pick holds for the arguments (a nil pick always holds).
type authoringOp struct {
	name     string
	variants []variant
}

// variant is one method an operation calls; params, where set, makes
// its params from the tool's arguments (else they are the arguments less
// op), and view, where set, the part of its result the tool answers.
type variant struct {
	method string
	pick   func(args arguments) bool
	params func(args arguments) (arguments, error)
	view   func(result json.RawMessage) (json.RawMessage, error)
}

// Schema fragments of the tools' arguments.
var (
	str         = map[string]any{"type": "string"}
	anObject    = map[string]any{"type": "object"}
	stringList  = map[string]any{"type": "array", "items": str}
	stringMap   = map[string]any{"type": "object", "additionalProperties": str}
	objects     = map[string]any{"type": "array", "items": anObject}
	workspaceID = described(str, "The draft workspace's id (you choose it at create).")
	revision    = described(map[string]any{"type": "integer", "minimum": 1},
		"The workspace revision the edit applies to; the current one when omitted. An edit at a stale revision is refused and changes nothing.")
	stepID = described(str, "The step's id.")
)

func described(schema map[string]any, description string) map[string]any {
	out := map[string]any{"description": description}
	for k, v := range schema {
		out[k] = v
	}
	return out
}

// opSchema is the op argument of a tool of those operations.
func opSchema(ops []authoringOp, description string) map[string]any {
	names := make([]any, len(ops))
	for i, o := range ops {
		names[i] = o.name
	}
	return map[string]any{"type": "string", "enum": names, "description": description}
}

// stepKinds are the nine kinds of step (docs/language.md, section 8).
var stepKinds = []any{"use", "when", "choose", "match", "foreach", "join", "end", "interrupt", "subgraph"}

var authoring = []authoringTool{
	{name: toolSearchCapabilities, title: "Search capabilities", readOnly: true,
		description: "Finds the capabilities (upstream MCP tools and built-ins) a workflow's use step can call. " +
			"op search lists those matching query (and source_id, limit); op inspect shows one by qualified_name: its input and output schemas, outcomes and hints for wrapping it; " +
			"op reducers lists the built-in reducers a state property may name (its reducer keyword) to combine the writes to it, e.g. a list each write appends to. " +
			"A use step names a capability by its qualified_name.",
		props: map[string]any{"query": str, "source_id": str, "limit": map[string]any{"type": "integer", "minimum": 1}, "cursor": str,
			"qualified_name": described(str, "The capability to inspect, as search lists it.")},
		ops: []authoringOp{
			{name: "search", variants: []variant{{method: protocol.MethodCapabilitiesList}}},
			{name: "inspect", variants: []variant{{method: protocol.MethodCapabilitiesInspect}}},
			{name: "reducers", variants: []variant{{method: protocol.MethodSourcesInspect, params: reducersParams, view: reducersView}}},
		}},
	{name: toolDraft, title: "Create, read, check and edit a draft workflow",
		description: "Works on a draft workflow in a workspace: its document has name, input_schema, state_schema, output_schema, outcomes, output, start, steps and routes. " +
			"op create: a workspace_id and a name (and title, schemas, outcomes), or capability_name to scaffold a workflow around one capability. " +
			"op get (include_draft for the document), list, validate, compile (the plan it runs as). " +
			"op contract sets input_schema, state_schema, output_schema and outcomes; name renames it; patch applies RFC 6902 operations to the document (patch); replace puts a whole document (draft); delete removes the workspace. " +
			"validate and patch also take a document given whole as draft, without a workspace. " +
			"Each answer shows the revision, the status (valid or invalid), every diagnostic with its repair hint, and the next call to make. " +
			"Add steps with mcpflow_draft_step, wire data with mcpflow_draft_bind, route outcomes with mcpflow_draft_route, then save and deploy with mcpflow_publish.",
		props: map[string]any{
			"workspace_id": workspaceID, "revision": revision, "name": described(str, "The workflow's name."), "title": str,
			"capability_name": described(str, "create: scaffold the workflow around this capability."),
			"input_schema":    described(anObject, "JSON Schema of the workflow's input."),
			"state_schema":    described(anObject, "JSON Schema of the workflow's state. A property's reducer keyword names how writes to it combine (a list each write appends to, a sum): mcpflow_search_capabilities op reducers lists them."),
			"output_schema":   described(anObject, "JSON Schema of the workflow's output."),
			"outcomes":        described(stringList, "The outcomes the workflow may end with; [\"ok\"] when left out."),
			"include_draft":   described(map[string]any{"type": "boolean"}, "get: include the draft document."),
			"draft":           described(anObject, "replace: the whole document; validate, patch: a document to check or patch without a workspace."),
			"patch":           described(objects, "RFC 6902 operations, e.g. [{\"op\":\"replace\",\"path\":\"/steps/check/when/if/left/path\",\"value\":\"input.urgent\"}]."),
		},
		ops: []authoringOp{
			{name: "create", variants: []variant{
				{method: protocol.MethodWorkspaceFromCapability, pick: given("capability_name")},
				{method: protocol.MethodWorkspaceCreateEmpty}}},
			{name: "get", variants: []variant{{method: protocol.MethodWorkspaceGet}}},
			{name: "list", variants: []variant{{method: protocol.MethodWorkspaceList}}},
			{name: "validate", variants: []variant{
				{method: protocol.MethodDraftsValidate, pick: given("draft")},
				{method: protocol.MethodWorkspaceValidate}}},
			{name: "compile", variants: []variant{{method: protocol.MethodWorkspaceCompile}}},
			{name: "contract", variants: []variant{{method: protocol.MethodWorkspaceSetContract}}},
			{name: "name", variants: []variant{{method: protocol.MethodWorkspaceSetName}}},
			{name: "patch", variants: []variant{
				{method: protocol.MethodDraftsPatch, pick: given("draft")},
				{method: protocol.MethodWorkspacePatch}}},
			{name: "replace", variants: []variant{{method: protocol.MethodWorkspaceReplaceDocument}}},
			{name: "delete", variants: []variant{{method: protocol.MethodWorkspaceDelete}}},
		}},
	{name: toolDraftStep, title: "Add, update or remove a step of a draft",
		description: "Adds (op add), updates (op update) or removes (op remove) one step of a draft workspace; kind is one of the nine kinds and spec its payload: " +
			`use {"capability_name":"demo.default.echo","input_bindings":[{"target":"message","path":"context.tag"}],"bind_outputs":{"message":"state.echoes"},"retry":1,"timeout_seconds":30} (update takes desc, input, retry, timeout_seconds); ` +
			`when {"if":{"op":"eq","left":{"path":"input.urgent"},"right":{"value":true}},"then":"ask","otherwise":"__end__"}; ` +
			`choose {"clauses":[{"if":CONDITION,"then":"step"}],"default":"step"}; ` +
			`match {"value":"input.kind","cases":[{"equals":"bug","then":"fix"}],"default":"__end__"}; ` +
			`foreach {"over":"input.tags","as":"tag"} (its item is context.tag; route loop to the body, whose last step routes back to the foreach, and done onward); ` +
			`join {}; end {"outcome":"rejected"}; ` +
			`interrupt {"kind":"approval","request":[{"target":"message","value":"Ship it?"}],"resume":[{"source":"approved","target":"state.approved"}],"resume_schema":{"type":"object","properties":{"approved":{"type":"boolean"}}}} (outcome submitted); ` +
			`subgraph {"workflow":{"artifact_id":"child","version":1},"input":[...],"output":[...]}. ` +
			"routes maps each outcome of the step (use: ok and error; foreach: loop and done; interrupt: submitted or its outcomes; subgraph: the child's) to the next step id or __end__; when, choose and match carry their targets in spec. " +
			"after routes an existing step's outcome to the new step. The first step added is the start. The answer shows the diagnostics with their repair hints and the next call to make.",
		props: map[string]any{
			"workspace_id": workspaceID, "revision": revision, "step_id": stepID,
			"kind":   map[string]any{"type": "string", "enum": stepKinds, "description": "The step's kind (add and update)."},
			"spec":   described(anObject, "The kind's payload, as the description shows."),
			"routes": described(stringMap, "add: outcome → next step id or __end__, e.g. {\"ok\":\"next\",\"error\":\"__end__\"}."),
			"after": map[string]any{"type": "object", "description": "add: route this step's outcome (ok when omitted) to the new step.",
				"properties": map[string]any{"step_id": str, "outcome": str}, "required": []any{"step_id"}},
		},
		required: []string{"workspace_id", "step_id"},
		ops: []authoringOp{
			{name: "add", variants: []variant{
				{method: protocol.MethodWorkspaceAddStepFromCapability, pick: kindIs("use"), params: addUseParams},
				{method: protocol.MethodWorkspaceAddStep, params: addStepParams}}},
			{name: "update", variants: []variant{
				{method: protocol.MethodWorkspaceUpdateCapabilityStep, pick: kindIs("use"), params: updateUseParams},
				{method: protocol.MethodWorkspacePatch, params: replaceStepParams}}},
			{name: "remove", variants: []variant{{method: protocol.MethodWorkspaceRemoveStep, params: removeStepParams}}},
		}},
	{name: toolDraftBind, title: "Wire data into and out of a draft's steps",
		description: "Wires data in a draft workspace. op bind wires one field of a use step: source_path input.X or state.X to target_path Y (a field of its capability's input), local.Y to state.X (its output into state), or local.Y to output.Z; it declares the field in the workflow's schemas from the capability's. " +
			`op inputs sets a step's input bindings ([{"target":"message","path":"context.tag"}, {"target":"n","value":3}]) or input_map ({"input.text":"text"}); ` +
			`op outputs sets its output bindings ([{"source":"message","target":"state.echoes"}]) or output_map ({"message":"state.echoes"}); ` +
			`op workflow_output sets the workflow's output bindings ([{"target":"echoes","path":"state.echoes"}]) or output_map; ` +
			"op remove removes a step's input targets (inputs) or output sources (outputs). A map with merge true updates the bindings instead of replacing them. " +
			"Paths: input.X (the workflow input), state.X (state), context.X (a foreach's item, by its as).",
		props: map[string]any{
			"workspace_id": workspaceID, "revision": revision, "step_id": stepID,
			"source_path": str, "target_path": str,
			"bindings":   described(objects, "The complete binding list."),
			"input_map":  described(stringMap, "Graph path → the step's input field."),
			"output_map": described(stringMap, "outputs: the step's output field → state path; workflow_output: output field → path."),
			"merge":      map[string]any{"type": "boolean"},
			"inputs":     described(stringList, "remove: the input targets to unbind."),
			"outputs":    described(stringList, "remove: the output sources to unbind."),
		},
		required: []string{"workspace_id"},
		ops: []authoringOp{
			{name: "bind", variants: []variant{{method: protocol.MethodWorkspaceBind}}},
			{name: "inputs", variants: []variant{
				{method: protocol.MethodWorkspaceSetStepInputMap, pick: given("input_map")},
				{method: protocol.MethodWorkspaceSetStepInputBindings}}},
			{name: "outputs", variants: []variant{
				{method: protocol.MethodWorkspaceSetStepOutputMap, pick: given("output_map")},
				{method: protocol.MethodWorkspaceSetStepOutputBindings}}},
			{name: "workflow_output", variants: []variant{
				{method: protocol.MethodWorkspaceSetWorkflowOutputMap, pick: given("output_map")},
				{method: protocol.MethodWorkspaceSetWorkflowOutputBindings}}},
			{name: "remove", variants: []variant{{method: protocol.MethodWorkspaceRemoveBinding}}},
		}},
	{name: toolDraftRoute, title: "Route a draft's step outcomes",
		description: "Routes outcomes in a draft workspace: op set routes step_id's outcome to target (a step id or __end__); op remove removes that route; " +
			`op branch sets several routes of step_id at once (routes {"ok":"next","error":"__end__"}); op handle routes several steps' outcomes (branches [{"step_id":"a","outcome":"error"}]) to one target; ` +
			"op start makes step_id the first step.",
		props: map[string]any{
			"workspace_id": workspaceID, "revision": revision, "step_id": stepID,
			"outcome":  str,
			"target":   described(str, "A step id, or __end__ to finish the workflow."),
			"routes":   described(stringMap, "branch: outcome → step id or __end__."),
			"branches": described(objects, "handle: the step outcomes, [{\"step_id\":…,\"outcome\":…}], to route to target."),
		},
		required: []string{"workspace_id"},
		ops: []authoringOp{
			{name: "set", variants: []variant{{method: protocol.MethodWorkspaceSetRoute}}},
			{name: "remove", variants: []variant{{method: protocol.MethodWorkspaceRemoveRoute}}},
			{name: "branch", variants: []variant{{method: protocol.MethodWorkspaceBranch}}},
			{name: "handle", variants: []variant{{method: protocol.MethodWorkspaceHandle}}},
			{name: "start", variants: []variant{{method: protocol.MethodWorkspaceSetStart}}},
		}},
	{name: toolPublish, title: "Save a draft and deploy it",
		description: "op save saves a valid draft workspace as an immutable artifact version (artifact_id, version, title, outcomes; description); op wrapper saves it as a wrapper of one capability. " +
			"The answer names the sources the artifact needs and the deploy call to make. " +
			"op deploy deploys an artifact version bound to connections (artifact_id, artifact_version, bindings {logical source: connection}; deployment_id, <artifact_id>.default when omitted), or a whole deployment object: it is offered at once as a tool of this server, named after the deployment.",
		props: map[string]any{
			"workspace_id": workspaceID, "artifact_id": str, "version": map[string]any{"type": "integer", "minimum": 1},
			"title": str, "description": str, "outcomes": stringList,
			"artifact_version": map[string]any{"type": "integer", "minimum": 1},
			"bindings":         described(stringMap, "deploy: logical source → connection id, as save suggests."),
			"deployment_id":    str,
			"deployment":       described(anObject, "deploy: a whole deployment, as workflow.deployments.inspect answers one."),
		},
		ops: []authoringOp{
			{name: "save", variants: []variant{{method: protocol.MethodWorkspaceCreateArtifact}}},
			{name: "wrapper", variants: []variant{{method: protocol.MethodWorkspaceCreateWrapper}}},
			{name: "deploy", variants: []variant{{method: protocol.MethodDeploymentsSave, params: deployParams}}},
		}},
}

// methods are the methods each of t's operations may call, in t's order.
func (t authoringTool) methods() [][]string {
	out := make([][]string, len(t.ops))
	for i, o := range t.ops {
		for _, v := range o.variants {
			out[i] = append(out[i], v.method)
		}
	}
	return out
}

// op is t's operation named name.
func (t authoringTool) op(name string) (authoringOp, bool) {
	i := slices.IndexFunc(t.ops, func(o authoringOp) bool { return o.name == name })
	if i < 0 {
		return authoringOp{}, false
	}
	return t.ops[i], true
}

// variant is the variant of o the arguments pick.
func (o authoringOp) variant(a arguments) variant {
	for _, v := range o.variants {
		if v.pick == nil || v.pick(a) {
			return v
		}
	}
	return o.variants[len(o.variants)-1]
}

// schema is t's input schema: op, then its own properties.
func (t authoringTool) schema() map[string]any {
	props := map[string]any{"op": opSchema(t.ops, "The operation.")}
	for k, v := range t.props {
		props[k] = v
	}
	return map[string]any{"type": "object", "properties": props, "required": append([]any{"op"}, anys(t.required)...)}
}

// authoringTools are the authoring tools as companions. A tool is listed
// where its principal may call one of its operations; an operation it may
// not call is refused by the method table, as on /ws.
func (f *Face) authoringTools(s *served) []companion {
	out := make([]companion, 0, len(authoring))
	for _, t := range authoring {
		no, destructive := false, !t.readOnly
		out = append(out, companion{authoring: true, toolEntry: toolEntry{
			tool: &mcp.Tool{Name: t.name, Title: t.title, Description: t.description, InputSchema: t.schema(),
				Annotations: &mcp.ToolAnnotations{ReadOnlyHint: t.readOnly, IdempotentHint: t.readOnly, DestructiveHint: &destructive, OpenWorldHint: &no}},
			handler: f.authoringHandler(s, t), anyOf: t.methods(),
		}})
	}
	return out
}

// authoringHandler calls the method the op and arguments of a call pick,
// at the workspace's current revision where the method takes one and
// the call gave none, and answers its result as authoredResult does.
func (f *Face) authoringHandler(s *served, t authoringTool) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var args arguments
		if bad := decodeArgs(req, &args); bad != nil {
			return bad, nil
		}
		o, ok := t.op(args.str("op"))
		if !ok {
			return toolError("op must be one of %s", strings.Join(opNames(t), ", ")), nil
		}
		v := o.variant(args)
		params := args.without("op")
		if v.params != nil {
			var err error
			if params, err = v.params(args); err != nil {
				return toolError("%s %s: %v", t.name, o.name, err), nil
			}
		}
		if err := atRevision(ctx, s, v.method, params); err != nil {
			var e *mfrpc.Error
			if errors.As(err, &e) && e.Code == mfrpc.Forbidden {
				return toolError("%s %s: give revision (the workspace's revision, as the last answer said): reading the current one needs the read scope (%s)", t.name, o.name, said(e)), nil
			}
			return refusedOrError(err)
		}
		var res json.RawMessage
		if err := s.api.Call(ctx, v.method, params, &res); err != nil {
			return refusedOrError(err)
		}
		if v.view != nil {
			var err error
			if res, err = v.view(res); err != nil {
				return nil, err
			}
		}
		return authoredResult(res), nil
	}
}

func opNames(t authoringTool) []string {
	out := make([]string, len(t.ops))
	for i, o := range t.ops {
		out[i] = o.name
	}
	return out
}

// atRevision sets params' revision to the workspace's current one
// (workflow.draft_workspaces.get) where method takes a revision and
// params have none, as the CLI does without --revision.
func atRevision(ctx context.Context, s *served, method string, params arguments) error {
	if params.has("revision") || !slices.Contains(contract.Default().Params(method), "revision") {
		return nil
	}
	id := params.str("workspace_id")
	if id == "" {
		return nil // the contract says what is missing
	}
	var w protocol.WorkspaceResult
	if err := s.api.Call(ctx, protocol.MethodWorkspaceGet, protocol.GetWorkspaceParams{WorkspaceID: id}, &w); err != nil {
		return err
	}
	params["revision"] = json.RawMessage(strconv.Itoa(w.Revision))
	return nil
}
