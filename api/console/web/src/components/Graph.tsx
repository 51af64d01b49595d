import { useMemo } from "react";
import { Background, Controls, Handle, MarkerType, Position, ReactFlow, type Connection as FlowConnection, type Edge, type Node, type NodeProps } from "@xyflow/react";
import { layout, nodeHeight, nodeWidth, type Graph as G, type GraphNode } from "../lib/graph";
import type { StepState } from "../lib/runState";
import { formatDuration } from "../lib/time";

/** Glyphs that tell the nine kinds apart besides their colour and shape. */
const glyph: Record<string, string> = {
  use: "⚙", when: "?", choose: "⋔", match: "≡", foreach: "↻", join: "⋈", end: "■", interrupt: "‖", subgraph: "⧉",
  node: "⚙", condition: "?", terminal: "●",
};

type StepData = {
  n: GraphNode;
  state?: StepState;
  duration?: number;
  problems: string[];
  selected: boolean;
  connectable: boolean;
};

function StepNode({ data }: NodeProps<Node<StepData>>) {
  const { n, state, duration, problems, selected, connectable } = data;
  return (
    <div
      className={`step kind-${n.kind} ${state ? `st-${state}` : ""} ${problems.length ? "has-problem" : ""} ${selected ? "is-selected" : ""}`}
      data-step={n.id}
      data-kind={n.kind}
      data-state={state ?? ""}
      style={{ width: nodeWidth, minHeight: nodeHeight }}
      title={problems.join("\n")}
    >
      <Handle type="target" position={Position.Top} id="in" isConnectable={connectable} />
      <div className="step-head">
        <span className="glyph" aria-hidden="true">
          {glyph[n.kind] ?? "·"}
        </span>
        <strong>{n.label}</strong>
        {n.start && <span className="badge">start</span>}
        <span className="kind-name">{n.kind === "terminal" ? "" : n.kind}</span>
      </div>
      {n.detail && <div className="step-detail">{n.detail}</div>}
      {state && (
        <div className="step-state">
          {state}
          {duration !== undefined ? ` · ${formatDuration(duration)}` : ""}
        </div>
      )}
      {problems.length > 0 && (
        <ul className="step-problems" aria-label={`problems of ${n.id}`}>
          {problems.map((p, i) => (
            <li key={i}>{p}</li>
          ))}
        </ul>
      )}
      <div className="handles">
        {n.outcomes.map((o, i) => (
          <Handle
            key={o}
            type="source"
            position={Position.Bottom}
            id={o}
            isConnectable={connectable}
            data-outcome={o}
            className="outcome-handle"
            style={{ left: `${((i + 1) * 100) / (n.outcomes.length + 1)}%` }}
            title={`${n.id} → ${o}`}
          >
            <span className="outcome-label">{o}</span>
          </Handle>
        ))}
      </div>
    </div>
  );
}

const nodeTypes = { step: StepNode };

export function GraphView(props: {
  graph: G;
  states?: Record<string, { state: StepState; durationMs?: number }>;
  nodeProblems?: Record<string, string[]>;
  edgeProblems?: Record<string, string[]>;
  selected?: string;
  onSelect?: (id: string) => void;
  onConnect?: (source: string, outcome: string, target: string) => void;
  label: string;
}) {
  const { graph, states, nodeProblems, edgeProblems, selected, onSelect, onConnect } = props;
  const positions = useMemo(() => layout(graph), [graph]);
  // A new layout remounts the canvas, so that it fits the view again.
  const layoutKey = useMemo(() => [...positions].map(([id, p]) => `${id}@${p.x},${p.y}`).join(" "), [positions]);
  const nodes: Node<StepData>[] = graph.nodes.map((n) => ({
    id: n.id,
    type: "step",
    position: positions.get(n.id) ?? { x: 0, y: 0 },
    data: { n, state: states?.[n.id]?.state, duration: states?.[n.id]?.durationMs, problems: nodeProblems?.[n.id] ?? [], selected: selected === n.id, connectable: !!onConnect },
    draggable: false,
  }));
  const edges: Edge[] = graph.edges.map((e) => {
    const problems = edgeProblems?.[e.id] ?? [];
    return {
      id: e.id,
      source: e.source,
      target: e.target,
      sourceHandle: e.outcome,
      targetHandle: "in",
      label: problems.length ? `${e.outcome} ⚠ ${problems.join("; ")}` : e.outcome,
      className: problems.length ? "edge-problem" : undefined,
      markerEnd: { type: MarkerType.ArrowClosed },
      animated: states?.[e.source]?.state === "running",
    };
  });
  const connect = (c: FlowConnection) => {
    if (c.source && c.target && c.sourceHandle) onConnect?.(c.source, c.sourceHandle, c.target);
  };
  return (
    <div className="graph" role="region" aria-label={props.label}>
      <ReactFlow
        key={layoutKey}
        nodes={nodes}
        edges={edges}
        nodeTypes={nodeTypes}
        onConnect={connect}
        onNodeClick={(_, n) => onSelect?.(n.id)}
        nodesConnectable={!!onConnect}
        nodesDraggable={false}
        fitView
        minZoom={0.2}
        proOptions={{ hideAttribution: true }}
      >
        <Background />
        <Controls showInteractive={false} />
      </ReactFlow>
    </div>
  );
}
