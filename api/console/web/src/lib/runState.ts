// The run-event reducer: a run's events (workflow.runs.event), folded
// into what its page shows: each step's state and duration, the timeline,
// the status and the pending interrupt. Pure, no React.
import type { InterruptPayload, JsonObject, RunEventLogPayload, RunEventNotification, RunEventProgressPayload, RunEventSessionPayload, RunResult, TraceEntryPayload } from "../api/generated";

export type StepState = "running" | "ok" | "error" | "interrupted";

export interface TimelineEntry {
  key: string;
  frameId: string;
  nodeId: string;
  state: StepState;
  outcome?: string;
  next?: string;
  capability?: string;
  error?: string;
  startedMs?: number;
  finishedMs?: number;
  traceIndex?: number;
  stateChanges?: string[];
  input?: JsonObject;
  output?: JsonObject;
  /** the latest progress its upstream reported (step_progress) */
  progress?: RunEventProgressPayload;
  /** what its upstream logged during its call (step_log), oldest first */
  logs?: RunEventLogPayload[];
}

export interface RunView {
  runId: string;
  status: string;
  terminal: boolean;
  outcome?: string;
  output?: JsonObject | null;
  error?: string;
  interrupt?: InterruptPayload | null;
  /** when the run started and ended (epoch ms): its first event's time, its terminal status's */
  startedMs?: number;
  endedMs?: number;
  /** the sequence of the last event applied: the cursor to resubscribe after */
  cursor: number;
  timeline: TimelineEntry[];
  /** per node id: its latest state and the duration of its latest finished step */
  nodes: Record<string, { state: StepState; durationMs?: number }>;
  /** the upstream sessions replaced under the run (session_replaced events), oldest first */
  sessionsReplaced?: RunEventSessionPayload[];
}

export const terminalStatuses = ["completed", "failed", "cancelled"];

export function emptyRun(runId: string): RunView {
  return { runId, status: "unknown", terminal: false, cursor: 0, timeline: [], nodes: {} };
}

function errorOutcome(outcome: string | undefined, error: string | undefined): boolean {
  return !!error || outcome === "error";
}

/** applyEvent folds one event; events at or before the cursor are ignored (a replay after a reconnect). */
export function applyEvent(run: RunView, ev: RunEventNotification): RunView {
  if (ev.run_id !== run.runId || ev.sequence <= run.cursor) return run;
  const next: RunView = { ...run, cursor: ev.sequence, timeline: run.timeline, nodes: run.nodes, startedMs: run.startedMs ?? ev.timestamp_epoch_ms };
  switch (ev.kind) {
    case "step_started": {
      const s = ev.step;
      if (!s) break;
      next.timeline = [...run.timeline, { key: `${s.frame_id}/${s.node_id}/${ev.sequence}`, frameId: s.frame_id, nodeId: s.node_id, state: "running", capability: s.capability, startedMs: ev.timestamp_epoch_ms }];
      next.nodes = { ...run.nodes, [s.node_id]: { state: "running" } };
      break;
    }
    case "step_finished": {
      const s = ev.step;
      if (!s) break;
      const state: StepState = s.outcome === "interrupt" ? "interrupted" : errorOutcome(s.outcome, s.error) ? "error" : "ok";
      const idx = findOpen(run.timeline, s.frame_id, s.node_id);
      const base: TimelineEntry = idx >= 0 ? run.timeline[idx] : { key: `${s.frame_id}/${s.node_id}/${ev.sequence}`, frameId: s.frame_id, nodeId: s.node_id, state };
      const done: TimelineEntry = { ...base, state, outcome: s.outcome, next: s.next_node_id, error: s.error, finishedMs: ev.timestamp_epoch_ms, traceIndex: s.trace_index, stateChanges: s.state_changes, capability: base.capability ?? s.capability };
      next.timeline = idx >= 0 ? run.timeline.map((t, i) => (i === idx ? done : t)) : [...run.timeline, done];
      const durationMs = done.startedMs !== undefined ? ev.timestamp_epoch_ms - done.startedMs : undefined;
      next.nodes = { ...run.nodes, [s.node_id]: { state, durationMs } };
      break;
    }
    case "step_progress":
    case "step_log": {
      const s = ev.step;
      if (!s) break;
      const idx = findStep(run.timeline, s.frame_id, s.node_id);
      if (idx < 0) break;
      const t = run.timeline[idx];
      const upd: TimelineEntry = ev.kind === "step_progress" ? { ...t, progress: ev.progress ?? t.progress } : ev.log ? { ...t, logs: [...(t.logs ?? []), ev.log] } : t;
      next.timeline = run.timeline.map((e, i) => (i === idx ? upd : e));
      break;
    }
    case "session_replaced":
      if (ev.session) next.sessionsReplaced = [...(run.sessionsReplaced ?? []), ev.session];
      break;
    case "interrupted":
      next.interrupt = ev.interrupt ?? null;
      if (ev.interrupt) next.nodes = { ...run.nodes, [ev.interrupt.node_id]: { ...run.nodes[ev.interrupt.node_id], state: "interrupted" } };
      break;
    case "status": {
      const st = ev.status;
      if (!st) break;
      next.status = st.status;
      next.terminal = st.terminal;
      next.outcome = st.outcome;
      next.output = st.output ?? next.output;
      next.error = st.error;
      next.endedMs = st.terminal ? ev.timestamp_epoch_ms : undefined;
      if (st.status !== "interrupted") next.interrupt = null;
      break;
    }
  }
  return next;
}

/** sessionReplacedText says, as run --follow does, that a run's session on a connection was replaced. */
export function sessionReplacedText(s: RunEventSessionPayload): string {
  const where = s.scope ? `${s.connection} (${s.scope})` : s.connection;
  const restarted = s.restarted ? ", opened since mcpflow restarted" : "";
  return `session of ${where} replaced: generation ${s.old_generation} → ${s.new_generation}${restarted}; the state of the old session is gone`;
}

/** progressText says a step's upstream progress as "3/5 – message" (no total: "3 – message"). */
export function progressText(p: RunEventProgressPayload): string {
  const count = p.total !== undefined ? `${p.progress}/${p.total}` : `${p.progress}`;
  return p.message ? `${count} – ${p.message}` : count;
}

/** logText says a step's log line: its level, logger and data (a string as it is, else its JSON). */
export function logText(l: RunEventLogPayload): string {
  const data = typeof l.data === "string" ? l.data : l.data === undefined ? "" : JSON.stringify(l.data);
  const cut = l.truncated ? " (cut)" : "";
  const dropped = l.dropped ? ` (${l.dropped} more not kept)` : "";
  return `${l.level}${l.logger ? ` ${l.logger}` : ""}: ${data}${cut}${dropped}`;
}

/** findStep is the step a report is about: its open entry, else its latest. */
function findStep(timeline: TimelineEntry[], frameId: string, nodeId: string): number {
  const open = findOpen(timeline, frameId, nodeId);
  if (open >= 0) return open;
  for (let i = timeline.length - 1; i >= 0; i--) {
    if (timeline[i].frameId === frameId && timeline[i].nodeId === nodeId) return i;
  }
  return -1;
}

function findOpen(timeline: TimelineEntry[], frameId: string, nodeId: string): number {
  for (let i = timeline.length - 1; i >= 0; i--) {
    const t = timeline[i];
    if (t.frameId === frameId && t.nodeId === nodeId && t.state === "running") return i;
  }
  return -1;
}

/** withTrace adds each step's resolved input and output from the run's trace (runs.trace or inspect). */
export function withTrace(run: RunView, trace: TraceEntryPayload[], start = 0): RunView {
  const timeline = run.timeline.map((t) => {
    if (t.traceIndex === undefined) return t;
    const e = trace[t.traceIndex - start];
    return e ? { ...t, input: e.resolved_input, output: e.output } : t;
  });
  return { ...run, timeline };
}

/** fromResult seeds a view from runs.inspect, for the fields events do not replay. */
export function fromResult(run: RunView, r: RunResult): RunView {
  return { ...run, status: run.cursor > 0 ? run.status : r.status, terminal: run.cursor > 0 ? run.terminal : terminalStatuses.includes(r.status), outcome: run.outcome ?? r.outcome ?? undefined, output: run.output ?? r.output, interrupt: run.cursor > 0 ? run.interrupt : r.interrupt, error: run.error ?? r.error ?? undefined };
}

/**
 * forkPoints are the steps a fork of the run may start from, as far as
 * its timeline shows them: the steps of its main line (the frame its
 * first step ran in), each once, in the order first reached. The server
 * has the last word (workflow.runs.fork refuses a step, naming the ones
 * it takes).
 */
export function forkPoints(timeline: TimelineEntry[]): string[] {
  if (timeline.length === 0) return [];
  const root = timeline[0].frameId;
  const seen = new Set<string>();
  for (const t of timeline) {
    if (t.frameId === root) seen.add(t.nodeId);
  }
  return [...seen];
}
