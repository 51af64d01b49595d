import { describe, expect, it } from "vitest";
import { cliOf, copiesOf, quote } from "./copy";

describe("Copy as", () => {
  it("quotes for a POSIX shell", () => {
    expect(quote("counter_workflow.default")).toBe("counter_workflow.default");
    expect(quote(`{"a":"it's"}`)).toBe(`'{"a":"it'\\''s"}'`);
  });
  it("gives the mcpflow command where the CLI has one", () => {
    expect(cliOf("workflow.runs.start", { deployment_id: "d.default", workflow_input: { n: 1 }, wait: false })).toBe(`mcpflow run d.default --input '{"n":1}'`);
    expect(cliOf("workflow.runs.resume", { run_id: "run_1", resume_payload: { ok: true }, resume_outcome: "submitted" })).toBe(`mcpflow runs resume run_1 --outcome submitted --payload '{"ok":true}'`);
    expect(cliOf("workflow.deployments.save", { deployment: { id: "a.default", artifact_id: "a", artifact_version: 1, bindings: [{ logical_source: "demo.default", concrete_source: "demo.default" }] } })).toBe(
      "mcpflow deploy --artifact a --id a.default --version 1 --bind demo.default=demo.default",
    );
    expect(cliOf("workflow.draft_workspaces.set_route", { workspace_id: "w", revision: 3, step_id: "count", outcome: "ok", target: "check" })).toBe("mcpflow draft route set w count ok check");
    expect(cliOf("workflow.draft_workspaces.set_step_input_bindings", { workspace_id: "w", revision: 3, step_id: "say", bindings: [{ target: "message", path: "input.text" }, { target: "loud", value: true }] })).toBe(
      "mcpflow draft inputs set w say --in message=input.text --value loud=true",
    );
    expect(cliOf("workflow.draft_workspaces.set_step_input_bindings", { workspace_id: "w", revision: 3, step_id: "say", bindings: [{ target: "m", expression: { kind: "literal", value: 1 } }] })).toBeUndefined();
    expect(cliOf("workflow.artifacts.delete", { artifact_id: "counter_workflow", version: 2 })).toBe("mcpflow artifacts delete counter_workflow@2");
    expect(cliOf("workflow.capabilities.call", { qualified_name: "demo.default.echo", payload: { message: "hi" } })).toBe(`mcpflow caps call demo.default.echo --input '{"message":"hi"}'`);
    expect(cliOf("workflow.draft_workspaces.patch", {})).toBeUndefined();
  });
  it("always gives the frame and a curl POST without the token", () => {
    const c = copiesOf("workflow.runs.cancel", { run_id: "run_1" }, "http://127.0.0.1:8765");
    expect(c.jsonrpc).toBe(`{"jsonrpc":"2.0","id":1,"method":"workflow.runs.cancel","params":{"run_id":"run_1"}}`);
    expect(c.curl).toContain("http://127.0.0.1:8765/rpc");
    expect(c.curl).toContain("$MCPFLOW_TOKEN");
    expect(c.cli).toBe("mcpflow runs cancel run_1");
  });
});

describe("rerun and fork", () => {
  it("copy as the runs rerun and runs fork commands", () => {
    expect(cliOf("workflow.runs.rerun", { run_id: "run_1", wait: false })).toBe("mcpflow runs rerun run_1");
    expect(cliOf("workflow.runs.rerun", { run_id: "run_1", artifact_version: 3 })).toBe("mcpflow runs rerun run_1 --artifact-version 3");
    expect(cliOf("workflow.runs.fork", { run_id: "run_1", from_node: "c" })).toBe("mcpflow runs fork run_1 --from c");
  });
});
