import { describe, expect, it } from "vitest";
import type { RunSummary, RunsListParams } from "../api/generated";
import { listRuns, noFilter, type ListRuns } from "./runsQuery";

const row = (i: number, status: string, deployment = "a.default", startedBy = "local"): RunSummary => ({
  run_id: `run_${i}`, deployment_id: deployment, artifact_id: "a", artifact_version: 1, status, resume_readiness: "", diagnostic_count: 0,
  created_at: "2026-03-01T10:00:00Z", updated_at: "2026-03-01T10:00:01Z", started_by: startedBy,
});

const rows = [row(1, "running"), row(2, "completed", "b.default"), row(3, "running", "b.default", "ci"), row(4, "failed"), row(5, "running")];

/** server is runs.list over rows, filtering by status and deployment as the server does. */
function server(): { list: ListRuns; calls: RunsListParams[] } {
  const calls: RunsListParams[] = [];
  const list: ListRuns = async (p) => {
    calls.push(p);
    const all = rows.filter((r) => (!p.status || r.status === p.status) && (!p.deployment_id || r.deployment_id === p.deployment_id));
    const off = p.cursor ? Number(p.cursor) : 0;
    const lim = p.limit ?? 50;
    return { runs: all.slice(off, off + lim), total: all.length, next_cursor: off + lim < all.length ? String(off + lim) : null };
  };
  return { list, calls };
}

describe("the run query", () => {
  it("asks the server for the status, and pages by its cursor", async () => {
    const s = server();
    const p = await listRuns(s.list, { ...noFilter, status: "running" }, null, 2);
    expect(p.runs.map((r) => r.run_id)).toEqual(["run_1", "run_3"]);
    expect(p.total).toBe(3);
    expect(p.nextCursor).toBe("2");
    expect(p.searched).toBeUndefined();
    expect(s.calls).toEqual([{ status: "running", cursor: null, limit: 2 }]);
  });
  it("asks the server for the deployment, with the status", async () => {
    const s = server();
    const p = await listRuns(s.list, { ...noFilter, status: "running", deployment: "b.default" }, null, 10);
    expect(p.runs.map((r) => r.run_id)).toEqual(["run_3"]);
    expect(p.searched).toBeUndefined();
    expect(s.calls).toEqual([{ status: "running", deployment_id: "b.default", cursor: null, limit: 10 }]);
  });
  it("asks nothing of the server it has no filter for", async () => {
    const s = server();
    await listRuns(s.list, noFilter, null, 10);
    expect(s.calls).toEqual([{ cursor: null, limit: 10 }]);
  });
  it("filters who started a run and a part of its id here, over the server's filtered runs", async () => {
    const s = server();
    expect((await listRuns(s.list, { ...noFilter, startedBy: "ci" }, null, 10)).runs.map((r) => r.run_id)).toEqual(["run_3"]);
    expect((await listRuns(s.list, { ...noFilter, runId: "RUN_4 " }, null, 10)).runs.map((r) => r.run_id)).toEqual(["run_4"]);
    s.calls.length = 0;
    const p = await listRuns(s.list, { ...noFilter, status: "running", deployment: "a.default", runId: "run_" }, null, 1);
    expect(p.runs.map((r) => r.run_id)).toEqual(["run_1"]);
    expect(p.total).toBe(2);
    expect(p.nextCursor).toBe("1");
    expect(p.searched).toEqual({ runs: 2, all: true });
    expect(s.calls).toEqual([{ status: "running", deployment_id: "a.default", cursor: null, limit: 100 }]);
  });
});
