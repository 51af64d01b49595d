import { useState } from "react";
import type { CapabilitiesCallReply, InspectCapabilityResult } from "../api/generated";
import { Action } from "../components/Action";
import { ErrorBox, Json } from "../components/Json";
import { InputForm, useInputForm } from "../components/InputForm";
import { FieldsView } from "../components/SchemaForm";
import { useLoad } from "../hooks";
import { buildForm } from "../lib/schemaForm";
import { go, href, useSession } from "../session";

export function Discover({ selected }: { selected?: string }) {
  const { conn } = useSession();
  const [query, setQuery] = useState("");
  const [source, setSource] = useState("");
  const sources = useLoad(() => conn.api.sourcesList({ limit: 100 }), [conn]);
  const caps = useLoad(() => conn.api.capabilitiesList({ query: query || null, source_id: source || null, limit: 200 }), [conn, query, source]);
  return (
    <section aria-labelledby="discover-h" className="split">
      <div className="list-pane">
        <h1 id="discover-h">Discover</h1>
        <div className="filters">
          <label htmlFor="cap-q">Search</label>
          <input id="cap-q" type="search" value={query} onChange={(e) => setQuery(e.target.value)} placeholder="name or description" />
          <label htmlFor="cap-src">Source</label>
          <select id="cap-src" value={source} onChange={(e) => setSource(e.target.value)}>
            <option value="">all sources</option>
            {(sources.data?.sources ?? []).map((s) => (
              <option key={s.id} value={s.id}>
                {s.id}
              </option>
            ))}
          </select>
        </div>
        <ErrorBox error={caps.error} />
        <p className="muted">{caps.data ? `${caps.data.total} capabilities` : "…"}</p>
        <ul className="pick" aria-label="Capabilities">
          {(caps.data?.capabilities ?? []).map((c) => (
            <li key={c.name}>
              <a href={href("discover", c.name)} aria-current={selected === c.name ? "true" : undefined} data-capability={c.name}>
                <strong>{c.name}</strong>
                <small>{c.description ?? ""}</small>
              </a>
            </li>
          ))}
        </ul>
      </div>
      <div className="detail-pane">{selected ? <Capability key={selected} name={selected} /> : <p className="muted">Pick a capability to read its contract and try it.</p>}</div>
    </section>
  );
}

function Capability({ name }: { name: string }) {
  const { conn } = useSession();
  const cap = useLoad(() => conn.api.capabilitiesInspect({ qualified_name: name }), [conn, name]);
  const [raw, setRaw] = useState(false);
  if (cap.error) return <ErrorBox error={cap.error} />;
  if (!cap.data) return <p>Loading…</p>;
  const c = cap.data;
  return (
    <article aria-labelledby="cap-h">
      <h2 id="cap-h">{c.name}</h2>
      <p>{c.description}</p>
      <p>
        source <code>{c.source_id}</code> · kind {c.kind} · outcomes {c.outcomes.map((o) => <code key={o}>{o} </code>)}
      </p>
      {"annotations" in c && c.annotations && (
        <p className="muted">
          {c.annotations.read_only_hint ? "read-only" : "may change things"} · {c.annotations.destructive_hint ? "destructive" : "not destructive"} · {c.annotations.idempotent_hint ? "idempotent" : "not idempotent"}
        </p>
      )}
      <h3>Input</h3>
      <FieldsView field={buildForm(c.input_schema)} />
      <h3>Output</h3>
      <FieldsView field={buildForm(c.output_schema)} />
      <label className="inline">
        <input type="checkbox" checked={raw} onChange={(e) => setRaw(e.target.checked)} /> Show the raw schemas
      </label>
      {raw && <Json value={{ input_schema: c.input_schema, output_schema: c.output_schema }} label="raw schemas" />}
      <Playground cap={c} />
      <CreateWorkflow name={c.name} />
    </article>
  );
}

function Playground({ cap }: { cap: InspectCapabilityResult }) {
  const { scopes } = useSession();
  const form = useInputForm(cap.input_schema);
  const [ack, setAck] = useState(false);
  const [result, setResult] = useState<CapabilitiesCallReply>();
  if (!scopes.run) return null;
  return (
    <section className="playground" aria-labelledby="pg-h">
      <h3 id="pg-h">Try it</h3>
      <label className="inline ack">
        <input type="checkbox" checked={ack} onChange={(e) => setAck(e.target.checked)} /> I understand this calls <code>{cap.name}</code> on its real server, with whatever side effects it has.
      </label>
      {ack && (
        <>
          <InputForm form={form} label="input" name="input" />
          <Action method="workflow.capabilities.call" params={{ qualified_name: cap.name, payload: form.payload }} scope="run" label="Call" disabled={form.problems.length > 0} onDone={setResult} />
          {result && (
            <div className="result" aria-label="call result" data-outcome={result.outcome}>
              <p>
                outcome <strong>{result.outcome}</strong>
              </p>
              <Json value={result.output} label="output" />
              {result.diagnostics.length > 0 && <Json value={result.diagnostics} label="diagnostics" />}
            </div>
          )}
        </>
      )}
    </section>
  );
}

function CreateWorkflow({ name }: { name: string }) {
  const { scopes } = useSession();
  const base = name.split(".").pop()!.replace(/[^A-Za-z0-9_]/g, "_");
  const [ws, setWs] = useState(`${base}_ws`);
  const [wf, setWf] = useState(`${base}_workflow`);
  if (!scopes.author) return null;
  return (
    <section aria-labelledby="create-h">
      <h3 id="create-h">Create a workflow from this capability</h3>
      <div className="row">
        <label htmlFor="new-ws">Workspace id</label>
        <input id="new-ws" value={ws} onChange={(e) => setWs(e.target.value)} />
        <label htmlFor="new-wf">Workflow name</label>
        <input id="new-wf" value={wf} onChange={(e) => setWf(e.target.value)} />
      </div>
      <Action method="workflow.draft_workspaces.create_from_capability" params={{ workspace_id: ws, capability_name: name, name: wf }} scope="author" label="Create workflow" onDone={(r) => go("workbench", r.workspace_id)} />
    </section>
  );
}
