import { useEffect, useState } from "react";
import { followAdmin } from "../api/follow";
import type { AdminEventNotification, AdminEventPayload, ConnectionLogPayload, ConnectionStatusPayload, RunSummary, RunsListParams } from "../api/generated";
import { ErrorBox, Status } from "../components/Json";
import { Ago, Duration } from "../components/Time";
import { healthBadge } from "../lib/health";
import { listRuns, noFilter } from "../lib/runsQuery";
import { logText } from "../lib/runState";
import { errorText, useLoad } from "../hooks";
import { href, useSession } from "../session";

type Session = { state?: string; generation?: number; sessions_opened?: number; restarts?: number; calls_in_flight?: number; last_error?: string | null; logs?: ConnectionLogPayload[] };

function sessionOf(s: ConnectionStatusPayload): Session {
  return (s.session ?? {}) as Session;
}

const countedStatuses = ["running", "interrupted", "completed", "failed"] as const;

export function Overview() {
  const { conn, scopes } = useSession();
  const [tick, setTick] = useState(0);
  const [events, setEvents] = useState<(AdminEventPayload | AdminEventNotification)[]>([]);
  const [liveError, setLiveError] = useState("");
  const health = useLoad(async () => healthBadge(await conn.api.health()), [conn, tick]);
  const statuses = useLoad(() => (scopes.admin ? conn.api.adminConnectionStatusesList() : Promise.resolve(undefined)), [conn, tick]);
  const runs = useLoad(() => conn.api.runsList({ limit: 10 }), [conn, tick]);
  const counts = useLoad(async () => {
    const out: Record<string, number> = {};
    const list = (p: RunsListParams) => conn.api.runsList(p);
    await Promise.all(countedStatuses.map(async (s) => (out[s] = (await listRuns(list, { ...noFilter, status: s }, null, 1)).total)));
    return out;
  }, [conn, tick]);
  useEffect(() => {
    if (!scopes.admin) return;
    conn.api.adminEventsList().then((r) => setEvents(r.events.slice(-20).reverse()), (e) => setLiveError(errorText(e)));
    const feed = followAdmin(
      conn,
      (ev) => {
        setEvents((list) => [ev, ...list].slice(0, 20));
        setTick((t) => t + 1); // an event changed something: read the figures again
      },
      (e) => setLiveError(errorText(e)),
    );
    return feed.stop;
  }, [conn, scopes.admin]);

  return (
    <section aria-labelledby="overview-h">
      <h1 id="overview-h">Overview</h1>
      <div className="cards">
        <div className="card">
          <h2>Health</h2>
          <ErrorBox error={health.error} />
          {health.data && (
            <>
              <p data-health={health.data.status} title={health.data.causes.join("\n") || undefined}>
                status: <Status status={health.data.status} />
                {health.data.status === "degraded" && <span className="muted"> {health.data.text.slice("degraded ".length)}</span>}
              </p>
              {health.data.causes.length > 0 && (
                <ul className="wrap" aria-label="Failing sources">
                  {health.data.causes.map((c) => (
                    <li key={c}>{c}</li>
                  ))}
                </ul>
              )}
            </>
          )}
        </div>
        <div className="card">
          <h2>Runs by status</h2>
          <ErrorBox error={counts.error} />
          <dl className="counts">
            {countedStatuses.map((s) => (
              <div key={s}>
                <dt>
                  <a href={href("runs", "status", s)}>
                    <Status status={s} />
                  </a>
                </dt>
                <dd data-count={s}>{counts.data?.[s] ?? "…"}</dd>
              </div>
            ))}
            <div>
              <dt>all</dt>
              <dd data-count="all">{runs.data?.total ?? "…"}</dd>
            </div>
          </dl>
        </div>
      </div>
      <h2>Connections and their sessions</h2>
      {!scopes.admin && <p className="muted">Sessions need the admin scope.</p>}
      <ErrorBox error={statuses.error} />
      {statuses.data && (
        <div className="table-wrap">
          <table aria-label="Connections">
            <thead>
              <tr>
                <th scope="col">connection</th>
                <th scope="col">session</th>
                <th scope="col">generation</th>
                <th scope="col">sessions opened</th>
                <th scope="col">restarts</th>
                <th scope="col">calls in flight</th>
                <th scope="col">last error</th>
              </tr>
            </thead>
            <tbody>
              {statuses.data.statuses.map((s) => {
                const ss = sessionOf(s);
                return (
                  <tr key={s.connection_id} data-connection={s.connection_id}>
                    <td>{s.connection_id}</td>
                    <td>
                      <Status status={ss.state ?? "none"} />
                    </td>
                    <td>{ss.generation ?? ""}</td>
                    <td data-sessions-opened={ss.sessions_opened ?? 0}>{ss.sessions_opened ?? 0}</td>
                    <td>{ss.restarts ?? 0}</td>
                    <td>{ss.calls_in_flight ?? 0}</td>
                    <td className="wrap">{ss.last_error ?? ""}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
      {statuses.data && <ConnectionLogs statuses={statuses.data.statuses} />}
      <div className="cols">
        <div>
          <h2>Recent runs</h2>
          <ErrorBox error={runs.error} />
          <RunTable runs={runs.data?.runs ?? []} compact />
        </div>
        <div>
          <h2>Admin events {scopes.admin && <span className="live">live</span>}</h2>
          {!scopes.admin && <p className="muted">The admin event log needs the admin scope.</p>}
          <ErrorBox error={liveError} />
          <ol className="events" aria-label="Admin events">
            {events.map((e, i) => (
              <li key={"sequence" in e ? `s${e.sequence}` : `l${i}`}>
                <Ago at={e.timestamp_epoch_ms} /> <strong>{e.kind}</strong> {e.connection_id ?? e.workflow_name ?? ""}
              </li>
            ))}
          </ol>
        </div>
      </div>
    </section>
  );
}

/** ConnectionLogs shows each connection's own log messages: those its upstream sent outside any one call. */
function ConnectionLogs({ statuses }: { statuses: ConnectionStatusPayload[] }) {
  const withLogs = statuses.filter((s) => (sessionOf(s).logs ?? []).length > 0);
  if (withLogs.length === 0) return null;
  return (
    <>
      <h2>Connection logs</h2>
      <p className="muted">What an upstream logged outside any one call (newest last).</p>
      {withLogs.map((s) => (
        <details key={s.connection_id} data-connection-logs={s.connection_id}>
          <summary>
            {s.connection_id} · {sessionOf(s).logs!.length} messages
          </summary>
          <ol className="step-logs" aria-label={`logs of ${s.connection_id}`}>
            {sessionOf(s).logs!.map((l, i) => (
              <li key={i} data-level={l.level}>
                <time>{new Date(l.at_epoch_ms).toLocaleTimeString()}</time> {logText(l)}
                {l.calls_in_flight > 1 ? <small> ({l.calls_in_flight} calls in flight)</small> : null}
              </li>
            ))}
          </ol>
        </details>
      ))}
    </>
  );
}

/** RunTable lists runs: id, deployment, status, when it started, how long it took (live while running) and who started it. */
export function RunTable({ runs, compact = false }: { runs: RunSummary[]; compact?: boolean }) {
  if (runs.length === 0) return <p className="muted">No runs.</p>;
  return (
    <div className="table-wrap">
      <table aria-label="Runs" className="runs-table">
        <thead>
          <tr>
            <th scope="col">status</th>
            <th scope="col">run</th>
            <th scope="col">deployment</th>
            <th scope="col">started</th>
            <th scope="col">duration</th>
            {!compact && <th scope="col">started by</th>}
          </tr>
        </thead>
        <tbody>
          {runs.map((r) => (
            <tr key={r.run_id} data-run={r.run_id} data-status={r.status}>
              <td>
                <Status status={r.status} />
              </td>
              <td className="id">
                <a href={href("runs", r.run_id)}>{r.run_id}</a>
              </td>
              <td className="id dep">{r.deployment_id}</td>
              <td className="nowrap">
                <Ago at={r.created_at} />
              </td>
              <td className="nowrap">
                <Duration from={r.created_at} to={r.updated_at} live={r.status === "running"} />
              </td>
              {!compact && <td>{r.started_by ?? <span className="muted">—</span>}</td>}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
