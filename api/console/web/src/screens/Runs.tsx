import { useEffect, useState } from "react";
import { followAdmin } from "../api/follow";
import type { RunsListParams } from "../api/generated";
import { ErrorBox } from "../components/Json";
import { useLoad } from "../hooks";
import { listRuns, noFilter, runStatuses, scanLimit, type RunFilter } from "../lib/runsQuery";
import { useSession } from "../session";
import { RunTable } from "./Overview";

export function Runs({ status = "" }: { status?: string }) {
  const { conn, scopes } = useSession();
  const [filter, setFilter] = useState<RunFilter>(() => ({ ...noFilter, status: (runStatuses as readonly string[]).includes(status) ? (status as RunFilter["status"]) : "" }));
  const [limit, setLimit] = useState(20);
  const [cursors, setCursors] = useState<(string | null)[]>([null]);
  const [tick, setTick] = useState(0);
  const cursor = cursors[cursors.length - 1];
  const page = useLoad(() => listRuns((p: RunsListParams) => conn.api.runsList(p), filter, cursor, limit), [conn, filter, cursor, limit, tick]);
  const deps = useLoad(() => conn.api.deploymentsList(), [conn]);
  const [starters, setStarters] = useState<string[]>([]);
  useEffect(() => {
    const seen = (page.data?.runs ?? []).map((r) => r.started_by).filter((s): s is string => !!s);
    setStarters((old) => (seen.every((s) => old.includes(s)) ? old : [...new Set([...old, ...seen])].sort()));
  }, [page.data]);
  useEffect(() => {
    if (!scopes.admin) return;
    // Run events in the admin log refresh the first page; later pages stay put while read.
    const feed = followAdmin(conn, (ev) => ev.kind.startsWith("run") && cursors.length === 1 && setTick((t) => t + 1), () => undefined);
    return feed.stop;
  }, [conn, scopes.admin, cursors.length]);
  const set = (f: Partial<RunFilter>) => {
    setFilter((old) => ({ ...old, ...f }));
    setCursors([null]);
  };
  const searched = page.data?.searched;
  return (
    <section aria-labelledby="runs-h">
      <h1 id="runs-h">
        Runs {scopes.admin && <span className="live">live</span>}
      </h1>
      <form className="filters" role="search" aria-label="Filter runs" onSubmit={(e) => e.preventDefault()}>
        <div className="filter">
          <label htmlFor="runs-q">Run id</label>
          <input id="runs-q" type="search" value={filter.runId} placeholder="run id or part of one" onChange={(e) => set({ runId: e.target.value })} />
        </div>
        <div className="filter">
          <label htmlFor="runs-status">Status</label>
          <select id="runs-status" value={filter.status} onChange={(e) => set({ status: e.target.value as RunFilter["status"] })}>
            <option value="">any</option>
            {runStatuses.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </div>
        <div className="filter">
          <label htmlFor="runs-dep">Deployment</label>
          <select id="runs-dep" value={filter.deployment} onChange={(e) => set({ deployment: e.target.value })}>
            <option value="">any</option>
            {(deps.data?.deployments ?? []).map((d) => (
              <option key={d.id}>{d.id}</option>
            ))}
          </select>
        </div>
        <div className="filter">
          <label htmlFor="runs-by">Started by</label>
          <input id="runs-by" list="runs-by-list" value={filter.startedBy} placeholder="anyone" onChange={(e) => set({ startedBy: e.target.value.trim() })} />
          <datalist id="runs-by-list">
            {starters.map((s) => (
              <option key={s} value={s} />
            ))}
          </datalist>
        </div>
        <div className="filter">
          <label htmlFor="runs-limit">Per page</label>
          <select id="runs-limit" value={limit} onChange={(e) => { setLimit(Number(e.target.value)); setCursors([null]); }}>
            {[10, 20, 50, 100].map((n) => (
              <option key={n}>{n}</option>
            ))}
          </select>
        </div>
        {(filter.runId || filter.status || filter.deployment || filter.startedBy) && (
          <button type="button" className="link" onClick={() => set(noFilter)}>
            Clear filters
          </button>
        )}
      </form>
      <ErrorBox error={page.error} />
      <p className="muted" data-total={page.data?.total ?? ""}>
        {page.data ? `${page.data.total} ${page.data.total === 1 ? "run" : "runs"}` : "…"}
        {searched && !searched.all ? ` among the latest ${searched.runs} (a filter the server does not apply searches the latest ${scanLimit})` : ""}
      </p>
      <RunTable runs={page.data?.runs ?? []} />
      <nav className="pager" aria-label="Pages">
        <button type="button" disabled={cursors.length <= 1} onClick={() => setCursors(cursors.slice(0, -1))}>
          Previous page
        </button>
        <span>page {cursors.length}</span>
        <button type="button" disabled={!page.data?.nextCursor} onClick={() => page.data?.nextCursor && setCursors([...cursors, page.data.nextCursor])}>
          Next page
        </button>
      </nav>
    </section>
  );
}
