import { useEffect, useMemo, useReducer, useState } from "react";
import { followRun } from "../api/follow";
import type { InterruptPayload, JsonValue, RunEventNotification, RunResult, TraceEntryPayload } from "../api/generated";
import { Action } from "../components/Action";
import { CopyAs } from "../components/Copy";
import { GraphView } from "../components/Graph";
import { RunAgain } from "../components/RunAgain";
import { ErrorBox, Json, Status } from "../components/Json";
import { Ago, Duration } from "../components/Time";
import { SchemaForm } from "../components/SchemaForm";
import { errorText, useLoad } from "../hooks";
import { projectPlan } from "../lib/graph";
import { applyEvent, emptyRun, forkPoints, fromResult, logText, progressText, sessionReplacedText, withTrace, type RunView } from "../lib/runState";
import { buildForm, initialValue, validate } from "../lib/schemaForm";
import { formatDuration } from "../lib/time";
import { href, useSession } from "../session";

type Msg = { type: "event"; ev: RunEventNotification } | { type: "result"; r: RunResult } | { type: "trace"; entries: TraceEntryPayload[]; start: number };

function reduce(run: RunView, m: Msg): RunView {
  switch (m.type) {
    case "event":
      return applyEvent(run, m.ev);
    case "result":
      return fromResult(run, m.r);
    case "trace":
      return withTrace(run, m.entries, m.start);
  }
}

export function RunPage({ runId }: { runId: string }) {
  const { conn } = useSession();
  const [run, dispatch] = useReducer(reduce, runId, emptyRun);
  const [error, setError] = useState("");
  const [trace, setTrace] = useState<TraceEntryPayload[]>([]);
  const info = useLoad(() => conn.api.runsInspect({ run_id: runId }), [conn, runId]);
  // A pass-through call (gateway mode) has no stored artifact: its graph is its one step.
  const passthrough = info.data?.kind === "passthrough";
  const art = useLoad(
    async () => (info.data && !passthrough ? conn.api.artifactsInspect({ artifact_id: info.data.artifact_id, version: info.data.artifact_version }) : undefined),
    [conn, info.data?.artifact_id, info.data?.artifact_version, passthrough],
  );
  const graph = useMemo(() => projectPlan(art.data?.plan), [art.data]);

  useEffect(() => {
    if (info.data) dispatch({ type: "result", r: info.data });
  }, [info.data]);
  useEffect(() => {
    const feed = followRun(conn, runId, 0, (ev) => dispatch({ type: "event", ev }), (e) => setError(errorText(e)));
    return feed.stop;
  }, [conn, runId]);
  // Each finished step's input and output: read from the trace once the step is in it.
  const traceCount = run.timeline.filter((t) => t.traceIndex !== undefined).length;
  useEffect(() => {
    if (traceCount <= trace.length) return;
    const start = trace.length;
    conn.api.runsTrace({ run_id: runId, trace_range: { start, limit: 100 } }).then(
      (r) => setTrace((old) => (old.length === start ? [...old, ...r.trace] : old)),
      (e) => setError(errorText(e)),
    );
  }, [conn, runId, traceCount, trace.length]);
  useEffect(() => {
    if (trace.length > 0) dispatch({ type: "trace", entries: trace, start: 0 });
  }, [trace, run.cursor]);

  const live = !run.terminal;
  return (
    <section aria-labelledby="run-h" className="run">
      <p className="back">
        <a href={href("runs")}>← Runs</a>
      </p>
      <header className="run-head">
        <h1 id="run-h">
          <span className="big-status" data-run-status={run.status}>
            <Status status={run.status} />
          </span>{" "}
          Run <code>{runId}</code> {live && <span className="live">live</span>}
        </h1>
        <div className="row run-actions">
          {live && <Action method="workflow.runs.cancel" params={{ run_id: runId, reason: "cancelled from the console" }} scope="run" label="Cancel run" confirm="Cancel this run?" className="danger" />}
          {run.terminal && <RunAgain runId={runId} steps={forkPoints(run.timeline)} />}
          <CopyAs method="workflow.runs.inspect" params={{ run_id: runId }} label="inspect" />
        </div>
      </header>
      <dl className="details" aria-label="Run details">
        <div>
          <dt>deployment</dt>
          <dd>{!info.data ? "…" : info.data.deployment_id ? <a href={href("artifacts", "deployment", info.data.deployment_id)}>{info.data.deployment_id}</a> : <span className="muted">—</span>}</dd>
        </div>
        <div>
          <dt>artifact</dt>
          <dd>
            {!info.data ? (
              "…"
            ) : passthrough ? (
              <span data-passthrough>
                a pass-through call: <code>{info.data.artifact_id.replace(/^passthrough:/, "")}</code>
              </span>
            ) : (
              <a href={href("artifacts", "artifact", info.data.artifact_id, String(info.data.artifact_version))}>
                {info.data.artifact_id} v{info.data.artifact_version}
              </a>
            )}
          </dd>
        </div>
        <div>
          <dt>started</dt>
          <dd data-started={run.startedMs ?? ""}>
            <Ago at={run.startedMs} />
          </dd>
        </div>
        <div>
          <dt>ended</dt>
          <dd>{run.terminal ? <Ago at={run.endedMs} /> : <span className="muted">{run.status === "interrupted" ? "waiting for an answer" : "still running"}</span>}</dd>
        </div>
        <div>
          <dt>duration</dt>
          <dd data-run-duration>
            <Duration from={run.startedMs} to={run.endedMs} live={!run.terminal} />
          </dd>
        </div>
        <div>
          <dt>started by</dt>
          <dd>{info.data?.started_by ?? <span className="muted">—</span>}</dd>
        </div>
        {info.data?.parent_run_id && (
          <div>
            <dt>{info.data.forked_from_node ? "forked from" : "rerun of"}</dt>
            <dd data-parent-run={info.data.parent_run_id}>
              <a href={href("runs", info.data.parent_run_id)}>{info.data.parent_run_id}</a>
              {info.data.forked_from_node && (
                <>
                  {" "}
                  at step <code>{info.data.forked_from_node}</code>
                </>
              )}
            </dd>
          </div>
        )}
        {run.outcome && (
          <div>
            <dt>outcome</dt>
            <dd data-outcome={run.outcome}>
              <strong>{run.outcome}</strong>
            </dd>
          </div>
        )}
      </dl>
      <ErrorBox error={error || info.error} />
      {run.error && (
        <div className="failure" role="alert" aria-label="Run error">
          <strong>{run.status === "cancelled" ? "Cancelled" : "Failed"}:</strong> <span className="failure-text">{run.error}</span>
        </div>
      )}
      {run.terminal && run.output !== null && run.output !== undefined && (
        <div className="outcome" aria-label="Run outcome" data-outcome={run.outcome ?? ""}>
          <h2>Output</h2>
          <Json value={run.output} label="run output" />
        </div>
      )}
      {run.sessionsReplaced && run.sessionsReplaced.length > 0 && (
        <ul className="notices" aria-label="Sessions replaced">
          {run.sessionsReplaced.map((s, i) => (
            <li key={i} className="error" data-session-replaced={s.connection}>
              {sessionReplacedText(s)}
            </li>
          ))}
        </ul>
      )}
      {run.interrupt && run.status === "interrupted" && <InterruptForm key={run.interrupt.id} runId={runId} interrupt={run.interrupt} />}
      <div className="run-body">
        <GraphView label="Run graph" graph={graph} states={run.nodes} />
        <div>
          <h2>Timeline</h2>
          <ol className="timeline" aria-label="Timeline">
            {run.timeline.map((t) => (
              <li key={t.key} data-node={t.nodeId} data-state={t.state} className={`st-${t.state}`}>
                <details>
                  <summary>
                    <strong>{t.nodeId}</strong> <Status status={t.state} /> {t.outcome ? `→ ${t.outcome}` : ""} {t.capability ? <code>{t.capability}</code> : null}
                    {t.startedMs !== undefined && t.finishedMs !== undefined ? ` · ${formatDuration(t.finishedMs - t.startedMs)}` : ""}
                    {t.frameId !== "root" ? <small> in {t.frameId}</small> : null}
                    {t.progress && t.state === "running" && (
                      <span className="step-progress" data-progress={progressText(t.progress)}>
                        {" "}
                        {t.progress.total !== undefined && t.progress.total > 0 && <progress value={t.progress.progress} max={t.progress.total} aria-label={`progress of ${t.nodeId}`} />} {progressText(t.progress)}
                      </span>
                    )}
                    {t.logs && t.logs.length > 0 ? <small> · {t.logs.length} log lines</small> : null}
                  </summary>
                  {t.logs && t.logs.length > 0 && (
                    <ol className="step-logs" aria-label={`logs of ${t.nodeId}`}>
                      {t.logs.map((l, i) => (
                        <li key={i} data-level={l.level}>
                          {logText(l)}
                        </li>
                      ))}
                    </ol>
                  )}
                  {t.error && <p className="error">{t.error}</p>}
                  {t.input !== undefined && <Json value={t.input} label={`input of ${t.nodeId}`} />}
                  {t.output !== undefined && <Json value={t.output} label={`output of ${t.nodeId}`} />}
                  {t.stateChanges && t.stateChanges.length > 0 && <p className="muted">writes {t.stateChanges.join(", ")}</p>}
                </details>
              </li>
            ))}
          </ol>
        </div>
      </div>
    </section>
  );
}

function InterruptForm({ runId, interrupt }: { runId: string; interrupt: InterruptPayload }) {
  const field = useMemo(() => buildForm(interrupt.resume_schema), [interrupt]);
  const [value, setValue] = useState<JsonValue | undefined>(() => initialValue(field) ?? {});
  const [outcome, setOutcome] = useState(interrupt.outcomes[0] ?? "submitted");
  const problems = validate(field, value);
  const payload = (typeof value === "object" && value !== null && !Array.isArray(value) ? value : {}) as { [key: string]: JsonValue };
  return (
    <section className="interrupt panel" aria-labelledby="int-h">
      <h2 id="int-h">
        Waiting at <code>{interrupt.node_id}</code>: {interrupt.kind}
      </h2>
      <Json value={interrupt.payload} label="interrupt request" />
      <SchemaForm field={field} value={value} onChange={setValue} label="answer" />
      {interrupt.outcomes.length > 1 && (
        <>
          <label htmlFor="int-outcome">Outcome</label>
          <select id="int-outcome" value={outcome} onChange={(e) => setOutcome(e.target.value)}>
            {interrupt.outcomes.map((o) => (
              <option key={o}>{o}</option>
            ))}
          </select>
        </>
      )}
      {problems.length > 0 && (
        <ul className="problems" aria-label="answer problems">
          {problems.map((p) => (
            <li key={p.path}>
              {p.path} {p.message}
            </li>
          ))}
        </ul>
      )}
      <Action method="workflow.runs.resume" params={{ run_id: runId, resume_payload: payload, resume_outcome: outcome }} scope="run" label="Resume" disabled={problems.length > 0} />
    </section>
  );
}
