import { useEffect, useRef, useState } from "react";
import { followAdmin } from "../api/follow";
import type { SchedulePayload, WebhookDeliveryPayload, WebhookPayload } from "../api/generated";
import { Action } from "../components/Action";
import { CopyValue } from "../components/Copy";
import { ErrorBox } from "../components/Json";
import { Ago, useNow } from "../components/Time";
import { useLoad } from "../hooks";
import { exactTime } from "../lib/time";
import { countdown, deliveryLabel, emptyScheduleForm, fireLabel, hookURL, idProblem, scheduleDraft, specText, type OutcomeLabel, type ScheduleForm } from "../lib/triggers";
import { href, useSession } from "../session";

/** hookRefreshMs is how often the webhooks' deliveries are read again while the page is seen: an accepted delivery is no admin event. */
const hookRefreshMs = 5000;

/**
 * Triggers shows what starts runs without a person: the schedules, with
 * their next fires and last fire, and the webhooks, with their recent
 * deliveries. Admin tokens see the changes live and get the actions
 * (pause, trigger, delete, rotate a secret, create); a read token sees
 * the same page without a control it cannot use.
 */
export function Triggers() {
  const { conn, scopes } = useSession();
  const [tick, setTick] = useState(0);
  const reload = () => setTick((t) => t + 1);
  const schedules = useLoad(() => conn.api.schedulesList(), [conn, tick]);
  // list leaves the deliveries out: inspect each webhook for its log.
  const [hookTick, setHookTick] = useState(0);
  const webhooks = useLoad(async () => Promise.all((await conn.api.webhooksList()).webhooks.map((h) => conn.api.webhooksInspect({ webhook_id: h.id }))), [conn, tick, hookTick]);
  useEffect(() => {
    const timer = setInterval(() => document.visibilityState === "visible" && setHookTick((t) => t + 1), hookRefreshMs);
    return () => clearInterval(timer);
  }, []);
  useEffect(() => {
    if (!scopes.admin) return;
    // A fire, a change or a refused delivery is an admin event; a run a webhook or a schedule started is a run event.
    const feed = followAdmin(conn, (ev) => /^(schedule_|webhook_|run)/.test(ev.kind) && reload(), () => undefined);
    return feed.stop;
  }, [conn, scopes.admin]);
  useRefireReload(schedules.data?.schedules, reload);
  return (
    <section aria-labelledby="triggers-h">
      <h1 id="triggers-h">
        Triggers {scopes.admin && <span className="live">live</span>}
      </h1>
      {!scopes.admin && (
        <p className="muted">
          Changes need the admin scope; schedules are not followed live (deliveries are read every {hookRefreshMs / 1000} s).{" "}
          <button type="button" className="link" onClick={reload}>
            Refresh
          </button>
        </p>
      )}
      <h2 id="schedules-h">Schedules</h2>
      <ErrorBox error={schedules.error} />
      {schedules.data && schedules.data.schedules.length === 0 && <p className="muted">No schedules.</p>}
      <div className="triggers" aria-labelledby="schedules-h">
        {(schedules.data?.schedules ?? []).map((s) => (
          <Schedule key={s.id} s={s} onChange={reload} />
        ))}
      </div>
      {scopes.admin && <CreateSchedule onDone={reload} />}
      <h2 id="webhooks-h">Webhooks</h2>
      <ErrorBox error={webhooks.error} />
      {webhooks.data && webhooks.data.length === 0 && <p className="muted">No webhooks.</p>}
      <div className="triggers" aria-labelledby="webhooks-h">
        {(webhooks.data ?? []).map((h) => (
          <Webhook key={h.id} h={h} onChange={reload} />
        ))}
      </div>
      {scopes.admin && <CreateWebhook onDone={reload} />}
    </section>
  );
}

/** useRefireReload reads the schedules again once the earliest next fire has passed, so that a read token's page moves on too. */
function useRefireReload(list: SchedulePayload[] | undefined, reload: () => void) {
  const now = useNow();
  const done = useRef(0);
  const next = Math.min(...(list ?? []).flatMap((s) => s.next_fire_times.slice(0, 1)));
  useEffect(() => {
    if (Number.isFinite(next) && now > next + 1000 && done.current !== next) {
      done.current = next;
      reload();
    }
  }, [now, next, reload]);
}

function Outcome({ label }: { label: OutcomeLabel }) {
  const cls = { ok: "ok", err: "error", warn: "degraded", run: "running" }[label.tone];
  return <span className={`status status-${cls}`}>{label.text}</span>;
}

function Schedule({ s, onChange }: { s: SchedulePayload; onChange: () => void }) {
  const now = useNow();
  const [note, setNote] = useState("");
  const noteParam = note.trim() ? { note: note.trim() } : {};
  const noted = () => {
    setNote("");
    onChange();
  };
  return (
    <article className="panel trigger" data-schedule={s.id} data-paused={String(s.paused)} aria-labelledby={`sch-${s.id}`}>
      <h3 id={`sch-${s.id}`}>
        {s.id} <small>→ </small>
        <a href={href("artifacts", "deployment", s.deployment_id)}>{s.deployment_id}</a>
      </h3>
      <p>
        <code data-spec>{specText(s.spec)}</code> · overlap {s.overlap} · catch-up window {s.catchup_window_seconds} s
      </p>
      {s.paused && (
        <p className="note" data-paused-note>
          Paused{s.note ? `: ${s.note}` : ""}
        </p>
      )}
      <div className="cols">
        <div>
          <h4>Next fires</h4>
          {s.next_fire_times.length === 0 ? (
            <p className="muted">{s.paused ? "none while paused" : "none"}</p>
          ) : (
            <ol className="fires" aria-label={`Next fires of ${s.id}`}>
              {s.next_fire_times.map((at) => (
                <li key={at} data-fire={at}>
                  <time dateTime={new Date(at).toISOString()}>{exactTime(at)}</time> <small>{countdown(at, now)}</small>
                </li>
              ))}
            </ol>
          )}
        </div>
        <div>
          <h4>Last fire</h4>
          {s.last_fire ? (
            <p data-last-fire={s.last_fire.outcome}>
              <Ago at={s.last_fire.at_epoch_ms} /> <Outcome label={fireLabel(s.last_fire.outcome)} />{" "}
              {s.last_fire.run_id && (
                <a href={href("runs", s.last_fire.run_id)} className="id">
                  {s.last_fire.run_id}
                </a>
              )}
            </p>
          ) : (
            <p className="muted">never fired</p>
          )}
          <dl className="counts" aria-label={`Counts of ${s.id}`}>
            <div>
              <dt>fired</dt>
              <dd data-fired>{s.fired}</dd>
            </div>
            <div>
              <dt>missed</dt>
              <dd data-missed>{s.missed}</dd>
            </div>
            <div>
              <dt>skipped</dt>
              <dd data-skipped>{s.skipped}</dd>
            </div>
          </dl>
        </div>
      </div>
      <div className="row">
        <ScheduleNote id={s.id} note={note} setNote={setNote} />
        {s.paused ? (
          <Action method="workflow.schedules.unpause" params={{ schedule_id: s.id, ...noteParam }} scope="admin" label="Unpause" onDone={noted} />
        ) : (
          <Action method="workflow.schedules.pause" params={{ schedule_id: s.id, ...noteParam }} scope="admin" label="Pause" onDone={noted} />
        )}
        <Action method="workflow.schedules.trigger" params={{ schedule_id: s.id }} scope="admin" label="Trigger now" onDone={onChange} />
        <Action method="workflow.schedules.delete" params={{ schedule_id: s.id }} scope="admin" label="Delete" className="danger" confirm={`Delete the schedule ${s.id}?`} onDone={onChange} />
      </div>
    </article>
  );
}

/** ScheduleNote is the note a pause or an unpause is sent with (admin only, as they are). */
function ScheduleNote({ id, note, setNote }: { id: string; note: string; setNote: (n: string) => void }) {
  const { scopes } = useSession();
  if (!scopes.admin) return null;
  return (
    <label className="inline">
      note <input id={`note-${id}`} value={note} placeholder="why (optional)" onChange={(e) => setNote(e.target.value)} />
    </label>
  );
}

function Webhook({ h, onChange }: { h: WebhookPayload; onChange: () => void }) {
  const [secret, setSecret] = useState("");
  return (
    <article className="panel trigger" data-webhook={h.id} aria-labelledby={`hook-${h.id}`}>
      <h3 id={`hook-${h.id}`}>
        {h.id} <small>→ </small>
        <a href={href("artifacts", "deployment", h.deployment_id)}>{h.deployment_id}</a>
      </h3>
      <p>
        POST <CopyValue value={hookURL(h.path, window.location.origin)} label="URL" />
      </p>
      <p className="muted">
        {Object.keys(h.input_map).length === 0 ? "input: the whole body" : `input map: ${Object.entries(h.input_map).map(([k, v]) => `${k}=${v}`).join(", ")}`}
        {h.previous_secret_expires_at_epoch_ms && (
          <>
            {" "}
            · the previous secret verifies until <time title={exactTime(h.previous_secret_expires_at_epoch_ms)}>{exactTime(h.previous_secret_expires_at_epoch_ms)}</time>
          </>
        )}
      </p>
      {secret && <SecretOnce id={h.id} secret={secret} onDismiss={() => setSecret("")} />}
      <h4>Recent deliveries</h4>
      <Deliveries id={h.id} list={h.recent_deliveries ?? []} />
      <div className="row">
        <Action method="workflow.webhooks.rotate_secret" params={{ webhook_id: h.id }} scope="admin" label="Rotate secret" confirm={`Give ${h.id} a new secret? The current one keeps verifying for 24 h.`} onDone={(r) => { setSecret(r.secret); onChange(); }} />
        <Action method="workflow.webhooks.delete" params={{ webhook_id: h.id }} scope="admin" label="Delete" className="danger" confirm={`Delete the webhook ${h.id}? Its URL answers 404 from then on.`} onDone={onChange} />
      </div>
    </article>
  );
}

/** Deliveries is a webhook's log: when each came, its outcome and status, its delivery id and its run or why it was refused. */
function Deliveries({ id, list }: { id: string; list: WebhookDeliveryPayload[] }) {
  if (list.length === 0) return <p className="muted">No deliveries yet.</p>;
  return (
    <div className="table-wrap">
      <table aria-label={`Recent deliveries of ${id}`}>
        <thead>
          <tr>
            <th scope="col">received</th>
            <th scope="col">outcome</th>
            <th scope="col">HTTP</th>
            <th scope="col">delivery id</th>
            <th scope="col">run or reason</th>
          </tr>
        </thead>
        <tbody>
          {list.map((d, i) => (
            <tr key={`${d.received_at_epoch_ms}-${i}`} data-delivery-outcome={d.outcome}>
              <td className="nowrap">
                <Ago at={d.received_at_epoch_ms} />
              </td>
              <td>
                <Outcome label={deliveryLabel(d.outcome)} />
              </td>
              <td>{d.status}</td>
              <td className="id">{d.delivery_id ?? <span className="muted">—</span>}</td>
              <td className="wrap">
                {d.run_id ? (
                  <a href={href("runs", d.run_id)} className="id">
                    {d.run_id}
                  </a>
                ) : (
                  <span data-reason>{d.reason ?? ""}</span>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** SecretOnce shows a webhook's new secret, which the server shows this once, with a button to copy it. */
function SecretOnce({ id, secret, onDismiss }: { id: string; secret: string; onDismiss: () => void }) {
  return (
    <div className="note" role="status" aria-label={`New secret of ${id}`}>
      <p>The secret of {id}, shown this once: copy it into the sender now.</p>
      <CopyValue value={secret} label="secret" />{" "}
      <button type="button" onClick={onDismiss}>
        Done
      </button>
    </div>
  );
}

/** Deployments is the deployment picker of the create forms. */
function DeploymentPick({ id, value, onChange }: { id: string; value: string; onChange: (v: string) => void }) {
  const { conn } = useSession();
  const deps = useLoad(() => conn.api.deploymentsList(), [conn]);
  return (
    <select id={id} value={value} onChange={(e) => onChange(e.target.value)}>
      <option value="">pick one</option>
      {(deps.data?.deployments ?? []).map((d) => (
        <option key={d.id}>{d.id}</option>
      ))}
    </select>
  );
}

function CreateSchedule({ onDone }: { onDone: () => void }) {
  const [f, setF] = useState<ScheduleForm>(emptyScheduleForm);
  const set = (p: Partial<ScheduleForm>) => setF((old) => ({ ...old, ...p }));
  const draft = scheduleDraft(f);
  const touched = f !== emptyScheduleForm;
  return (
    <details className="panel create">
      <summary>New schedule</summary>
      <div className="filters">
        <div className="filter">
          <label htmlFor="sch-id">Id</label>
          <input id="sch-id" value={f.id} onChange={(e) => set({ id: e.target.value })} />
        </div>
        <div className="filter">
          <label htmlFor="sch-dep">Deployment</label>
          <DeploymentPick id="sch-dep" value={f.deployment} onChange={(deployment) => set({ deployment })} />
        </div>
        <div className="filter">
          <label htmlFor="sch-kind">Fires</label>
          <select id="sch-kind" value={f.kind} onChange={(e) => set({ kind: e.target.value as ScheduleForm["kind"] })}>
            <option value="cron">on a cron</option>
            <option value="interval">every N seconds</option>
          </select>
        </div>
        {f.kind === "cron" ? (
          <>
            <div className="filter">
              <label htmlFor="sch-cron">Cron</label>
              <input id="sch-cron" value={f.cron} placeholder="0 2 * * *" onChange={(e) => set({ cron: e.target.value })} />
            </div>
            <div className="filter">
              <label htmlFor="sch-tz">Time zone</label>
              <input id="sch-tz" value={f.timeZone} placeholder="UTC" onChange={(e) => set({ timeZone: e.target.value })} />
            </div>
          </>
        ) : (
          <div className="filter">
            <label htmlFor="sch-interval">Seconds</label>
            <input id="sch-interval" type="number" min={1} value={f.interval} onChange={(e) => set({ interval: e.target.value })} />
          </div>
        )}
        <div className="filter">
          <label htmlFor="sch-overlap">Overlap</label>
          <select id="sch-overlap" value={f.overlap} onChange={(e) => set({ overlap: e.target.value as ScheduleForm["overlap"] })}>
            {(["skip", "buffer_one", "allow_all", "cancel_other"] as const).map((o) => (
              <option key={o}>{o}</option>
            ))}
          </select>
        </div>
      </div>
      <label htmlFor="sch-input">Workflow input (JSON object, optional)</label>
      <textarea id="sch-input" rows={3} value={f.input} onChange={(e) => set({ input: e.target.value })} />
      {touched && draft.problems.length > 0 && (
        <ul className="problems" aria-label="schedule problems">
          {draft.problems.map((p) => (
            <li key={p}>{p}</li>
          ))}
        </ul>
      )}
      <Action method="workflow.schedules.create" params={{ schedule: draft.schedule ?? { id: "", deployment_id: "", spec: {} } }} scope="admin" label="Create schedule" disabled={!draft.schedule} onDone={() => { setF(emptyScheduleForm); onDone(); }} />
    </details>
  );
}

function CreateWebhook({ onDone }: { onDone: () => void }) {
  const [id, setId] = useState("");
  const [deployment, setDeployment] = useState("");
  const [created, setCreated] = useState<{ id: string; secret: string }>();
  const problem = id ? idProblem(id.trim()) : "";
  return (
    <details className="panel create">
      <summary>New webhook</summary>
      <div className="filters">
        <div className="filter">
          <label htmlFor="hook-id">Id</label>
          <input id="hook-id" value={id} onChange={(e) => setId(e.target.value)} />
        </div>
        <div className="filter">
          <label htmlFor="hook-dep">Deployment</label>
          <DeploymentPick id="hook-dep" value={deployment} onChange={setDeployment} />
        </div>
      </div>
      <p className="muted">The whole JSON body is the workflow&apos;s input; an input map is set with the CLI or the API (docs/triggers.md).</p>
      {problem && <p className="error">{problem}</p>}
      {created && <SecretOnce id={created.id} secret={created.secret} onDismiss={() => setCreated(undefined)} />}
      <Action method="workflow.webhooks.create" params={{ webhook: { id: id.trim(), deployment_id: deployment } }} scope="admin" label="Create webhook" disabled={!id.trim() || !!problem || !deployment} onDone={(r) => { setCreated({ id: r.webhook.id, secret: r.secret }); setId(""); onDone(); }} />
    </details>
  );
}
