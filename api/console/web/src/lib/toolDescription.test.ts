import { describe, expect, it } from "vitest";
import type { JsonValue } from "../api/generated";
import { toolDescription } from "./toolDescription";

const plan: JsonValue = { nodes: [{ id: "b", type: "node", node: "demo.default.echo" }, { id: "a", type: "node", node: "demo.default.counter" }, { id: "c", type: "node", node: "demo.default.echo" }, { id: "e", type: "end" }] };

describe("the tool description agents see", () => {
  it("is made from the title and the capabilities called when the artifact has no description", () => {
    expect(toolDescription("counter_workflow.default", { id: "counter_workflow", version: 3, title: "Counter Workflow", description: null, plan })).toBe(
      'Runs the mcpflow workflow "Counter Workflow", which calls demo.default.counter, demo.default.echo. (deployment counter_workflow.default, artifact counter_workflow v3.) The result is the run: run_id, status, outcome and output; a run that waits for a person is interrupted: ask the user, then call mcpflow_resume_run.',
    );
  });
  it("is the artifact's own description when it has one", () => {
    expect(toolDescription("x.default", { id: "x", version: 1, title: "", description: "  Counts.  ", plan: {} })).toMatch(/^Counts\. \(deployment x\.default, artifact x v1\.\)/);
    expect(toolDescription("x.default", { id: "x", version: 1, title: " ", description: "", plan: {} })).toMatch(/^Runs the mcpflow workflow "x"\. \(/);
  });
});
