// Graph projections: a draft document or a compiled plan as nodes and
// edges for the canvas, laid out with dagre. Pure functions, no React.
import dagre from "@dagrejs/dagre";
import type { JsonValue } from "../api/generated";

export const stepKinds = ["use", "when", "choose", "match", "foreach", "join", "end", "interrupt", "subgraph"] as const;
export type StepKind = (typeof stepKinds)[number];
export const endId = "__end__";

export interface GraphNode {
  id: string;
  /** a step kind, a plan node type, or "terminal" for __end__ */
  kind: StepKind | "terminal" | string;
  label: string;
  detail: string;
  start: boolean;
  /** outcomes that leave this node, each a drag handle */
  outcomes: string[];
}

export interface GraphEdge {
  id: string;
  source: string;
  target: string;
  outcome: string;
}

export interface Graph {
  nodes: GraphNode[];
  edges: GraphEdge[];
}

type Obj = { [key: string]: JsonValue };
function obj(v: JsonValue | undefined): Obj {
  return typeof v === "object" && v !== null && !Array.isArray(v) ? v : {};
}
function str(v: JsonValue | undefined): string {
  if (typeof v === "string") return v;
  if (v === undefined) return "";
  const o = obj(v);
  if (typeof o.root === "string" && Array.isArray(o.parts)) return [o.root, ...o.parts].join(".");
  return JSON.stringify(v);
}

/** edgeId names an edge by where it leaves and where it goes: from:outcome->to. */
export function edgeId(source: string, outcome: string, target: string): string {
  return `${source}:${outcome}->${target}`;
}

/** kindOf is the one kind key of a draft step. */
export function kindOf(step: JsonValue): StepKind | undefined {
  const o = obj(step);
  return stepKinds.find((k) => k in o);
}

/** conditionText is a condition in short readable form. */
export function conditionText(c: JsonValue | undefined): string {
  const o = obj(c);
  const operand = (x: JsonValue | undefined) => {
    const p = obj(x);
    return "path" in p ? str(p.path) : JSON.stringify(p.value);
  };
  switch (o.op) {
    case "exists":
      return `exists ${str(o.path)}`;
    case "not":
      return `not (${conditionText(o.arg)})`;
    case "and":
    case "or":
      return (Array.isArray(o.args) ? o.args : []).map(conditionText).join(` ${o.op} `);
    case undefined:
      return "";
    default:
      return `${operand(o.left)} ${o.op} ${operand(o.right)}`;
  }
}

/**
 * orderOutcomes is the one order of a node's outcome handles, on every
 * canvas (workbench, artifact, run): ok first, error last, the rest as
 * the step lists them between. A plan lists its edges sorted (error
 * before ok), a draft its capability's outcomes (ok, error).
 */
export function orderOutcomes(outcomes: string[]): string[] {
  const rank = (o: string) => (o === "ok" ? 0 : o === "error" ? 2 : 1);
  return outcomes.map((o, i) => ({ o, i })).sort((a, b) => rank(a.o) - rank(b.o) || a.i - b.i).map((x) => x.o);
}

/** Outcomes a step of each routed kind leaves by, when the draft does not say. */
export function defaultOutcomes(kind: StepKind, payload: Obj, capabilityOutcomes?: string[]): string[] {
  switch (kind) {
    case "use":
      return capabilityOutcomes ?? ["ok", "error"];
    case "foreach":
      return ["loop", "done"];
    case "join":
      return ["done"];
    case "interrupt":
      return Array.isArray(payload.outcomes) && payload.outcomes.length > 0 ? payload.outcomes.map(str) : ["submitted"];
    case "subgraph":
      return Array.isArray(payload.outcomes) && payload.outcomes.length > 0 ? payload.outcomes.map(str) : ["ok"];
    case "when":
      return ["then", "otherwise"];
    case "choose":
      return [...(Array.isArray(payload.clauses) ? payload.clauses.map((_, i) => `clause ${i + 1}`) : []), "default"];
    case "match":
      return [...(Array.isArray(payload.cases) ? payload.cases.map((c) => `= ${JSON.stringify(obj(c).equals)}`) : []), "default"];
    case "end":
      return [];
  }
}

function detailOf(kind: StepKind, p: Obj): string {
  switch (kind) {
    case "use":
      return "";
    case "when":
      return conditionText(p.if);
    case "choose":
      return `${Array.isArray(p.clauses) ? p.clauses.length : 0} clauses`;
    case "match":
      return `match ${str(p.value)}`;
    case "foreach":
      return `each ${str(p.as)} in ${str(p.over)}`;
    case "join":
      return "branches meet";
    case "end":
      return `outcome ${str(p.outcome) || "ok"}`;
    case "interrupt":
      return `waits: ${str(p.kind)}`;
    case "subgraph":
      return `runs ${str(obj(p.workflow).artifact_id ?? p.workflow)}`;
  }
}

/** projectDraft draws a draft document: a node per step (and __end__ when routed to), an edge per route or decision target. */
export function projectDraft(draft: JsonValue | undefined, capabilityOutcomes: (name: string) => string[] | undefined = () => undefined): Graph {
  const d = obj(draft);
  const steps = obj(d.steps);
  const routes = obj(d.routes);
  const start = str(d.start);
  const nodes: GraphNode[] = [];
  const edges: GraphEdge[] = [];
  const addEdge = (source: string, outcome: string, target: string) => {
    if (target) edges.push({ id: edgeId(source, outcome, target), source, target, outcome });
  };
  for (const id of Object.keys(steps).sort()) {
    const kind = kindOf(steps[id]);
    if (!kind) {
      nodes.push({ id, kind: "unknown", label: id, detail: "step of no known kind", start: id === start, outcomes: [] });
      continue;
    }
    const p = obj(obj(steps[id])[kind]);
    const payload = kind === "use" ? obj(steps[id]) : p;
    const useName = kind === "use" ? str(obj(steps[id]).use) : "";
    const outcomes = defaultOutcomes(kind, payload, useName ? capabilityOutcomes(useName) : undefined);
    nodes.push({ id, kind, label: id, detail: kind === "use" ? useName : detailOf(kind, p), start: id === start, outcomes });
    if (kind === "when") {
      addEdge(id, "then", str(p.then));
      addEdge(id, "otherwise", str(p.otherwise) || endId);
    } else if (kind === "choose") {
      (Array.isArray(p.clauses) ? p.clauses : []).forEach((c, i) => addEdge(id, `clause ${i + 1}`, str(obj(c).then)));
      addEdge(id, "default", str(p.default) || endId);
    } else if (kind === "match") {
      (Array.isArray(p.cases) ? p.cases : []).forEach((c) => addEdge(id, `= ${JSON.stringify(obj(c).equals)}`, str(obj(c).then)));
      addEdge(id, "default", str(p.default) || endId);
    }
  }
  for (const from of Object.keys(routes).sort()) {
    const r = obj(routes[from]);
    for (const outcome of Object.keys(r).sort()) {
      addEdge(from, outcome, str(r[outcome]));
      const n = nodes.find((x) => x.id === from);
      if (n && !n.outcomes.includes(outcome)) n.outcomes.push(outcome);
    }
  }
  for (const n of nodes) n.outcomes = orderOutcomes(n.outcomes);
  if (edges.some((e) => e.target === endId)) nodes.push({ id: endId, kind: "terminal", label: "end", detail: "", start: false, outcomes: [] });
  return { nodes, edges };
}

/** projectPlan draws a compiled plan: its nodes (by type) and edges {from, outcome, to}. */
export function projectPlan(plan: JsonValue | undefined): Graph {
  const p = obj(plan);
  const nodes: GraphNode[] = [];
  const list = Array.isArray(p.nodes) ? p.nodes.map(obj) : [];
  const first = list.length > 0 ? str(list[0].id) : "";
  const rawEdges = Array.isArray(p.edges) ? p.edges.map(obj) : [];
  for (const n of list) {
    const id = str(n.id);
    const type = str(n.type);
    const detail = type === "node" ? str(n.node) : type === "condition" ? conditionText(n.condition) : type === "end" ? `outcome ${str(n.outcome)}` : "";
    nodes.push({ id, kind: type, label: id, detail, start: id === first, outcomes: orderOutcomes(rawEdges.filter((e) => str(e.from) === id).map((e) => str(e.outcome))) });
  }
  const edges = rawEdges.map((e) => ({ id: edgeId(str(e.from), str(e.outcome), str(e.to)), source: str(e.from), target: str(e.to), outcome: str(e.outcome) }));
  if (edges.some((e) => e.target === endId)) nodes.push({ id: endId, kind: "terminal", label: "end", detail: "", start: false, outcomes: [] });
  return { nodes, edges };
}

export const nodeWidth = 190;
export const nodeHeight = 64;

/** layout places each node top to bottom with dagre; positions are of top-left corners. */
export function layout(g: Graph): Map<string, { x: number; y: number }> {
  const d = new dagre.graphlib.Graph({ multigraph: true });
  d.setGraph({ rankdir: "TB", nodesep: 40, ranksep: 70, marginx: 10, marginy: 10 });
  d.setDefaultEdgeLabel(() => ({}));
  for (const n of g.nodes) d.setNode(n.id, { width: nodeWidth, height: nodeHeight });
  for (const e of g.edges) if (d.hasNode(e.source) && d.hasNode(e.target)) d.setEdge(e.source, e.target, { label: e.outcome, width: 40, height: 16 }, e.id);
  dagre.layout(d);
  const out = new Map<string, { x: number; y: number }>();
  for (const n of g.nodes) {
    const pos = d.node(n.id);
    out.set(n.id, { x: Math.round(pos.x - nodeWidth / 2), y: Math.round(pos.y - nodeHeight / 2) });
  }
  return out;
}

/** A node's path in a draft diagnostic (steps.<id>…, routes.<id>.<outcome>) and which graph element it pins to. */
export function pinDiagnostic(path: string, stepId: string | null | undefined, g: Graph): { node?: string; edge?: string } {
  const route = /^routes\.([^.]+)\.(.+)$/.exec(path);
  if (route) {
    const edge = g.edges.find((e) => e.source === route[1] && e.outcome === route[2]);
    if (edge) return { edge: edge.id };
    return { node: route[1] };
  }
  if (stepId && g.nodes.some((n) => n.id === stepId)) return { node: stepId };
  const step = /^steps\.([^.[]+)/.exec(path);
  if (step && g.nodes.some((n) => n.id === step[1])) return { node: step[1] };
  if (path === "start") {
    const s = g.nodes.find((n) => n.start);
    if (s) return { node: s.id };
  }
  return {};
}
