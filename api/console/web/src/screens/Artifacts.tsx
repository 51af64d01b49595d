import { useMemo } from "react";
import type { JsonObject } from "../api/generated";
import { Action } from "../components/Action";
import { InputForm, useInputForm } from "../components/InputForm";
import { GraphView } from "../components/Graph";
import { ErrorBox, Json, Status } from "../components/Json";
import { useLoad } from "../hooks";
import { projectPlan } from "../lib/graph";
import { go, href, useSession } from "../session";

export function Artifacts({ kind, id, version }: { kind?: string; id?: string; version?: string }) {
  const { conn } = useSession();
  const arts = useLoad(() => conn.api.artifactsList({ limit: 100 }), [conn, kind, id]);
  const deps = useLoad(() => conn.api.deploymentsList(), [conn, kind, id]);
  return (
    <section aria-labelledby="art-h" className="split">
      <div className="list-pane">
        <h1 id="art-h">Artifacts & deployments</h1>
        <h2>Artifacts</h2>
        <ErrorBox error={arts.error} />
        <ul className="pick" aria-label="Artifacts">
          {(arts.data?.nodes ?? []).map((a) => (
            <li key={`${a.artifact_id}@${a.version}`}>
              <a href={href("artifacts", "artifact", a.artifact_id, String(a.version))} data-artifact={a.artifact_id}>
                <strong>{a.artifact_id}</strong> <small>v{a.version} · {a.display_name}</small>
              </a>
            </li>
          ))}
        </ul>
        <h2>Deployments</h2>
        <ErrorBox error={deps.error} />
        <ul className="pick" aria-label="Deployments">
          {(deps.data?.deployments ?? []).map((d) => (
            <li key={d.id}>
              <a href={href("artifacts", "deployment", d.id)} data-deployment={d.id}>
                <strong>{d.id}</strong> <small>{d.artifact_id} v{d.artifact_version}</small>
              </a>
            </li>
          ))}
        </ul>
      </div>
      <div className="detail-pane">
        {kind === "artifact" && id && <Artifact key={`${id}@${version}`} id={id} version={Number(version ?? 1)} />}
        {kind === "deployment" && id && <Deployment key={id} id={id} />}
        {!kind && <p className="muted">Pick an artifact or a deployment.</p>}
      </div>
    </section>
  );
}

function Artifact({ id, version }: { id: string; version: number }) {
  const { conn } = useSession();
  const a = useLoad(() => conn.api.artifactsInspect({ artifact_id: id, version }), [conn, id, version]);
  const graph = useMemo(() => projectPlan(a.data?.plan), [a.data]);
  if (a.error) return <ErrorBox error={a.error} />;
  if (!a.data) return <p>Loading…</p>;
  return (
    <article aria-labelledby="a-h">
      <h2 id="a-h">
        {a.data.id} <small>v{a.data.version}</small>
      </h2>
      <p>{a.data.title} · {a.data.kind} · outcomes {a.data.outcomes.join(", ")}</p>
      <GraphView label="Plan graph" graph={graph} />
      <h3>Required capabilities</h3>
      <Json value={a.data.required_capabilities} label="required capabilities" />
      <Action method="workflow.artifacts.delete" params={{ artifact_id: id, version }} scope="author" label="Delete artifact" confirm={`Delete ${id} v${version}?`} onDone={() => go("artifacts")} />
    </article>
  );
}

function Deployment({ id }: { id: string }) {
  const { conn } = useSession();
  const d = useLoad(() => conn.api.deploymentsInspect({ deployment_id: id }), [conn, id]);
  const v = useLoad(() => conn.api.deploymentsValidate({ deployment_id: id, live_check: true }), [conn, id]);
  const art = useLoad(async () => (d.data ? conn.api.artifactsInspect({ artifact_id: d.data.artifact_id, version: d.data.artifact_version }) : undefined), [conn, d.data?.artifact_id, d.data?.artifact_version]);
  if (d.error) return <ErrorBox error={d.error} />;
  if (!d.data) return <p>Loading…</p>;
  return (
    <article aria-labelledby="d-h">
      <h2 id="d-h">{d.data.id}</h2>
      <p>
        deploys <a href={href("artifacts", "artifact", d.data.artifact_id, String(d.data.artifact_version))}>{d.data.artifact_id} v{d.data.artifact_version}</a> · drift policy {d.data.drift_policy}
      </p>
      <h3>Bindings</h3>
      <ul>
        {d.data.bindings.map((b) => (
          <li key={b.logical_source}>
            {b.logical_source} → {b.concrete_source} {b.session ? `(session: ${b.session})` : ""}
          </li>
        ))}
      </ul>
      <h3>Validation and drift</h3>
      <ErrorBox error={v.error} />
      {v.data && (
        <div data-validation={v.data.status}>
          <p>
            <Status status={v.data.status} />
          </p>
          {v.data.diagnostics.length === 0 ? <p className="ok-note">No drift, no problems.</p> : (
            <ul className="problems">
              {v.data.diagnostics.map((x, i) => (
                <li key={i}>
                  <code>{String(x.code)}</code> {String(x.message ?? "")}
                </li>
              ))}
            </ul>
          )}
        </div>
      )}
      {art.data && <StartRun key={`${art.data.id}@${art.data.version}`} deploymentId={id} schema={art.data.input_schema} />}
      <ErrorBox error={art.error} />
      <div className="row">
        <Action method="workflow.deployments.delete" params={{ deployment_id: id }} scope="author" label="Delete deployment" confirm={`Delete ${id}?`} onDone={() => go("artifacts")} />
      </div>
    </article>
  );
}

/** StartRun starts a run of the deployment with an input from its artifact's input schema, then follows it on its page. */
function StartRun({ deploymentId, schema }: { deploymentId: string; schema: JsonObject }) {
  const { scopes } = useSession();
  const form = useInputForm(schema);
  if (!scopes.run) return null;
  const takesInput = form.field.kind !== "object" || form.field.fields.length > 0 || form.field.open;
  const params = { deployment_id: deploymentId, ...(Object.keys(form.payload).length > 0 ? { workflow_input: form.payload } : {}), wait: false };
  return (
    <section className="start-run panel" aria-labelledby="start-h">
      <h3 id="start-h">Start a run</h3>
      {takesInput ? <InputForm form={form} label="input" name="run input" /> : <p className="muted">This workflow takes no input.</p>}
      <Action method="workflow.runs.start" params={params} scope="run" label="Start a run" disabled={form.problems.length > 0} onDone={(r) => r.run_id && go("runs", r.run_id)} />
    </section>
  );
}
