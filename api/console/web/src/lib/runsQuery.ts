// The run lists' query: runs.list with the console's filters (status,
// deployment, who started it, a run id search). The server filters by
// status (running and cancelled included) and deployment; runs.list has
// no filter for who started a run nor a run id search, so those two are
// applied here over the latest runs the server lists (already filtered
// by status and deployment), behind this one function.
import type { RunSummary, RunsListParams } from "../api/generated";

export const runStatuses = ["running", "interrupted", "completed", "failed", "cancelled"] as const;

export interface RunFilter {
  status: "" | (typeof runStatuses)[number];
  deployment: string;
  startedBy: string;
  /** a run id or a part of one */
  runId: string;
}

export const noFilter: RunFilter = { status: "", deployment: "", startedBy: "", runId: "" };

export interface RunsPage {
  runs: RunSummary[];
  total: number;
  nextCursor: string | null;
  /** set when some filter was applied here: how many of the latest runs were searched, and whether that was all of them */
  searched?: { runs: number; all: boolean };
}

/** The list call, as the generated client makes it (a test passes a fake). */
export type ListRuns = (p: RunsListParams) => Promise<{ runs: RunSummary[]; total: number; next_cursor: string | null }>;

/** How many of the latest runs a filter the server does not apply searches. */
export const scanLimit = 1000;
const scanPage = 100;

/** matches is the filter applied here, to one row: who started it and the run id search. */
export function matches(r: RunSummary, f: RunFilter): boolean {
  if (f.startedBy && (r.started_by ?? "") !== f.startedBy) return false;
  if (f.runId && !r.run_id.toLowerCase().includes(f.runId.trim().toLowerCase())) return false;
  return true;
}

/** listRuns answers one page of runs matching f, after cursor (an offset, as runs.list's). */
export async function listRuns(list: ListRuns, f: RunFilter, cursor: string | null, limit: number): Promise<RunsPage> {
  const server: RunsListParams = {};
  if (f.status) server.status = f.status;
  if (f.deployment) server.deployment_id = f.deployment;
  if (f.startedBy === "" && f.runId.trim() === "") {
    const r = await list({ ...server, cursor, limit });
    return { runs: r.runs, total: r.total, nextCursor: r.next_cursor };
  }
  // Filtered here: read the latest runs, page by page, up to scanLimit.
  const seen: RunSummary[] = [];
  let next: string | null = null;
  let total = 0;
  do {
    const r = await list({ ...server, cursor: next, limit: scanPage });
    seen.push(...r.runs);
    total = r.total;
    next = r.next_cursor;
  } while (next !== null && seen.length < scanLimit);
  const matched = seen.filter((r) => matches(r, f));
  const offset = cursor ? Number(cursor) || 0 : 0;
  const end = offset + limit;
  return {
    runs: matched.slice(offset, end),
    total: matched.length,
    nextCursor: end < matched.length ? String(end) : null,
    searched: { runs: seen.length, all: seen.length >= total },
  };
}
