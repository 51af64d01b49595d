import { describe, expect, it } from "vitest";
import type { RunEventNotification } from "../api/generated";
import { applyEvent, emptyRun, forkPoints, fromResult, logText, progressText, sessionReplacedText, withTrace, type RunView } from "./runState";

const ev = (sequence: number, kind: RunEventNotification["kind"], rest: Partial<RunEventNotification>, t = sequence * 10): RunEventNotification => ({
  subscription_id: "sub_1", run_id: "run_1", sequence, kind, timestamp_epoch_ms: t, ...rest,
});

const events: RunEventNotification[] = [
  ev(1, "status", { status: { status: "running", terminal: false, trace_count: 0 } }),
  ev(2, "step_started", { step: { frame_id: "root", node_id: "call", call_id: "c1", capability: "demo.default.counter" } }),
  ev(3, "step_finished", { step: { frame_id: "root", node_id: "call", trace_index: 0, step_type: "node", outcome: "ok", next_node_id: "ask", state_changes: ["state.count"] } }, 45),
  ev(4, "step_finished", { step: { frame_id: "root", node_id: "ask", trace_index: 1, step_type: "interrupt", outcome: "interrupt", next_node_id: "ask" } }),
  ev(5, "interrupted", { interrupt: { id: "interrupt:ask", frame_id: "root", node_id: "ask", kind: "approval", payload: {}, resumable: true, route: null, outcomes: ["submitted"], request_schema: {}, resume_schema: {}, typed: false } }),
  ev(6, "status", { status: { status: "interrupted", terminal: false, trace_count: 2 } }),
];

function fold(list: RunEventNotification[], from: RunView = emptyRun("run_1")): RunView {
  return list.reduce(applyEvent, from);
}

describe("the run-event reducer", () => {
  it("lights steps as they start and finish, with durations", () => {
    const r = fold(events.slice(0, 3));
    expect(r.status).toBe("running");
    expect(r.nodes.call).toEqual({ state: "ok", durationMs: 25 });
    expect(r.timeline).toHaveLength(1);
    expect(r.timeline[0]).toMatchObject({ nodeId: "call", state: "ok", outcome: "ok", capability: "demo.default.counter", traceIndex: 0, stateChanges: ["state.count"] });
    expect(fold(events.slice(0, 2)).nodes.call).toEqual({ state: "running" });
  });
  it("keeps the sessions replaced under the run", () => {
    const r = fold([...events, ev(7, "session_replaced", { session: { connection: "pw.default", old_generation: 1, new_generation: 2 } })]);
    expect(r.sessionsReplaced).toEqual([{ connection: "pw.default", old_generation: 1, new_generation: 2 }]);
    expect(sessionReplacedText(r.sessionsReplaced![0])).toBe("session of pw.default replaced: generation 1 → 2; the state of the old session is gone");
    expect(fold(events).sessionsReplaced).toBeUndefined();
  });
  it("keeps when the run started and when it ended", () => {
    const r = fold(events);
    expect(r.startedMs).toBe(10);
    expect(r.endedMs).toBeUndefined(); // interrupted: not ended
    const done = applyEvent(r, ev(7, "status", { status: { status: "failed", terminal: true, trace_count: 2, error: "the tool said no" } }, 990));
    expect([done.startedMs, done.endedMs, done.error]).toEqual([10, 990, "the tool said no"]);
  });
  it("keeps a running step's latest upstream progress and its log lines", () => {
    const r = fold([
      ...events.slice(0, 2),
      ev(3, "step_progress", { step: { frame_id: "root", node_id: "call", call_id: "c1" }, progress: { progress: 1, total: 5 } }),
      ev(4, "step_log", { step: { frame_id: "root", node_id: "call", call_id: "c1" }, log: { level: "info", logger: "srv", data: "copying" } }),
      ev(5, "step_progress", { step: { frame_id: "root", node_id: "call", call_id: "c1" }, progress: { progress: 3, total: 5, message: "copying" } }),
      ev(6, "step_log", { step: { frame_id: "root", node_id: "call", call_id: "c1" }, log: { level: "error", data: { code: 7 }, truncated: true } }),
    ]);
    expect(r.timeline[0].state).toBe("running");
    expect(progressText(r.timeline[0].progress!)).toBe("3/5 – copying");
    expect(r.timeline[0].logs!.map(logText)).toEqual(["info srv: copying", 'error: {"code":7} (cut)']);
    expect(progressText({ progress: 0.5 })).toBe("0.5");
    expect(logText({ level: "warning", data: "x", dropped: 12 })).toBe("warning: x (12 more not kept)");
  });
  it("holds the pending interrupt", () => {
    const r = fold(events);
    expect(r.status).toBe("interrupted");
    expect(r.interrupt?.node_id).toBe("ask");
    expect(r.nodes.ask.state).toBe("interrupted");
    expect(r.cursor).toBe(6);
  });
  it("ignores events replayed at or before its cursor, and other runs' events", () => {
    const once = fold(events);
    expect(fold(events, once)).toBe(once);
    expect(applyEvent(once, { ...events[0], run_id: "run_2", sequence: 7 })).toBe(once);
  });
  it("ends on a terminal status and clears the interrupt", () => {
    const r = fold([
      ...events,
      ev(7, "step_finished", { step: { frame_id: "root", node_id: "ask", trace_index: 2, outcome: "submitted", next_node_id: "__end__" } }),
      ev(8, "status", { status: { status: "completed", terminal: true, outcome: "ok", output: { count: 1 }, trace_count: 3 } }),
    ]);
    expect(r).toMatchObject({ status: "completed", terminal: true, outcome: "ok", output: { count: 1 }, interrupt: null });
    expect(r.timeline.map((t) => `${t.nodeId}:${t.state}`)).toEqual(["call:ok", "ask:interrupted", "ask:ok"]);
  });
  it("marks a failed step as error", () => {
    const r = fold([events[1], ev(3, "step_finished", { step: { frame_id: "root", node_id: "call", outcome: "error", error: "boom" } })], { ...emptyRun("run_1"), cursor: 1 });
    expect(r.nodes.call.state).toBe("error");
    expect(r.timeline[0].error).toBe("boom");
  });
  it("adds inputs and outputs from the trace, and seeds from inspect", () => {
    const r = withTrace(fold(events.slice(0, 3)), [{ frame_id: "root", node_id: "call", step_type: "node", outcome: "ok", next_node_id: "ask", resolved_input: { a: 1 }, output: { count: 1 }, state_changes: {} }]);
    expect(r.timeline[0]).toMatchObject({ input: { a: 1 }, output: { count: 1 } });
    const seeded = fromResult(emptyRun("run_1"), { status: "completed", outcome: "ok", output: { count: 2 } } as never);
    expect(seeded).toMatchObject({ status: "completed", terminal: true, outcome: "ok", output: { count: 2 } });
  });
});

describe("forkPoints", () => {
  it("lists the main line's steps once each, in the order first reached", () => {
    const at = (frameId: string, nodeId: string) => ({ key: `${frameId}/${nodeId}`, frameId, nodeId, state: "ok" as const });
    expect(forkPoints([at("root", "a"), at("root", "loop"), at("loop#0", "body"), at("root", "b"), at("root", "a")])).toEqual(["a", "loop", "b"]);
    expect(forkPoints([])).toEqual([]);
  });
});
