import { describe, expect, it } from "vitest";
import type { JsonValue } from "../api/generated";
import { conditionText, orderOutcomes, layout, pinDiagnostic, projectDraft, projectPlan, stepKinds } from "./graph";

const draft = {
  name: "counter_check",
  start: "count",
  steps: {
    count: { use: "demo.default.counter", input: [], output: [{ source: "count", target: "state.count" }] },
    check: { when: { if: { op: "ge", left: { path: "state.count" }, right: { value: 2 } }, then: "big" } },
    big: { end: { outcome: "big" } },
    ask: { interrupt: { kind: "approval", outcomes: ["submitted", "rejected"] } },
    pick: { choose: { clauses: [{ if: { op: "exists", path: "input.a" }, then: "big" }], default: "ask" } },
  },
  routes: { count: { ok: "check", error: "__end__" }, ask: { submitted: "__end__" } },
};

describe("projectDraft", () => {
  const g = projectDraft(draft, (n) => (n === "demo.default.counter" ? ["ok", "error"] : undefined));
  it("draws each step with its kind and __end__ once routed to", () => {
    expect(g.nodes.map((n) => [n.id, n.kind])).toEqual([
      ["ask", "interrupt"], ["big", "end"], ["check", "when"], ["count", "use"], ["pick", "choose"], ["__end__", "terminal"],
    ]);
    expect(g.nodes.find((n) => n.id === "count")).toMatchObject({ start: true, detail: "demo.default.counter", outcomes: ["ok", "error"] });
    expect(g.nodes.find((n) => n.id === "ask")?.outcomes).toEqual(["submitted", "rejected"]);
  });
  it("draws routes and decision targets as edges", () => {
    expect(g.edges.map((e) => `${e.source} -${e.outcome}-> ${e.target}`).sort()).toEqual([
      "ask -submitted-> __end__",
      "check -otherwise-> __end__",
      "check -then-> big",
      "count -error-> __end__",
      "count -ok-> check",
      "pick -clause 1-> big",
      "pick -default-> ask",
    ]);
  });
  it("knows all nine kinds", () => {
    expect(stepKinds).toHaveLength(9);
  });
  it("pins diagnostics to nodes and edges", () => {
    expect(pinDiagnostic("routes.count.ok", "count", g)).toEqual({ edge: "count:ok->check" });
    expect(pinDiagnostic("steps.count.input[0].target", "count", g)).toEqual({ node: "count" });
    expect(pinDiagnostic("steps.check.when.if", null, g)).toEqual({ node: "check" });
    expect(pinDiagnostic("start", null, g)).toEqual({ node: "count" });
    expect(pinDiagnostic("name", null, g)).toEqual({});
  });
  it("lays every node out at a distinct place", () => {
    const pos = layout(g);
    expect(pos.size).toBe(g.nodes.length);
    const seen = new Set([...pos.values()].map((p) => `${p.x},${p.y}`));
    expect(seen.size).toBe(g.nodes.length);
    expect(pos.get("count")!.y).toBeLessThan(pos.get("check")!.y);
  });
  it("survives an empty or broken draft", () => {
    expect(projectDraft(undefined)).toEqual({ nodes: [], edges: [] });
    expect(projectDraft({ steps: { x: { bogus: 1 } } }).nodes[0]).toMatchObject({ id: "x", kind: "unknown" });
  });
});

describe("projectPlan", () => {
  it("draws plan nodes by type and edges by outcome", () => {
    const plan: JsonValue = {
      nodes: [
        { id: "call", type: "node", node: "demo.default.counter" },
        { id: "how", type: "condition", condition: { op: "exists", path: "input.email" } },
        { id: "tool_error", type: "end", outcome: "error" },
      ],
      edges: [
        { from: "call", outcome: "ok", to: "how" },
        { from: "call", outcome: "error", to: "tool_error" },
        { from: "how", outcome: "true", to: "__end__" },
      ],
    };
    const g = projectPlan(plan);
    expect(g.nodes.map((n) => [n.id, n.kind, n.detail, n.start])).toEqual([
      ["call", "node", "demo.default.counter", true],
      ["how", "condition", "exists input.email", false],
      ["tool_error", "end", "outcome error", false],
      ["__end__", "terminal", "", false],
    ]);
    expect(g.nodes[0].outcomes).toEqual(["ok", "error"]);
    expect(g.edges).toHaveLength(3);
  });
  it("orders outcome handles one way on every canvas: ok first, error last", () => {
    const plan = { nodes: [{ id: "call", type: "node", node: "x.y" }], edges: [{ from: "call", outcome: "error", to: "__end__" }, { from: "call", outcome: "ok", to: "__end__" }, { from: "call", outcome: "busy", to: "__end__" }] };
    expect(projectPlan(plan).nodes[0].outcomes).toEqual(["ok", "busy", "error"]);
    const draft = { start: "call", steps: { call: { use: "x.y" } }, routes: { call: { error: "__end__", ok: "__end__", timeout: "__end__" } } };
    expect(projectDraft(draft, () => ["error", "ok"]).nodes[0].outcomes).toEqual(["ok", "timeout", "error"]);
    expect(orderOutcomes(["then", "otherwise"])).toEqual(["then", "otherwise"]);
  });
  it("writes conditions readably", () => {
    expect(conditionText({ op: "and", args: [{ op: "exists", path: "input.a" }, { op: "not", arg: { op: "eq", left: { path: "state.n" }, right: { value: 1 } } }] })).toBe("exists input.a and not (state.n eq 1)");
  });
});
