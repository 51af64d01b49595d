import { describe, expect, it } from "vitest";
import { followRun } from "./follow";
import type { RunEventNotification } from "./generated";
import type { Connection } from "./rpc";

/** conn is the part of a Connection followRun uses, driven by the test. */
function fakeConn() {
  const listeners = new Map<string, ((p: unknown) => void)[]>();
  const opens: (() => void)[] = [];
  const subscribes: { run_id: string; after_sequence?: number }[] = [];
  const conn = {
    state: "open",
    api: {
      runsSubscribe: (p: { run_id: string; after_sequence?: number }) => {
        subscribes.push(p);
        return Promise.resolve({ subscription_id: `sub_${subscribes.length}`, run_id: p.run_id, status: "running", last_sequence: 0, active: true });
      },
      runsUnsubscribe: () => Promise.resolve({}),
    },
    on: (method: string, l: (p: unknown) => void) => {
      listeners.set(method, [...(listeners.get(method) ?? []), l]);
      return () => undefined;
    },
    onOpen: (l: () => void) => {
      opens.push(l);
      return () => undefined;
    },
  };
  const push = (method: string, p: unknown) => (listeners.get(method) ?? []).forEach((l) => l(p));
  const reconnect = () => opens.forEach((l) => l());
  return { conn: conn as unknown as Connection, push, reconnect, subscribes };
}

const ev = (sequence: number, kind: RunEventNotification["kind"] = "step_started"): RunEventNotification => ({
  subscription_id: "sub_1", run_id: "run_1", sequence, kind, timestamp_epoch_ms: sequence, step: { frame_id: "root", node_id: "n" },
});

describe("followRun", () => {
  it("delivers in sequence, once, and subscribes again after its cursor on a reconnect", async () => {
    const f = fakeConn();
    const got: number[] = [];
    followRun(f.conn, "run_1", 0, (e) => got.push(e.sequence), () => undefined);
    expect(f.subscribes).toEqual([{ run_id: "run_1", after_sequence: 0 }]);
    f.push("workflow.runs.event", ev(1));
    f.push("workflow.runs.event", ev(3)); // early: held until 2 comes
    f.push("workflow.runs.event", ev(2));
    f.push("workflow.runs.event", { ...ev(9), run_id: "run_2" }); // another run's
    expect(got).toEqual([1, 2, 3]);
    f.reconnect();
    expect(f.subscribes[1]).toEqual({ run_id: "run_1", after_sequence: 3 });
    f.push("workflow.runs.event", ev(3)); // the replay overlaps: not twice
    f.push("workflow.runs.event", ev(4));
    expect(got).toEqual([1, 2, 3, 4]);
  });
  it("subscribes again after a lagged notice and stops at a terminal status", async () => {
    const f = fakeConn();
    const got: number[] = [];
    followRun(f.conn, "run_1", 0, (e) => got.push(e.sequence), () => undefined);
    await Promise.resolve();
    f.push("workflow.runs.event", ev(1));
    f.push("workflow.runs.lagged", { subscription_id: "sub_1", run_id: "run_1", cursor: 1, reason: "buffer_full" });
    expect(f.subscribes[1]).toEqual({ run_id: "run_1", after_sequence: 1 });
    f.push("workflow.runs.event", { ...ev(2, "status"), status: { status: "completed", terminal: true, trace_count: 1 } });
    f.reconnect();
    expect(f.subscribes).toHaveLength(2); // ended: no new subscription
    expect(got).toEqual([1, 2]);
  });
});
