package integration

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/api/client"
	"github.com/mcpflow/mcpflow/api/contract"
	"github.com/mcpflow/mcpflow/api/jsonrpc"
	p "github.com/mcpflow/mcpflow/api/protocol"
	"github.com/mcpflow/mcpflow/fakes"
)

// approvalDraft waits for an approval and returns it as its output.
const approvalDraft = `{"name":"approval","start":"approve","outcomes":["ok"],
	"input_schema":{"type":"object","properties":{}},
	"state_schema":{"type":"object","properties":{"approved":{"type":"boolean"}}},
	"output_schema":{"type":"object","properties":{"approved":{}}},
	"steps":{"approve":{"interrupt":{"kind":"approval","request":[{"target":"message","value":"Ship it?"}],
		"resume":[{"source":"approved","target":"state.approved"}],
		"resume_schema":{"type":"object","properties":{"approved":{"type":"boolean"}},"required":["approved"]}}}},
	"routes":{"approve":{"submitted":"__end__"}}}`

// conformanceCase is one method of the contract: a successful call built
// from the state the calls before it made, and a failing call with the
// error it must answer.
type conformanceCase struct {
	method string
	params func() any // the successful call's params (may prepare state first)
	bad    any        // the failing call's params
	code   int        // the failing call's error code
	data   string     // and, for 5000, its data.code
}

// conformance drives the calls of one connection and keeps the state
// later calls need: the revision of each workspace, ids of runs, a plan.
type conformance struct {
	t   *testing.T
	c   *client.Client
	rev map[string]int            // workspace id -> revision
	got map[string]map[string]any // method -> its successful result
	// runEvents are the workflow.runs.event notifications received.
	runEvents chan map[string]any
}

// notified checks a notification the server pushed against its schema
// and keeps run events for followed.
func (cf *conformance) notified(n client.Notification) {
	var params map[string]any
	if err := json.Unmarshal(n.Params, &params); err != nil {
		cf.t.Errorf("notification %s: %v", n.Method, err)
		return
	}
	if err := contract.Default().ValidateNotification(n.Method, params); err != nil {
		cf.t.Errorf("notification %s %s does not match its schema: %v", n.Method, n.Params, err)
	}
	if n.Method == p.NotifyRunEvent {
		select {
		case cf.runEvents <- params:
		default: // enough to check with
		}
	}
}

// followed waits until the events of run id have come, numbered from 1
// without a gap, up to the one that ends it.
func (cf *conformance) followed(id any) {
	cf.t.Helper()
	deadline := time.After(30 * time.Second)
	var next float64 = 1
	for {
		select {
		case ev := <-cf.runEvents:
			if ev["run_id"] != id {
				continue
			}
			if ev["sequence"] != next {
				cf.t.Errorf("run %v: event %v, want %v", id, ev["sequence"], next)
			}
			next++
			if st, _ := ev["status"].(map[string]any); st["terminal"] == true {
				return
			}
		case <-deadline:
			cf.t.Errorf("run %v: no end after %v events", id, next-1)
			return
		}
	}
}

// call invokes method and decodes its raw result into any.
func (cf *conformance) call(method string, params any) (any, json.RawMessage, error) {
	cf.t.Helper()
	var raw json.RawMessage
	if err := cf.c.Call(testContext(cf.t), method, params, &raw); err != nil {
		return nil, nil, err
	}
	var result any
	if err := json.Unmarshal(raw, &result); err != nil {
		return nil, raw, err
	}
	if obj, ok := result.(map[string]any); ok {
		ws, _ := obj["workspace_id"].(string)
		rev, isNum := obj["revision"].(float64)
		if ws != "" && isNum && obj["status"] != "conflict" {
			cf.rev[ws] = int(rev)
		}
	}
	return result, raw, nil
}

// must makes a call that prepares state for the method under test; a
// failure is reported, and the method that needed it fails in turn.
func (cf *conformance) must(method string, params any) map[string]any {
	cf.t.Helper()
	result, raw, err := cf.call(method, params)
	if err != nil {
		cf.t.Errorf("setup %s %s: %v", method, mustJSON(params), err)
		return map[string]any{}
	}
	obj, ok := result.(map[string]any)
	if !ok {
		cf.t.Errorf("setup %s: result %s is no object", method, raw)
		return map[string]any{}
	}
	if obj["status"] == "conflict" {
		cf.t.Errorf("setup %s %s: conflict: %s", method, mustJSON(params), raw)
	}
	return obj
}

// at adds the workspace id and its current revision to edit params.
func (cf *conformance) at(ws string, params p.Object) p.Object {
	params["workspace_id"] = ws
	params["revision"] = cf.rev[ws]
	return params
}

// edit makes a setup edit of ws at its current revision.
func (cf *conformance) edit(ws, method string, params p.Object) map[string]any {
	cf.t.Helper()
	return cf.must(method, cf.at(ws, params))
}

// settle waits until a run has stopped and answers its status.
func (cf *conformance) settle(runID any) string {
	cf.t.Helper()
	id, _ := runID.(string)
	if id == "" {
		cf.t.Errorf("no run id to wait for")
		return ""
	}
	return settled(cf.t, cf.c, id).Status
}

// conforms makes both calls of tc and reports, precisely, whatever does
// not conform. It answers whether both held.
func (cf *conformance) conforms(tc conformanceCase) bool {
	cf.t.Helper()
	ok := true
	params := tc.params()
	result, raw, err := cf.call(tc.method, params)
	switch {
	case err != nil:
		cf.t.Errorf("%s %s: the successful call failed: %v", tc.method, mustJSON(params), err)
		ok = false
	default:
		if err := contract.Default().ValidateResult(tc.method, result); err != nil {
			cf.t.Errorf("%s %s: result %s does not match the result schema: %v", tc.method, mustJSON(params), raw, err)
			ok = false
		}
		if obj, isObj := result.(map[string]any); isObj {
			cf.got[tc.method] = obj
		}
	}

	_, raw, err = cf.call(tc.method, tc.bad)
	var rpcErr *jsonrpc.Error
	switch {
	case err == nil:
		cf.t.Errorf("%s %s: the failing call succeeded with %s", tc.method, mustJSON(tc.bad), raw)
		ok = false
	case !errors.As(err, &rpcErr):
		cf.t.Errorf("%s %s: the failing call failed without a JSON-RPC error: %v", tc.method, mustJSON(tc.bad), err)
		ok = false
	case rpcErr.Code != tc.code:
		cf.t.Errorf("%s %s: error code %d (%v), want %d", tc.method, mustJSON(tc.bad), rpcErr.Code, rpcErr, tc.code)
		ok = false
	case tc.code == jsonrpc.OperationFailed:
		data, _ := rpcErr.Data.(map[string]any)
		if data["code"] != tc.data || data["message"] == nil {
			cf.t.Errorf("%s %s: error data %s, want code %q and a message", tc.method, mustJSON(tc.bad), mustJSON(rpcErr.Data), tc.data)
			ok = false
		}
	}
	var health p.HealthResult
	if err := cf.c.Call(testContext(cf.t), p.MethodHealth, nil, &health); err != nil || health.Status != "ok" {
		cf.t.Errorf("%s: after the failing call the connection answers health with %+v, %v", tc.method, health, err)
		ok = false
	}
	return ok
}

func mustJSON(v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		return err.Error()
	}
	return string(data)
}

// TestEveryMethodConformsThroughTheRealBinary calls every method of the
// contract through /ws of the real binary, once with realistic params
// (built in the order an agent builds them: catalogs, workspaces,
// artifacts, deployments, runs, admin, deletes last) checking the result
// against the method's result schema, and once with params that must fail
// checking the error code and data; the connection keeps answering after
// each failure.
// schedule is the conformance test's schedule of deployment, firing each
// 1 January at midnight (UTC) only.
func schedule(deployment string, paused bool) p.Object {
	return p.Object{"id": "kv-sched", "deployment_id": deployment, "workflow_input": p.Object{"key": "greeting", "value": "scheduled"},
		"spec": p.Object{"cron": "0 0 1 1 *", "time_zone": "UTC"}, "overlap": "skip", "catchup_window_seconds": 60, "paused": paused}
}

func TestEveryMethodConformsThroughTheRealBinary(t *testing.T) {
	t.Parallel() // its own mcpflow: see parallelTests
	if testing.Short() {
		t.Skip("starts the real binary")
	}
	is := is.New(t)
	dir := t.TempDir()
	// A remote source behind an OAuth login, for the login methods.
	remote := fakes.NewOAuthServer(fakes.OAuthOptions{})
	t.Cleanup(remote.Close)
	cfg := config.File{Version: 1, Server: config.Server{
		Store: config.Store{Root: filepath.Join(dir, "store")},
		Sources: []config.Connection{
			stdioSource("demo.default", binary, "demo-server"),
			promptingFake("fake.a"),
			{Kind: "mcp", ID: "remote.default", Auth: &config.SourceAuth{Kind: config.AuthOAuth},
				Transport: config.Transport{Kind: config.TransportHTTP, URL: remote.URL}},
		},
		// The demo server's tools behind the MCP face, for workflow.runs.passthrough;
		// fake.a's resources and prompt (and none of its tools), for
		// workflow.sources.resources, read_resource, prompts and get_prompt.
		MCP: &config.MCP{Expose: []config.MCPExpose{{Connection: "demo.default", Prefix: "demo"},
			{Connection: "fake.a", Prefix: "fake", Resources: true, Prompts: true, Tools: &config.MCPToolFilter{Deny: []string{"*"}}}}},
	}}
	data, err := json.Marshal(cfg)
	is.NoErr(err)
	cfgPath := filepath.Join(dir, "mcpflow.json")
	is.NoErr(os.WriteFile(cfgPath, data, 0o600))
	cf := &conformance{t: t, c: dialURL(t, startProcess(t, cfgPath, "mcpflow.log").url), rev: map[string]int{}, got: map[string]map[string]any{},
		runEvents: make(chan map[string]any, 1024)}
	cf.c.OnNotification(cf.notified)

	const (
		invalidParams = jsonrpc.InvalidParams
		failed        = jsonrpc.OperationFailed
		keyError      = "KeyError"
	)
	unknownWS := func(params p.Object) p.Object {
		params["workspace_id"], params["revision"] = "no_such_ws", 1
		return params
	}
	fixed := func(params any) func() any { return func() any { return params } }
	run := func(key string) any { return cf.got[key]["run_id"] }
	var interrupted, cancelled string // runs of approval.default

	cases := []conformanceCase{
		{method: "workflow.health", params: fixed(nil),
			bad: p.Object{"verbose": true}, code: invalidParams},
		{method: "workflow.access.whoami", params: fixed(nil),
			bad: p.Object{"token": "x"}, code: invalidParams},
		{method: "workflow.admin.connections.refresh_catalog", params: func() any {
			cf.must("workflow.admin.connections.refresh_catalog", p.Object{"connection_id": "fake.a"})
			return p.Object{"connection_id": "demo.default"}
		}, bad: p.Object{"connection_id": "nope.none"}, code: failed, data: keyError},
		{method: "workflow.admin.connections.login_start", params: fixed(p.Object{"connection_id": "remote.default",
			"redirect_uri": loginRedirect, "code_challenge": loginChallenge, "state": "conformance"}),
			bad: p.Object{"connection_id": "remote.default", "redirect_uri": "https://elsewhere.example/callback",
				"code_challenge": loginChallenge, "state": "conformance"}, code: failed, data: "ValueError"},
		{method: "workflow.admin.connections.login_complete", params: func() any {
			return p.Object{"connection_id": "remote.default", "code": authorizationCode(t, cf.got["workflow.admin.connections.login_start"]["authorization_url"]),
				"code_verifier": loginVerifier, "redirect_uri": loginRedirect}
		}, bad: p.Object{"connection_id": "remote.default", "code": "no-such-code", "code_verifier": loginVerifier, "redirect_uri": loginRedirect},
			code: failed, data: "ValueError"},
		{method: "workflow.admin.secrets.rotate", params: fixed(nil),
			bad: p.Object{"key_id": "mine"}, code: invalidParams},
		{method: "workflow.admin.connections.list", params: fixed(nil),
			bad: p.Object{"connection_id": "fake.a"}, code: invalidParams},
		{method: "workflow.admin.connection_statuses.list", params: fixed(p.Object{}),
			bad: p.Object{"verbose": true}, code: invalidParams},
		{method: "workflow.sources.list", params: fixed(p.Object{"limit": 10}),
			bad: p.Object{"limit": 0}, code: invalidParams},
		{method: "workflow.sources.inspect", params: fixed(p.Object{"source_id": "fake.a"}),
			bad: p.Object{"source_id": "nope.none"}, code: failed, data: keyError},
		{method: "workflow.sources.resources", params: fixed(p.Object{"source_id": "fake.a"}),
			bad: p.Object{"source_id": "demo.default"}, code: failed, data: keyError}, // its tools only
		{method: "workflow.sources.read_resource", params: fixed(p.Object{"source_id": "fake.a", "uri": fakes.GreetingURI}),
			bad: p.Object{"source_id": "demo.default", "uri": fakes.GreetingURI}, code: failed, data: keyError},
		{method: "workflow.sources.prompts", params: fixed(p.Object{"source_id": "fake.a"}),
			bad: p.Object{"source_id": "demo.default"}, code: failed, data: keyError},
		{method: "workflow.sources.get_prompt", params: fixed(p.Object{"source_id": "fake.a", "name": "greet", "arguments": p.Object{"who": "Ada"}}),
			bad: p.Object{"source_id": "demo.default", "name": "greet"}, code: failed, data: keyError},
		{method: "workflow.sources.complete", params: fixed(p.Object{"source_id": "fake.a", "ref": p.Object{"type": "ref/prompt", "name": "greet"},
			"argument": p.Object{"name": "who", "value": "A"}}),
			bad:  p.Object{"source_id": "demo.default", "ref": p.Object{"type": "ref/prompt", "name": "greet"}, "argument": p.Object{"name": "who", "value": "A"}},
			code: failed, data: keyError},
		{method: "workflow.sources.diagnose", params: fixed(p.Object{"source_id": "demo.default"}),
			bad: p.Object{"source_id": "nope.none"}, code: failed, data: keyError},
		{method: "workflow.capabilities.list", params: fixed(p.Object{"source_id": "fake.a", "limit": 10}),
			bad: p.Object{"limit": 500}, code: invalidParams},
		{method: "workflow.capabilities.inspect", params: fixed(p.Object{"qualified_name": "fake.a.echo"}),
			bad: p.Object{"qualified_name": "fake.a.no_such_tool"}, code: failed, data: keyError},
		{method: "workflow.capabilities.call", params: fixed(p.Object{"qualified_name": "fake.a.echo", "payload": p.Object{"message": "hi"}}),
			bad: p.Object{"qualified_name": "fake.a.no_such_tool", "payload": p.Object{}}, code: failed, data: keyError},

		// The kv workspace, authored step by step as an agent does.
		{method: "workflow.draft_workspaces.create_empty", params: fixed(p.Object{"workspace_id": "kv", "name": "kv_roundtrip", "title": "Remember and recall"}),
			bad: p.Object{"workspace_id": "kv_no_name"}, code: invalidParams},
		{method: "workflow.draft_workspaces.add_step_from_capability", params: func() any {
			return cf.at("kv", p.Object{"step_id": "remember", "capability_name": "demo.default.kv_set", "routes": p.Object{"ok": "__end__", "error": "__end__"}})
		}, bad: unknownWS(p.Object{"step_id": "remember", "capability_name": "demo.default.kv_set"}), code: failed, data: keyError},
		{method: "workflow.draft_workspaces.bind", params: func() any {
			return cf.at("kv", p.Object{"step_id": "remember", "source_path": "input.key", "target_path": "local.key"})
		}, bad: unknownWS(p.Object{"step_id": "remember", "source_path": "input.key", "target_path": "local.key"}), code: failed, data: keyError},
		{method: "workflow.draft_workspaces.branch", params: func() any {
			cf.edit("kv", "workflow.draft_workspaces.bind", p.Object{"step_id": "remember", "source_path": "input.value", "target_path": "local.value"})
			cf.edit("kv", "workflow.draft_workspaces.add_step_from_capability", p.Object{"step_id": "recall", "capability_name": "demo.default.kv_get",
				"routes": p.Object{"ok": "__end__", "error": "__end__"}})
			return cf.at("kv", p.Object{"step_id": "remember", "routes": p.Object{"ok": "recall"}})
		}, bad: unknownWS(p.Object{"step_id": "remember", "routes": p.Object{"ok": "recall"}}), code: failed, data: keyError},
		{method: "workflow.draft_workspaces.validate", params: func() any {
			cf.edit("kv", "workflow.draft_workspaces.bind", p.Object{"step_id": "recall", "source_path": "input.key", "target_path": "local.key"})
			cf.edit("kv", "workflow.draft_workspaces.bind", p.Object{"step_id": "recall", "source_path": "local.value", "target_path": "output.value"})
			cf.edit("kv", "workflow.draft_workspaces.bind", p.Object{"step_id": "recall", "source_path": "local.found", "target_path": "output.found"})
			return p.Object{"workspace_id": "kv"}
		}, bad: p.Object{"workspace_id": "no_such_ws"}, code: failed, data: keyError},
		{method: "workflow.draft_workspaces.get", params: fixed(p.Object{"workspace_id": "kv", "include_draft": true}),
			bad: p.Object{"workspace_id": "no_such_ws"}, code: failed, data: keyError},
		{method: "workflow.draft_workspaces.compile", params: fixed(p.Object{"workspace_id": "kv"}),
			bad: p.Object{"workspace_id": "no_such_ws"}, code: failed, data: keyError},
		{method: "workflow.draft_workspaces.create_artifact", params: fixed(p.Object{"workspace_id": "kv", "artifact_id": "kv_roundtrip", "version": 1,
			"title": "Remember and recall", "outcomes": []string{"ok"}}),
			bad: p.Object{"workspace_id": "no_such_ws", "artifact_id": "kv_lost", "version": 1, "title": "Lost", "outcomes": []string{"ok"}}, code: failed, data: keyError},

		// The greeter workspace takes every other edit.
		{method: "workflow.draft_workspaces.add_step", params: func() any {
			cf.must("workflow.draft_workspaces.create_empty", p.Object{"workspace_id": "greeter", "name": "greeter",
				"input_schema":  p.Object{"type": "object", "properties": p.Object{"message": p.Object{"type": "string"}}, "required": []string{"message"}},
				"state_schema":  p.Object{"type": "object", "properties": p.Object{"echoed": p.Object{"type": "string"}}},
				"output_schema": p.Object{"type": "object", "properties": p.Object{"echoed": p.Object{"type": "string"}}}})
			return cf.at("greeter", p.Object{"step_id": "greet", "step": p.Object{"use": "fake.a.echo", "input": []any{p.Object{"target": "message", "value": "hi"}}},
				"routes": p.Object{"ok": "__end__", "error": "__end__"}})
		}, bad: unknownWS(p.Object{"step_id": "greet", "step": p.Object{"use": "fake.a.echo"}}), code: failed, data: keyError},
		{method: "workflow.draft_workspaces.set_start", params: func() any { return cf.at("greeter", p.Object{"step_id": "greet"}) },
			bad: unknownWS(p.Object{"step_id": "greet"}), code: failed, data: keyError},
		{method: "workflow.draft_workspaces.set_name", params: func() any { return cf.at("greeter", p.Object{"name": "greeter_v2"}) },
			bad: unknownWS(p.Object{"name": "greeter_v2"}), code: failed, data: keyError},
		{method: "workflow.draft_workspaces.set_contract", params: func() any {
			return cf.at("greeter", p.Object{"outcomes": []string{"ok"}, "state_schema": p.Object{"type": "object", "properties": p.Object{
				"echoed": p.Object{"type": "string"}, "last": p.Object{"type": "string"}}}})
		}, bad: unknownWS(p.Object{"outcomes": []string{"ok"}}), code: failed, data: keyError},
		{method: "workflow.draft_workspaces.set_step_input_map", params: func() any {
			return cf.at("greeter", p.Object{"step_id": "greet", "input_map": p.Object{"input.message": "message"}})
		}, bad: unknownWS(p.Object{"step_id": "greet", "input_map": p.Object{"input.message": "message"}}), code: failed, data: keyError},
		{method: "workflow.draft_workspaces.set_step_input_bindings", params: func() any {
			return cf.at("greeter", p.Object{"step_id": "greet", "bindings": []any{p.Object{"target": "message", "value": "hello"}}})
		}, bad: unknownWS(p.Object{"step_id": "greet", "bindings": []any{}}), code: failed, data: keyError},
		{method: "workflow.draft_workspaces.set_step_output_map", params: func() any {
			return cf.at("greeter", p.Object{"step_id": "greet", "output_map": p.Object{"message": "state.last"}})
		}, bad: unknownWS(p.Object{"step_id": "greet", "output_map": p.Object{"message": "state.echoed"}}), code: failed, data: keyError},
		{method: "workflow.draft_workspaces.set_step_output_bindings", params: func() any {
			return cf.at("greeter", p.Object{"step_id": "greet", "bindings": []any{p.Object{"source": "message", "target": "state.echoed"}}})
		}, bad: unknownWS(p.Object{"step_id": "greet", "bindings": []any{}}), code: failed, data: keyError},
		{method: "workflow.draft_workspaces.set_workflow_output_map", params: func() any {
			return cf.at("greeter", p.Object{"output_map": p.Object{"state.last": "echoed"}})
		}, bad: unknownWS(p.Object{"output_map": p.Object{"state.echoed": "echoed"}}), code: failed, data: keyError},
		{method: "workflow.draft_workspaces.set_workflow_output_bindings", params: func() any {
			return cf.at("greeter", p.Object{"bindings": []any{p.Object{"target": "echoed", "path": "state.echoed"}}})
		}, bad: unknownWS(p.Object{"bindings": []any{}}), code: failed, data: keyError},
		{method: "workflow.draft_workspaces.update_capability_step", params: func() any {
			return cf.at("greeter", p.Object{"step_id": "greet", "update": p.Object{"desc": "Echo the message back", "retry": 1}})
		}, bad: unknownWS(p.Object{"step_id": "greet", "update": p.Object{"retry": 1}}), code: failed, data: keyError},
		{method: "workflow.draft_workspaces.remove_route", params: func() any {
			return cf.at("greeter", p.Object{"step_id": "greet", "outcome": "error"})
		}, bad: unknownWS(p.Object{"step_id": "greet", "outcome": "error"}), code: failed, data: keyError},
		{method: "workflow.draft_workspaces.set_route", params: func() any {
			return cf.at("greeter", p.Object{"step_id": "greet", "outcome": "error", "target": "__end__"})
		}, bad: unknownWS(p.Object{"step_id": "greet", "outcome": "error", "target": "__end__"}), code: failed, data: keyError},
		{method: "workflow.draft_workspaces.handle", params: func() any {
			cf.edit("greeter", "workflow.draft_workspaces.add_step_from_capability", p.Object{"step_id": "count", "capability_name": "fake.a.counter",
				"route_from_step": "greet", "route_from_outcome": "ok", "routes": p.Object{"ok": "__end__", "error": "__end__"}})
			return cf.at("greeter", p.Object{"branches": []any{p.Object{"step_id": "greet", "outcome": "error"}}, "target": "count"})
		}, bad: unknownWS(p.Object{"branches": []any{p.Object{"step_id": "greet", "outcome": "error"}}, "target": "__end__"}), code: failed, data: keyError},
		{method: "workflow.draft_workspaces.remove_binding", params: func() any {
			return cf.at("greeter", p.Object{"step_id": "greet", "outputs": []string{"message"}})
		}, bad: unknownWS(p.Object{"step_id": "greet", "outputs": []string{"message"}}), code: failed, data: keyError},
		{method: "workflow.draft_workspaces.remove_step", params: func() any {
			cf.edit("greeter", "workflow.draft_workspaces.handle", p.Object{"branches": []any{p.Object{"step_id": "greet", "outcome": "ok"},
				p.Object{"step_id": "greet", "outcome": "error"}}, "target": "__end__"})
			return cf.at("greeter", p.Object{"step_id": "count"})
		}, bad: unknownWS(p.Object{"step_id": "count"}), code: failed, data: keyError},
		{method: "workflow.draft_workspaces.patch", params: func() any {
			return cf.at("greeter", p.Object{"patch": []any{p.Object{"op": "replace", "path": "/name", "value": "greeter_v3"}}})
		}, bad: unknownWS(p.Object{"patch": []any{}}), code: failed, data: keyError},
		{method: "workflow.draft_workspaces.replace_document", params: func() any {
			cf.must("workflow.draft_workspaces.create_empty", p.Object{"workspace_id": "approval", "name": "approval"})
			return cf.at("approval", p.Object{"draft": json.RawMessage(approvalDraft)})
		}, bad: unknownWS(p.Object{"draft": json.RawMessage(approvalDraft)}), code: failed, data: keyError},
		{method: "workflow.draft_workspaces.create_from_capability", params: fixed(p.Object{"workspace_id": "echo_ws", "capability_name": "fake.a.echo", "name": "echo_wrapper"}),
			bad: p.Object{"workspace_id": "lost_ws", "capability_name": "fake.a.no_such_tool"}, code: failed, data: keyError},
		{method: "workflow.draft_workspaces.create_wrapper", params: fixed(p.Object{"workspace_id": "echo_ws", "artifact_id": "echo_wrapper", "version": 1,
			"title": "Echo", "outcomes": []string{"ok", "error"}, "description": "fake.a.echo as a workflow capability"}),
			bad: p.Object{"workspace_id": "no_such_ws", "artifact_id": "lost_wrapper", "version": 1, "title": "Lost", "outcomes": []string{"ok"}}, code: failed, data: keyError},
		{method: "workflow.drafts.create_from_capability", params: fixed(p.Object{"workspace_id": "counter_ws", "capability_name": "fake.a.counter", "title": "Count"}),
			bad: p.Object{"workspace_id": "lost_ws", "capability_name": "fake.a.no_such_tool"}, code: failed, data: keyError},
		{method: "workflow.drafts.validate", params: fixed(p.Object{"draft": json.RawMessage(childDraft)}),
			bad: p.Object{}, code: invalidParams},
		{method: "workflow.drafts.patch", params: fixed(p.Object{"draft": json.RawMessage(childDraft),
			"patch": []any{p.Object{"op": "replace", "path": "/name", "value": "child_v2"}}}),
			bad: p.Object{"draft": json.RawMessage(childDraft)}, code: invalidParams},
		{method: "workflow.draft_workspaces.list", params: fixed(nil),
			bad: p.Object{"limit": 10}, code: invalidParams},

		// Artifacts.
		{method: "workflow.artifacts.create_from_plan", params: func() any {
			return p.Object{"artifact_id": "kv_planned", "version": 1, "title": "Remember and recall, from its plan",
				"plan": cf.got["workflow.draft_workspaces.compile"]["compiled_plan"], "outcomes": []string{"ok"}}
		}, bad: p.Object{"artifact_id": "kv_planned", "version": 0, "title": "Version zero", "plan": p.Object{}, "outcomes": []string{"ok"}}, code: invalidParams},
		{method: "workflow.artifacts.list", params: fixed(p.Object{"kind": "workflow", "limit": 10}),
			bad: p.Object{"kind": "recipe"}, code: invalidParams},
		{method: "workflow.artifacts.inspect", params: fixed(p.Object{"artifact_id": "kv_roundtrip", "version": 1}),
			bad: p.Object{"artifact_id": "no_such_artifact", "version": 1}, code: failed, data: keyError},
		{method: "workflow.artifacts.save", params: func() any {
			artifact := map[string]any{}
			for k, v := range cf.got["workflow.artifacts.inspect"] {
				artifact[k] = v
			}
			artifact["id"], artifact["title"] = "kv_copy", "Remember and recall, copied"
			return p.Object{"artifact": artifact}
		}, bad: p.Object{}, code: invalidParams},

		// Deployments.
		{method: "workflow.deployments.save", params: func() any {
			cf.must("workflow.draft_workspaces.create_artifact", p.Object{"workspace_id": "approval", "artifact_id": "approval", "version": 1, "title": "Approval", "outcomes": []string{"ok"}})
			cf.must("workflow.deployments.save", p.Object{"deployment": p.Object{"id": "approval.default", "artifact_id": "approval", "artifact_version": 1, "bindings": []any{}}})
			return p.Object{"deployment": p.Object{"id": "kv.default", "artifact_id": "kv_roundtrip", "artifact_version": 1,
				"bindings": []any{p.Object{"logical_source": "demo.default", "concrete_source": "demo.default"}}}}
		}, bad: p.Object{"deployment": p.Object{"id": "kv.other", "artifact_id": "kv_roundtrip", "artifact_version": 1}, "activate": true}, code: invalidParams},
		{method: "workflow.deployments.list", params: fixed(nil),
			bad: p.Object{"artifact_id": "kv_roundtrip"}, code: invalidParams},
		{method: "workflow.deployments.inspect", params: fixed(p.Object{"deployment_id": "kv.default"}),
			bad: p.Object{"deployment_id": "no.such"}, code: failed, data: keyError},
		{method: "workflow.deployments.validate", params: fixed(p.Object{"deployment_id": "kv.default", "live_check": true}),
			bad: p.Object{"deployment_id": "no.such"}, code: failed, data: keyError},

		// Webhooks (extensions): the secret is answered by create and
		// rotate_secret only.
		{method: "workflow.webhooks.create", params: fixed(p.Object{"webhook": p.Object{"id": "kv-hook", "deployment_id": "kv.default",
			"input_map": p.Object{"key": "/key", "value": "/value"}}}),
			bad: p.Object{"webhook": p.Object{"id": "kv-other", "deployment_id": "no.such"}}, code: failed, data: keyError},
		{method: "workflow.webhooks.inspect", params: fixed(p.Object{"webhook_id": "kv-hook"}),
			bad: p.Object{"webhook_id": "no-such"}, code: failed, data: keyError},
		{method: "workflow.webhooks.list", params: fixed(nil),
			bad: p.Object{"deployment_id": "kv.default"}, code: invalidParams},
		{method: "workflow.webhooks.rotate_secret", params: fixed(p.Object{"webhook_id": "kv-hook", "grace_seconds": 60}),
			bad: p.Object{"webhook_id": "kv-hook", "grace_seconds": -1}, code: invalidParams},

		// Schedules (extensions): kv-sched is paused, or fires each 1
		// January only.
		{method: "workflow.schedules.create", params: fixed(p.Object{"schedule": schedule("kv.default", true)}),
			bad: p.Object{"schedule": schedule("no.such", true)}, code: failed, data: keyError},
		{method: "workflow.schedules.inspect", params: fixed(p.Object{"schedule_id": "kv-sched"}),
			bad: p.Object{"schedule_id": "no-such"}, code: failed, data: keyError},
		{method: "workflow.schedules.list", params: fixed(nil),
			bad: p.Object{"deployment_id": "kv.default"}, code: invalidParams},
		{method: "workflow.schedules.update", params: fixed(p.Object{"schedule": schedule("kv.default", false)}),
			bad: p.Object{"schedule": p.Object{"id": "kv-sched", "deployment_id": "kv.default", "spec": p.Object{"interval_seconds": 0}}}, code: invalidParams},
		{method: "workflow.schedules.pause", params: fixed(p.Object{"schedule_id": "kv-sched", "note": "conformance"}),
			bad: p.Object{"schedule_id": ""}, code: invalidParams},
		{method: "workflow.schedules.unpause", params: fixed(p.Object{"schedule_id": "kv-sched"}),
			bad: p.Object{"schedule_id": "no-such"}, code: failed, data: keyError},

		// Runs.
		{method: "workflow.runs.start", params: fixed(p.Object{"deployment_id": "kv.default", "workflow_input": p.Object{"key": "greeting", "value": "hello"},
			"trace_range": p.Object{"limit": 10}}),
			bad: p.Object{"deployment_id": "no.such", "workflow_input": p.Object{}}, code: failed, data: keyError},
		{method: "workflow.runs.inspect", params: func() any {
			if status := cf.settle(run("workflow.runs.start")); status != "completed" {
				t.Errorf("the kv run is %s", status)
			}
			return p.Object{"run_id": run("workflow.runs.start")}
		}, bad: p.Object{"run_id": "run_00000000000000000000000000000000"}, code: failed, data: keyError},
		{method: "workflow.runs.list", params: fixed(p.Object{"status": "completed", "limit": 10}),
			bad: p.Object{"status": "sleeping"}, code: invalidParams},
		{method: "workflow.runs.trace", params: func() any {
			return p.Object{"run_id": run("workflow.runs.start"), "trace_range": p.Object{"start": 0, "limit": 100}}
		}, bad: p.Object{"run_id": "run_00000000000000000000000000000000"}, code: invalidParams},
		{method: "workflow.runs.rerun", params: func() any {
			return p.Object{"run_id": run("workflow.runs.start"), "artifact_version": 1, "trace_range": p.Object{"limit": 5}}
		}, bad: p.Object{"run_id": "run_00000000000000000000000000000000"}, code: failed, data: keyError},
		{method: "workflow.runs.passthrough", params: fixed(p.Object{"connection": "demo.default", "tool": "counter"}),
			bad: p.Object{"connection": "fake.a", "tool": "echo"}, code: failed, data: keyError},
		{method: "workflow.runs.passthrough_release", params: fixed(p.Object{"client_session": "no-such-session"}),
			bad: p.Object{"client_session": ""}, code: invalidParams},
		{method: "workflow.runs.fork", params: func() any {
			if status := cf.settle(run("workflow.runs.rerun")); status != "completed" {
				t.Errorf("the rerun of the kv run is %s", status)
			}
			return p.Object{"run_id": run("workflow.runs.start"), "from_node": "recall"}
		}, bad: p.Object{"run_id": "run_00000000000000000000000000000000", "from_node": "recall"}, code: failed, data: keyError},
		{method: "workflow.runs.resume", params: func() any {
			if status := cf.settle(run("workflow.runs.fork")); status != "completed" {
				t.Errorf("the fork of the kv run is %s", status)
			}
			started := cf.must("workflow.runs.start", p.Object{"deployment_id": "approval.default"})
			interrupted, _ = started["run_id"].(string)
			if status := cf.settle(interrupted); status != "interrupted" {
				t.Errorf("the approval run is %s", status)
			}
			return p.Object{"run_id": interrupted, "resume_payload": p.Object{"approved": true}, "trace_range": p.Object{"limit": 5}}
		}, bad: p.Object{"run_id": "run_00000000000000000000000000000000", "resume_payload": p.Object{"approved": true}}, code: failed, data: keyError},
		{method: "workflow.runs.cancel", params: func() any {
			if status := cf.settle(interrupted); status != "completed" {
				t.Errorf("the resumed approval run is %s", status)
			}
			started := cf.must("workflow.runs.start", p.Object{"deployment_id": "approval.default"})
			cancelled, _ = started["run_id"].(string)
			if status := cf.settle(cancelled); status != "interrupted" {
				t.Errorf("the second approval run is %s", status)
			}
			return p.Object{"run_id": cancelled, "reason": "no longer needed"}
		}, bad: p.Object{"run_id": "run_00000000000000000000000000000000"}, code: failed, data: keyError},
		{method: "workflow.runs.subscribe", params: func() any {
			// A run started without waiting for it, then followed.
			started := cf.must("workflow.runs.start", p.Object{"deployment_id": "kv.default", "wait": false,
				"workflow_input": p.Object{"key": "live", "value": "events"}})
			if started["status"] != "running" {
				t.Errorf("a run started without waiting is answered %v", started["status"])
			}
			return p.Object{"run_id": started["run_id"], "after_sequence": 0}
		}, bad: p.Object{"run_id": "run_00000000000000000000000000000000"}, code: failed, data: keyError},
		{method: "workflow.runs.unsubscribe", params: func() any {
			sub := cf.got["workflow.runs.subscribe"]
			cf.followed(sub["run_id"])
			return p.Object{"subscription_id": sub["subscription_id"]}
		}, bad: p.Object{}, code: invalidParams},

		// Credentials.
		{method: "workflow.admin.auth.save", params: fixed(p.Object{"auth_ref": "demo-cred", "scheme": "bearer",
			"payload": p.Object{"token": "conformance-token"}, "metadata": p.Object{"owner": "conformance"}}),
			bad: p.Object{"auth_ref": "demo-cred", "payload": p.Object{"token": "conformance-token"}}, code: invalidParams},
		{method: "workflow.admin.auth.list", params: fixed(nil),
			bad: p.Object{"scheme": "bearer"}, code: invalidParams},
		{method: "workflow.admin.auth.inspect", params: fixed(p.Object{"auth_ref": "demo-cred"}),
			bad: p.Object{"auth_ref": "no-such-cred"}, code: failed, data: keyError},

		// The source registry.
		{method: "workflow.admin.source_registry.add", params: fixed(p.Object{"entry": p.Object{"id": "reg.fake",
			"transport": p.Object{"kind": "stdio", "command": fakeMCP}, "metadata": p.Object{"team": "conformance"}}}),
			bad: p.Object{}, code: invalidParams},
		{method: "workflow.admin.source_registry.list", params: fixed(p.Object{"limit": 10}),
			bad: p.Object{"limit": 0}, code: invalidParams},
		{method: "workflow.admin.source_registry.inspect", params: fixed(p.Object{"source_id": "reg.fake"}),
			bad: p.Object{"source_id": "reg.none"}, code: failed, data: keyError},
		{method: "workflow.admin.source_registry.update", params: fixed(p.Object{"source_id": "reg.fake", "patch": p.Object{"metadata": p.Object{"team": "conformance", "tier": "test"}}}),
			bad: p.Object{"source_id": "reg.none", "patch": p.Object{"metadata": p.Object{}}}, code: failed, data: keyError},
		{method: "workflow.admin.source_registry.disable", params: fixed(p.Object{"source_id": "reg.fake"}),
			bad: p.Object{"source_id": "reg.none"}, code: failed, data: keyError},
		{method: "workflow.admin.source_registry.enable", params: fixed(p.Object{"source_id": "reg.fake"}),
			bad: p.Object{"source_id": "reg.none"}, code: failed, data: keyError},
		{method: "workflow.admin.source_registry.apply", params: fixed(p.Object{}),
			bad: p.Object{"dry_run": true}, code: invalidParams},
		{method: "workflow.admin.events.list", params: fixed(nil),
			bad: p.Object{"limit": 10}, code: invalidParams},
		{method: "workflow.admin.events.subscribe", params: fixed(p.Object{"after_sequence": 0}),
			bad: p.Object{"after_sequence": -1}, code: invalidParams},
		{method: "workflow.admin.events.unsubscribe", params: func() any {
			return p.Object{"subscription_id": cf.got["workflow.admin.events.subscribe"]["subscription_id"]}
		}, bad: p.Object{"subscription_id": ""}, code: invalidParams},

		// Deletes last.
		{method: "workflow.admin.auth.delete", params: fixed(p.Object{"auth_ref": "demo-cred"}),
			bad: p.Object{"auth_ref": ""}, code: invalidParams},
		{method: "workflow.admin.source_registry.remove", params: fixed(p.Object{"source_id": "reg.fake"}),
			bad: p.Object{"source_id": "reg.none"}, code: failed, data: keyError},
		{method: "workflow.schedules.trigger", params: fixed(p.Object{"schedule_id": "kv-sched"}),
			bad: p.Object{"schedule_id": "no-such"}, code: failed, data: keyError},
		{method: "workflow.schedules.delete", params: fixed(p.Object{"schedule_id": "kv-sched"}),
			bad: p.Object{"schedule_id": ""}, code: invalidParams},
		{method: "workflow.webhooks.delete", params: fixed(p.Object{"webhook_id": "kv-hook"}),
			bad: p.Object{"webhook_id": ""}, code: invalidParams},
		{method: "workflow.deployments.delete", params: fixed(p.Object{"deployment_id": "kv.default"}),
			bad: p.Object{"deployment_id": "no.such"}, code: failed, data: keyError},
		{method: "workflow.artifacts.delete", params: fixed(p.Object{"artifact_id": "kv_copy", "version": 1}),
			bad: p.Object{"artifact_id": "no_such_artifact", "version": 1}, code: failed, data: keyError},
		{method: "workflow.draft_workspaces.delete", params: fixed(p.Object{"workspace_id": "greeter"}),
			bad: p.Object{"workspace": "greeter"}, code: invalidParams},
	}

	// The table covers the contract exactly: a new method cannot be forgotten.
	var covered []string
	for _, tc := range cases {
		covered = append(covered, tc.method)
	}
	slices.Sort(covered)
	is.Equal(covered, contract.Default().Methods()) // one case per method of the contract, no more

	extensions := contract.Default().Extensions()
	var reference, extended int
	for _, tc := range cases {
		if !cf.conforms(tc) {
			continue
		}
		if slices.Contains(extensions, tc.method) {
			extended++
		} else {
			reference++
		}
	}
	references := len(contract.Default().Methods()) - len(extensions)
	t.Logf("contract: %d/%d methods conform", reference, references)
	t.Logf("contract: %d/%d extensions conform", extended, len(extensions))
	is.Equal(references, 70)            // the reference contract has 70 methods
	is.Equal(reference, references)     // every reference method conforms
	is.Equal(extended, len(extensions)) // every extension conforms
}

// The PKCE pair and the loopback redirect of the conformance test's login.
const (
	loginVerifier = "conformance-verifier-0123456789-0123456789-abcdef"
	loginRedirect = "http://127.0.0.1:9/callback" // never listened on: the code is read from the redirect itself
)

var loginChallenge = func() string {
	sum := sha256.Sum256([]byte(loginVerifier))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}()

// authorizationCode follows the authorization URL as a browser would, up
// to the redirect to the loopback callback, and returns the code it
// carries.
func authorizationCode(t *testing.T, authorizationURL any) string {
	t.Helper()
	is := is.New(t)
	is.Helper()
	u, _ := authorizationURL.(string)
	is.True(u != "") // login_start answered an authorization URL
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }, Timeout: 10 * time.Second}
	resp, err := noFollow.Get(u)
	is.NoErr(err)
	defer resp.Body.Close()
	is.Equal(resp.StatusCode, http.StatusFound) // the authorization server redirects to the callback
	back, err := url.Parse(resp.Header.Get("Location"))
	is.NoErr(err)
	return back.Query().Get("code")
}

// promptingFake is the fakes server as source id, with the prompt greet
// (FAKEMCP_PROMPT).
func promptingFake(id string) config.Connection {
	src := stdioSource(id, fakeMCP)
	src.Transport.Env = map[string]string{"FAKEMCP_PROMPT": "1"}
	return src
}
