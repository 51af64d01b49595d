import { useEffect, useState } from "react";
import { followAdmin } from "../api/follow";
import { ErrorBox } from "../components/Json";
import { useLoad } from "../hooks";
import { useSession } from "../session";
import { RunTable } from "./Overview";

const statuses = ["", "completed", "failed", "interrupted"] as const;

export function Runs() {
  const { conn, scopes } = useSession();
  const [status, setStatus] = useState<(typeof statuses)[number]>("");
  const [deployment, setDeployment] = useState("");
  const [limit, setLimit] = useState(20);
  const [cursors, setCursors] = useState<(string | null)[]>([null]);
  const [tick, setTick] = useState(0);
  const cursor = cursors[cursors.length - 1];
  const page = useLoad(() => conn.api.runsList({ status: status || null, cursor, limit }), [conn, status, cursor, limit, tick]);
  const deps = useLoad(() => conn.api.deploymentsList(), [conn]);
  useEffect(() => {
    if (!scopes.admin) return;
    // Run events in the admin log refresh the first page; later pages stay put while read.
    const feed = followAdmin(conn, (ev) => ev.kind.startsWith("run") && cursors.length === 1 && setTick((t) => t + 1), () => undefined);
    return feed.stop;
  }, [conn, scopes.admin, cursors.length]);
  const reset = () => setCursors([null]);
  const rows = (page.data?.runs ?? []).filter((r) => !deployment || r.deployment_id === deployment);
  return (
    <section aria-labelledby="runs-h">
      <h1 id="runs-h">Runs</h1>
      <div className="filters">
        <label htmlFor="runs-status">Status</label>
        <select id="runs-status" value={status} onChange={(e) => { setStatus(e.target.value as typeof status); reset(); }}>
          {statuses.map((s) => (
            <option key={s} value={s}>
              {s || "any"}
            </option>
          ))}
        </select>
        <label htmlFor="runs-dep">Deployment</label>
        <select id="runs-dep" value={deployment} onChange={(e) => setDeployment(e.target.value)}>
          <option value="">any</option>
          {(deps.data?.deployments ?? []).map((d) => (
            <option key={d.id}>{d.id}</option>
          ))}
        </select>
        <label htmlFor="runs-limit">Per page</label>
        <select id="runs-limit" value={limit} onChange={(e) => { setLimit(Number(e.target.value)); reset(); }}>
          {[10, 20, 50, 100].map((n) => (
            <option key={n}>{n}</option>
          ))}
        </select>
      </div>
      {deployment && <p className="muted">The deployment filter applies to the page the server sent (runs.list filters by status only).</p>}
      <ErrorBox error={page.error} />
      <p className="muted">{page.data ? `${page.data.total} runs` : "…"}</p>
      <RunTable runs={rows} />
      <nav className="pager" aria-label="Pages">
        <button type="button" disabled={cursors.length <= 1} onClick={() => setCursors(cursors.slice(0, -1))}>
          Previous page
        </button>
        <span>page {cursors.length}</span>
        <button type="button" disabled={!page.data?.next_cursor} onClick={() => page.data?.next_cursor && setCursors([...cursors, page.data.next_cursor])}>
          Next page
        </button>
      </nav>
    </section>
  );
}
