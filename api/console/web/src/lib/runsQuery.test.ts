import { describe, expect, it } from "vitest";
import type { RunSummary, RunsListParams } from "../api/generated";
import { listRuns, noFilter, type ListRuns } from "./runsQuery";

const row = (i: number, status: string, deployment = "a.default", startedBy = "local"): RunSummary => ({
  run_id: `run_${i}`, deployment_id: deployment, artifact_id: "a", artifact_version: 1, status, resume_readiness: "", diagnostic_count: 0,
  created_at: "2026-03-01T10:00:00Z", updated_at: "2026-03-01T10:00:01Z", started_by: startedBy,
});

const rows = [row(1, "running"), row(2, "completed", "b.default"), row(3, "running", "b.default", "ci"), row(4, "failed"), row(5, "running")];

/** server is runs.list over rows; it refuses statuses outside accepts with -32602, as the server does today for running. */
function server(accepts: string[]): { list: ListRuns; calls: RunsListParams[] } {
  const calls: RunsListParams[] = [];
  const list: ListRuns = async (p) => {
    calls.push(p);
    if (p.status && !accepts.includes(p.status)) throw Object.assign(new Error("status must be completed, failed or interrupted"), { code: -32602 });
    const all = rows.filter((r) => !p.status || r.status === p.status);
    const off = p.cursor ? Number(p.cursor) : 0;
    const lim = p.limit ?? 50;
    return { runs: all.slice(off, off + lim), total: all.length, next_cursor: off + lim < all.length ? String(off + lim) : null };
  };
  return { list, calls };
}

describe("the run query", () => {
  it("lets the server filter what it can, and pages by its cursor", async () => {
    const s = server(["completed", "failed", "interrupted", "running"]);
    const p = await listRuns(s.list, { ...noFilter, status: "running" }, null, 2);
    expect(p.runs.map((r) => r.run_id)).toEqual(["run_1", "run_3"]);
    expect(p.total).toBe(3);
    expect(p.nextCursor).toBe("2");
    expect(p.searched).toBeUndefined();
    expect(s.calls).toEqual([{ status: "running", cursor: null, limit: 2 }]);
  });
  it("filters running runs here when the server refuses the status", async () => {
    const s = server(["completed", "failed", "interrupted"]);
    const p = await listRuns(s.list, { ...noFilter, status: "running" }, null, 2);
    expect(p.runs.map((r) => r.run_id)).toEqual(["run_1", "run_3"]);
    expect(p.total).toBe(3);
    expect(p.nextCursor).toBe("2");
    expect(p.searched).toEqual({ runs: 5, all: true });
    const second = await listRuns(s.list, { ...noFilter, status: "running" }, "2", 2);
    expect(second.runs.map((r) => r.run_id)).toEqual(["run_5"]);
    expect(second.nextCursor).toBeNull();
  });
  it("filters by deployment, who started a run and a part of its id", async () => {
    const s = server(["completed", "failed", "interrupted"]);
    expect((await listRuns(s.list, { ...noFilter, deployment: "b.default" }, null, 10)).runs.map((r) => r.run_id)).toEqual(["run_2", "run_3"]);
    expect((await listRuns(s.list, { ...noFilter, startedBy: "ci" }, null, 10)).runs.map((r) => r.run_id)).toEqual(["run_3"]);
    expect((await listRuns(s.list, { ...noFilter, runId: "RUN_4 " }, null, 10)).runs.map((r) => r.run_id)).toEqual(["run_4"]);
    expect((await listRuns(s.list, { ...noFilter, status: "failed", runId: "run_" }, null, 10)).runs.map((r) => r.run_id)).toEqual(["run_4"]);
  });
});
