// The run lists' query: runs.list with the console's filters (status,
// deployment, who started it, a run id search). What the server filters
// it filters; the rest is filtered here over the latest runs the server
// lists, behind this one function, so that the server's own filters
// replace it by a change here alone. Today runs.list filters by
// completed, failed and interrupted; `running` is asked of the server
// first and filtered here only when the server refuses it (-32602).
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

/** Statuses runs.list refused on this page: filtered here from then on. */
const refusedStatuses = new Set<string>();

function isInvalidParams(e: unknown): boolean {
  return typeof e === "object" && e !== null && (e as { code?: unknown }).code === -32602;
}

/** matches is the filter applied here, to one row. */
export function matches(r: RunSummary, f: RunFilter, statusHere: boolean): boolean {
  if (statusHere && f.status && r.status !== f.status) return false;
  if (f.deployment && r.deployment_id !== f.deployment) return false;
  if (f.startedBy && (r.started_by ?? "") !== f.startedBy) return false;
  if (f.runId && !r.run_id.toLowerCase().includes(f.runId.trim().toLowerCase())) return false;
  return true;
}

/** listRuns answers one page of runs matching f, after cursor (an offset, as runs.list's). */
export async function listRuns(list: ListRuns, f: RunFilter, cursor: string | null, limit: number): Promise<RunsPage> {
  let statusHere = f.status !== "" && refusedStatuses.has(f.status);
  const hereOnly = statusHere || f.deployment !== "" || f.startedBy !== "" || f.runId.trim() !== "";
  const serverStatus = (f.status && !statusHere ? f.status : null) as RunsListParams["status"];
  if (!hereOnly) {
    try {
      const r = await list({ status: serverStatus, cursor, limit });
      return { runs: r.runs, total: r.total, nextCursor: r.next_cursor };
    } catch (e) {
      if (!f.status || !isInvalidParams(e)) throw e;
      refusedStatuses.add(f.status);
      statusHere = true;
    }
  }
  // Filtered here: read the latest runs, page by page, up to scanLimit.
  const seen: RunSummary[] = [];
  let next: string | null = null;
  let total = 0;
  let status = statusHere ? null : serverStatus;
  do {
    let r;
    try {
      r = await list({ status, cursor: next, limit: scanPage });
    } catch (e) {
      if (!status || !isInvalidParams(e)) throw e;
      refusedStatuses.add(status);
      statusHere = true;
      status = null;
      seen.length = 0;
      next = null;
      continue;
    }
    seen.push(...r.runs);
    total = r.total;
    next = r.next_cursor;
  } while (next !== null && seen.length < scanLimit);
  const matched = seen.filter((r) => matches(r, f, statusHere));
  const offset = cursor ? Number(cursor) || 0 : 0;
  const end = offset + limit;
  return {
    runs: matched.slice(offset, end),
    total: matched.length,
    nextCursor: end < matched.length ? String(end) : null,
    searched: { runs: seen.length, all: seen.length >= total },
  };
}
