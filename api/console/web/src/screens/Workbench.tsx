import { createContext, useContext, useEffect, useMemo, useState } from "react";
import type { DraftDiagnosticPayload, DraftWorkspaceResult, JsonValue, Method, Methods, SourceBindingPayload } from "../api/generated";
import { CopyAs } from "../components/Copy";
import { Action } from "../components/Action";
import { GraphView } from "../components/Graph";
import { ErrorBox, Json, Status } from "../components/Json";
import { JsonInput } from "../components/SchemaForm";
import { errorText, useLoad } from "../hooks";
import { endId, kindOf, pinDiagnostic, projectDraft, stepKinds, type StepKind } from "../lib/graph";
import { go, href, useSession } from "../session";
import { Deploy } from "./Deploy";

type Obj = { [key: string]: JsonValue };
const asObj = (v: JsonValue | undefined): Obj => (typeof v === "object" && v !== null && !Array.isArray(v) ? v : {});

/** Edits that carry a workspace's revision. */
type EditMethod = {
  [M in Method]: Methods[M]["params"] extends { workspace_id: string; revision: number } ? M : never;
}[Method];
type EditParams<M extends EditMethod> = Omit<Methods[M]["params"], "workspace_id" | "revision">;

export function Workbench({ workspace }: { workspace?: string }) {
  if (workspace) return <Bench key={workspace} id={workspace} />;
  return <Workspaces />;
}

function Workspaces() {
  const { conn, scopes } = useSession();
  const list = useLoad(() => conn.api.draftWorkspacesList(), [conn]);
  const [id, setId] = useState("new_ws");
  const [name, setName] = useState("new_workflow");
  return (
    <section aria-labelledby="wb-h">
      <h1 id="wb-h">Draft workbench</h1>
      <ErrorBox error={list.error} />
      <ul className="pick" aria-label="Workspaces">
        {(list.data?.workspaces ?? []).map((w) => (
          <li key={w.workspace_id}>
            <a href={href("workbench", w.workspace_id)} data-workspace={w.workspace_id}>
              <strong>{w.workspace_id}</strong> <Status status={w.status} /> <small>revision {w.revision} · {w.summary.step_count} steps</small>
            </a>
          </li>
        ))}
      </ul>
      {scopes.author && (
        <>
          <h2>New empty workflow</h2>
          <div className="row">
            <label htmlFor="empty-ws">Workspace id</label>
            <input id="empty-ws" value={id} onChange={(e) => setId(e.target.value)} />
            <label htmlFor="empty-name">Name</label>
            <input id="empty-name" value={name} onChange={(e) => setName(e.target.value)} />
          </div>
          <Action method="workflow.draft_workspaces.create_empty" params={{ workspace_id: id, name, outcomes: ["ok", "error"] }} scope="author" label="Create empty workflow" onDone={(r) => go("workbench", r.workspace_id)} />
        </>
      )}
      <p className="muted">Or start from a capability on the Discover screen.</p>
    </section>
  );
}

function templateOf(kind: StepKind): Obj {
  const cond = { op: "exists", path: "input.value" };
  switch (kind) {
    case "use":
      return { use: "", input: [], output: [] };
    case "when":
      return { when: { if: cond, then: endId } };
    case "choose":
      return { choose: { clauses: [{ if: cond, then: endId }], default: endId } };
    case "match":
      return { match: { value: "input.value", cases: [{ equals: "a", then: endId }], default: endId } };
    case "foreach":
      return { foreach: { over: "input.items", as: "item" } };
    case "join":
      return { join: {} };
    case "end":
      return { end: { outcome: "ok" } };
    case "interrupt":
      return { interrupt: { kind: "approval" } };
    case "subgraph":
      return { subgraph: { workflow: { artifact_id: "child", version: 1 } } };
  }
}

function Bench({ id }: { id: string }) {
  const { conn, scopes } = useSession();
  const [ws, setWs] = useState<DraftWorkspaceResult>();
  const [error, setError] = useState("");
  const [conflict, setConflict] = useState<{ revision: number; retry: () => void }>();
  const [history, setHistory] = useState<{ docs: Obj[]; at: number }>({ docs: [], at: -1 });
  const [selected, setSelected] = useState<string>();
  const [busy, setBusy] = useState(false);
  const caps = useLoad(() => conn.api.capabilitiesList({ limit: 200 }), [conn]);
  const outcomesOf = useMemo(() => {
    const m = new Map((caps.data?.capabilities ?? []).map((c) => [c.name, c.outcomes]));
    return (n: string) => m.get(n);
  }, [caps.data]);

  const load = async (resetHistory: boolean) => {
    try {
      const r = await conn.api.draftWorkspacesGet({ workspace_id: id, include_draft: true });
      setWs(r);
      setConflict(undefined);
      if (resetHistory && r.draft) setHistory({ docs: [r.draft], at: 0 });
    } catch (e) {
      setError(errorText(e));
    }
  };
  useEffect(() => {
    void load(true);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [id]);

  /** perform sends one edit at the current revision; a stale revision offers reload or reapply. */
  const perform = async <M extends EditMethod>(method: M, params: EditParams<M>, record = true): Promise<boolean> => {
    if (!ws) return false;
    setBusy(true);
    setError("");
    try {
      const full = { ...params, workspace_id: id, revision: ws.revision } as unknown as Methods[M]["params"];
      const r = (await conn.call(method, full)) as DraftWorkspaceResult;
      if (r.status === "conflict") {
        setConflict({
          revision: r.revision,
          retry: () => {
            setConflict(undefined);
            void conn.api.draftWorkspacesGet({ workspace_id: id, include_draft: true }).then((fresh) => {
              setWs(fresh);
              void conn.call(method, { ...params, workspace_id: id, revision: fresh.revision } as unknown as Methods[M]["params"]).then(() => load(false), (e) => setError(errorText(e)));
            });
          },
        });
        return false;
      }
      const fresh = r.draft ? r : await conn.api.draftWorkspacesGet({ workspace_id: id, include_draft: true });
      setWs(fresh);
      if (record && fresh.draft) {
        const doc = fresh.draft;
        setHistory((h) => ({ docs: [...h.docs.slice(0, h.at + 1), doc], at: h.at + 1 }));
      }
      return true;
    } catch (e) {
      setError(errorText(e));
      return false;
    } finally {
      setBusy(false);
    }
  };

  const draft = ws?.draft ?? {};
  const graph = useMemo(() => projectDraft(draft, outcomesOf), [draft, outcomesOf]);
  const diags: DraftDiagnosticPayload[] = ws?.diagnostics ?? [];
  const { nodeProblems, edgeProblems, unpinned } = useMemo(() => {
    const np: Record<string, string[]> = {};
    const ep: Record<string, string[]> = {};
    const un: DraftDiagnosticPayload[] = [];
    for (const d of diags) {
      const pin = pinDiagnostic(d.path, d.step_id, graph);
      const text = `${d.code}: ${d.message}`;
      if (pin.edge) (ep[pin.edge] ??= []).push(text);
      else if (pin.node) (np[pin.node] ??= []).push(text);
      else un.push(d);
    }
    return { nodeProblems: np, edgeProblems: ep, unpinned: un };
  }, [diags, graph]);

  if (!ws) return <ErrorBox error={error || undefined} />;
  const steps = asObj(draft.steps);
  const stepIds = Object.keys(steps).sort();
  const canEdit = scopes.author;

  const replaceWith = (doc: Obj, record = true) => perform("workflow.draft_workspaces.replace_document", { draft: doc }, record);
  const connectRoute = (source: string, outcome: string, target: string) => {
    if (!canEdit) return;
    const step = asObj(steps[source]);
    const kind = kindOf(step);
    if (kind === "when" || kind === "choose" || kind === "match") {
      const p = { ...asObj(step[kind]) };
      if (kind === "when") p[outcome === "then" ? "then" : "otherwise"] = target;
      else if (outcome === "default") p.default = target;
      else {
        const list = [...((kind === "choose" ? p.clauses : p.cases) as JsonValue[])];
        const i = kind === "choose" ? Number(outcome.replace("clause ", "")) - 1 : list.findIndex((c) => `= ${JSON.stringify(asObj(c).equals)}` === outcome);
        if (i >= 0 && i < list.length) list[i] = { ...asObj(list[i]), then: target };
        p[kind === "choose" ? "clauses" : "cases"] = list;
      }
      void replaceWith({ ...draft, steps: { ...steps, [source]: { ...step, [kind]: p } } });
      return;
    }
    void perform("workflow.draft_workspaces.set_route", { step_id: source, outcome, target });
  };
  const undo = () => {
    if (history.at <= 0) return;
    const doc = history.docs[history.at - 1];
    void replaceWith(doc, false).then((ok) => ok && setHistory((h) => ({ ...h, at: h.at - 1 })));
  };
  const redo = () => {
    if (history.at >= history.docs.length - 1) return;
    const doc = history.docs[history.at + 1];
    void replaceWith(doc, false).then((ok) => ok && setHistory((h) => ({ ...h, at: h.at + 1 })));
  };

  return (
    <WorkspaceContext.Provider value={{ id, revision: ws.revision }}>
    <section aria-labelledby="bench-h" className="bench">
      <div className="bench-head">
        <h1 id="bench-h">
          {id} <small>revision {ws.revision}</small> <Status status={ws.status} />
        </h1>
        {canEdit && (
          <div className="toolbar" role="toolbar" aria-label="Workspace">
            <button type="button" onClick={undo} disabled={busy || history.at <= 0} aria-keyshortcuts="Control+Z">
              Undo
            </button>
            <button type="button" onClick={redo} disabled={busy || history.at >= history.docs.length - 1} aria-keyshortcuts="Control+Y">
              Redo
            </button>
          </div>
        )}
        <span className="action">
          <button type="button" disabled={busy} onClick={() => void conn.api.draftWorkspacesValidate({ workspace_id: id }).then((r) => setWs((w) => (w ? { ...w, ...r, draft: w.draft } : r)), (e) => setError(errorText(e)))}>
            Validate
          </button>
          <CopyAs method="workflow.draft_workspaces.validate" params={{ workspace_id: id }} />
        </span>
      </div>
      {conflict && (
        <div className="conflict" role="alert">
          Someone else changed this workspace (now at revision {conflict.revision}); your change was not applied.
          <button type="button" onClick={() => void load(true)}>
            Reload theirs
          </button>
          <button type="button" onClick={conflict.retry}>
            Reapply mine
          </button>
        </div>
      )}
      <ErrorBox error={error || undefined} />
      <div className="bench-body">
        <div className="canvas-col">
          <GraphView label="Draft graph" graph={graph} nodeProblems={nodeProblems} edgeProblems={edgeProblems} selected={selected} onSelect={setSelected} onConnect={canEdit ? connectRoute : undefined} />
          <Diagnostics diags={diags} unpinned={unpinned} onPick={setSelected} />
        </div>
        <div className="side-col">
          <div className="row">
            <label htmlFor="pick-step">Step</label>
            <select id="pick-step" value={selected ?? ""} onChange={(e) => setSelected(e.target.value || undefined)}>
              <option value="">— pick one, or click it on the canvas —</option>
              {stepIds.map((s) => (
                <option key={s}>{s}</option>
              ))}
            </select>
          </div>
          {canEdit && <Palette caps={(caps.data?.capabilities ?? []).map((c) => ({ name: c.name, outcomes: c.outcomes }))} stepIds={stepIds} perform={perform} />}
          {selected && steps[selected] !== undefined && (
            <StepPanel key={`${selected}:${ws.revision}`} id={selected} step={asObj(steps[selected])} stepIds={stepIds} draft={draft} routes={asObj(asObj(draft.routes)[selected])} outcomes={graph.nodes.find((n) => n.id === selected)?.outcomes ?? []} canEdit={canEdit} perform={perform} replaceWith={replaceWith} onGone={() => setSelected(undefined)} />
          )}
          <ContractPanel key={`contract:${ws.revision}`} draft={draft} stepIds={stepIds} canEdit={canEdit} perform={perform} />
          <Publish workspace={id} draft={draft} workspaceTitle={ws.title} valid={ws.status === "valid"} />
        </div>
      </div>
    </section>
    </WorkspaceContext.Provider>
  );
}

/** The workspace the edit buttons copy their frames for. */
const WorkspaceContext = createContext({ id: "", revision: 0 });

type Perform = <M extends EditMethod>(method: M, params: EditParams<M>, record?: boolean) => Promise<boolean>;

/** EditButton sends one edit through perform, with its Copy as (at the revision it will carry). */
function EditButton<M extends EditMethod>({ perform, method, params, label, disabled }: { perform: Perform; method: M; params: EditParams<M>; label: string; disabled?: boolean }) {
  const ws = useContext(WorkspaceContext);
  return (
    <span className="action">
      <button type="button" disabled={disabled} onClick={() => void perform(method, params)}>
        {label}
      </button>
      <CopyAs method={method} params={{ workspace_id: ws.id, revision: ws.revision, ...params } as unknown as Methods[M]["params"]} />
    </span>
  );
}

function Diagnostics({ diags, unpinned, onPick }: { diags: DraftDiagnosticPayload[]; unpinned: DraftDiagnosticPayload[]; onPick: (id: string) => void }) {
  if (diags.length === 0) return <p className="ok-note">No diagnostics.</p>;
  return (
    <div className="diagnostics" aria-label="Diagnostics">
      <h2>Diagnostics</h2>
      <ul>
        {diags.map((d, i) => (
          <li key={i} className={unpinned.includes(d) ? "unpinned" : ""} data-code={d.code}>
            {d.step_id ? (
              <button type="button" className="link" onClick={() => onPick(d.step_id!)}>
                {d.step_id}
              </button>
            ) : null}{" "}
            <code>{d.code}</code> at <code>{d.path || "(draft)"}</code>: {d.message}
            {d.repair_hint ? <small className="help"> {d.repair_hint}</small> : null}
          </li>
        ))}
      </ul>
    </div>
  );
}

function Palette({ caps, stepIds, perform }: { caps: { name: string; outcomes: string[] }[]; stepIds: string[]; perform: Perform }) {
  const [stepId, setStepId] = useState("step" + (stepIds.length + 1));
  const [cap, setCap] = useState("");
  const [kind, setKind] = useState<StepKind>("when");
  const capName = cap || caps[0]?.name || "";
  // Every outcome of the capability must be routed: each starts at __end__, to be dragged elsewhere.
  const routes = Object.fromEntries((caps.find((c) => c.name === capName)?.outcomes ?? ["ok", "error"]).map((o) => [o, endId]));
  return (
    <details className="panel" open>
      <summary>Add a step</summary>
      <label htmlFor="new-step-id">Step id</label>
      <input id="new-step-id" value={stepId} onChange={(e) => setStepId(e.target.value)} />
      <label htmlFor="new-step-cap">From a capability</label>
      <select id="new-step-cap" value={capName} onChange={(e) => setCap(e.target.value)}>
        {caps.map((c) => (
          <option key={c.name}>{c.name}</option>
        ))}
      </select>
      <EditButton perform={perform} method="workflow.draft_workspaces.add_step_from_capability" params={{ step_id: stepId, capability_name: capName, routes }} label="Add capability step" disabled={!capName || !stepId} />
      <label htmlFor="new-step-kind">Or of a kind</label>
      <select id="new-step-kind" value={kind} onChange={(e) => setKind(e.target.value as StepKind)}>
        {stepKinds
          .filter((k) => k !== "use")
          .map((k) => (
            <option key={k}>{k}</option>
          ))}
      </select>
      <EditButton perform={perform} method="workflow.draft_workspaces.add_step" params={{ step_id: stepId, step: templateOf(kind) as Methods["workflow.draft_workspaces.add_step"]["params"]["step"] }} label={`Add ${kind} step`} disabled={!stepId} />
    </details>
  );
}

type Row = { key: string; mode: "path" | "value" | "expression"; text: string };

function inputRows(list: JsonValue | undefined): Row[] {
  return (Array.isArray(list) ? list : []).map((b) => {
    const o = asObj(b);
    const key = String(o.target ?? "");
    if ("path" in o) return { key, mode: "path", text: String(o.path) };
    if ("expression" in o) return { key, mode: "expression", text: JSON.stringify(o.expression) };
    return { key, mode: "value", text: JSON.stringify(o.value) };
  });
}

function parseRows(rows: Row[]): { bindings?: JsonValue[]; error?: string } {
  const out: JsonValue[] = [];
  for (const r of rows) {
    if (!r.key) return { error: "every binding needs a target" };
    if (r.mode === "path") out.push({ target: r.key, path: r.text });
    else {
      try {
        const v = JSON.parse(r.text) as JsonValue;
        out.push(r.mode === "value" ? { target: r.key, value: v } : { target: r.key, expression: v });
      } catch {
        return { error: `${r.key}: the ${r.mode} is not JSON` };
      }
    }
  }
  return { bindings: out };
}

function StepPanel(props: { id: string; step: Obj; stepIds: string[]; draft: Obj; routes: Obj; outcomes: string[]; canEdit: boolean; perform: Perform; replaceWith: (d: Obj) => Promise<boolean>; onGone: () => void }) {
  const { id, step, perform, canEdit } = props;
  const kind = kindOf(step);
  const [inputs, setInputs] = useState<Row[]>(() => inputRows(step.input));
  const [outputs, setOutputs] = useState<{ source: string; target: string }[]>(() => (Array.isArray(step.output) ? step.output : []).map((b) => ({ source: String(asObj(b).source ?? ""), target: String(asObj(b).target ?? "") })));
  const [routeOutcome, setRouteOutcome] = useState(props.outcomes[0] ?? "ok");
  const [routeTarget, setRouteTarget] = useState(endId);
  const [payload, setPayload] = useState<JsonValue | undefined>(step);
  const parsed = parseRows(inputs);
  const targets = [...props.stepIds.filter((s) => s !== id), endId];
  return (
    <section className="panel" aria-labelledby="step-h">
      <h2 id="step-h">
        Step {id} <small>{kind}</small>
      </h2>
      {kind === "use" && <p>calls <code>{String(step.use)}</code></p>}
      {kind === "use" && (
        <fieldset>
          <legend>Inputs</legend>
          {inputs.map((r, i) => (
            <div className="binding" key={i}>
              <input aria-label={`input ${i + 1} target`} value={r.key} placeholder="target" disabled={!canEdit} onChange={(e) => setInputs(inputs.map((x, j) => (j === i ? { ...x, key: e.target.value } : x)))} />
              <select aria-label={`input ${i + 1} source kind`} value={r.mode} disabled={!canEdit} onChange={(e) => setInputs(inputs.map((x, j) => (j === i ? { ...x, mode: e.target.value as Row["mode"] } : x)))}>
                <option value="path">path</option>
                <option value="value">literal</option>
                <option value="expression">expression</option>
              </select>
              <input aria-label={`input ${i + 1} source`} value={r.text} placeholder={r.mode === "path" ? "input.x" : "JSON"} disabled={!canEdit} onChange={(e) => setInputs(inputs.map((x, j) => (j === i ? { ...x, text: e.target.value } : x)))} />
              {canEdit && (
                <button type="button" aria-label={`remove input ${i + 1}`} onClick={() => setInputs(inputs.filter((_, j) => j !== i))}>
                  ✕
                </button>
              )}
            </div>
          ))}
          {canEdit && (
            <>
              <button type="button" onClick={() => setInputs([...inputs, { key: "", mode: "path", text: "" }])}>
                Add input
              </button>
              {parsed.error && <small className="error">{parsed.error}</small>}
              <EditButton perform={perform} method="workflow.draft_workspaces.set_step_input_bindings" params={{ step_id: id, bindings: (parsed.bindings ?? []) as Methods["workflow.draft_workspaces.set_step_input_bindings"]["params"]["bindings"] }} label="Save inputs" disabled={!!parsed.error} />
            </>
          )}
        </fieldset>
      )}
      {kind === "use" && (
        <fieldset>
          <legend>Outputs</legend>
          {outputs.map((r, i) => (
            <div className="binding" key={i}>
              <input aria-label={`output ${i + 1} source`} value={r.source} placeholder="source (. for all)" disabled={!canEdit} onChange={(e) => setOutputs(outputs.map((x, j) => (j === i ? { ...x, source: e.target.value } : x)))} />
              <span aria-hidden="true">→</span>
              <input aria-label={`output ${i + 1} target`} value={r.target} placeholder="state.x" disabled={!canEdit} onChange={(e) => setOutputs(outputs.map((x, j) => (j === i ? { ...x, target: e.target.value } : x)))} />
              {canEdit && (
                <button type="button" aria-label={`remove output ${i + 1}`} onClick={() => setOutputs(outputs.filter((_, j) => j !== i))}>
                  ✕
                </button>
              )}
            </div>
          ))}
          {canEdit && (
            <>
              <button type="button" onClick={() => setOutputs([...outputs, { source: "", target: "" }])}>
                Add output
              </button>
              <EditButton perform={perform} method="workflow.draft_workspaces.set_step_output_bindings" params={{ step_id: id, bindings: outputs }} label="Save outputs" />
            </>
          )}
        </fieldset>
      )}
      {kind === "when" && canEdit && <WhenForm id={id} payload={asObj(step.when)} targets={targets} onSave={(p) => props.replaceWith({ ...props.draft, steps: { ...asObj(props.draft.steps), [id]: { when: p } } })} />}
      {kind !== "use" && kind !== "when" && canEdit && (
        <>
          <JsonInput label={`step ${id}`} value={payload} onChange={setPayload} rows={8} />
          <button type="button" onClick={() => payload !== undefined && void props.replaceWith({ ...props.draft, steps: { ...asObj(props.draft.steps), [id]: payload } })}>
            Save step
          </button>
        </>
      )}
      {kind !== "when" && kind !== "choose" && kind !== "match" && kind !== "end" && (
        <fieldset>
          <legend>Routes</legend>
          <ul>
            {Object.entries(props.routes).map(([o, t]) => (
              <li key={o}>
                {o} → {String(t)} {canEdit && <EditButton perform={perform} method="workflow.draft_workspaces.remove_route" params={{ step_id: id, outcome: o }} label={`Remove route ${o}`} />}
              </li>
            ))}
          </ul>
          {canEdit && (
            <div className="row">
              <label htmlFor="route-o">Outcome</label>
              <select id="route-o" value={routeOutcome} onChange={(e) => setRouteOutcome(e.target.value)}>
                {props.outcomes.map((o) => (
                  <option key={o}>{o}</option>
                ))}
              </select>
              <label htmlFor="route-t">to</label>
              <select id="route-t" value={routeTarget} onChange={(e) => setRouteTarget(e.target.value)}>
                {targets.map((t) => (
                  <option key={t}>{t}</option>
                ))}
              </select>
              <EditButton perform={perform} method="workflow.draft_workspaces.set_route" params={{ step_id: id, outcome: routeOutcome, target: routeTarget }} label="Set route" />
            </div>
          )}
        </fieldset>
      )}
      {canEdit && (
        <div className="row">
          <EditButton perform={perform} method="workflow.draft_workspaces.set_start" params={{ step_id: id }} label="Make start" />
          <span className="action">
            <button type="button" onClick={() => void perform("workflow.draft_workspaces.remove_step", { step_id: id }).then((ok) => ok && props.onGone())}>
              Remove step
            </button>
          </span>
        </div>
      )}
    </section>
  );
}

const ops = ["exists", "eq", "ne", "gt", "ge", "lt", "le"];

function WhenForm({ id, payload, targets, onSave }: { id: string; payload: Obj; targets: string[]; onSave: (p: Obj) => void }) {
  const cond = asObj(payload.if);
  const [op, setOp] = useState(String(cond.op ?? "exists"));
  const [left, setLeft] = useState(String(cond.op === "exists" ? (cond.path ?? "") : (asObj(cond.left).path ?? "")));
  const [right, setRight] = useState(cond.right !== undefined ? JSON.stringify(asObj(cond.right).value) : "0");
  const [then, setThen] = useState(String(payload.then ?? endId));
  const [otherwise, setOtherwise] = useState(String(payload.otherwise ?? endId));
  let rightValue: JsonValue | undefined;
  try {
    rightValue = JSON.parse(right) as JsonValue;
  } catch {
    rightValue = undefined;
  }
  const save = () => onSave({ if: op === "exists" ? { op, path: left } : { op, left: { path: left }, right: { value: rightValue ?? null } }, then, otherwise });
  return (
    <fieldset aria-label={`condition of ${id}`}>
      <legend>Condition</legend>
      <label htmlFor="when-left">Path</label>
      <input id="when-left" value={left} onChange={(e) => setLeft(e.target.value)} placeholder="state.count" />
      <label htmlFor="when-op">Operator</label>
      <select id="when-op" value={op} onChange={(e) => setOp(e.target.value)}>
        {ops.map((o) => (
          <option key={o}>{o}</option>
        ))}
      </select>
      {op !== "exists" && (
        <>
          <label htmlFor="when-right">Value (JSON)</label>
          <input id="when-right" value={right} onChange={(e) => setRight(e.target.value)} aria-invalid={rightValue === undefined} />
        </>
      )}
      <label htmlFor="when-then">Then</label>
      <select id="when-then" value={then} onChange={(e) => setThen(e.target.value)}>
        {targets.map((t) => (
          <option key={t}>{t}</option>
        ))}
      </select>
      <label htmlFor="when-otherwise">Otherwise</label>
      <select id="when-otherwise" value={otherwise} onChange={(e) => setOtherwise(e.target.value)}>
        {targets.map((t) => (
          <option key={t}>{t}</option>
        ))}
      </select>
      <button type="button" onClick={save} disabled={op !== "exists" && rightValue === undefined}>
        Save condition
      </button>
    </fieldset>
  );
}

function ContractPanel({ draft, stepIds, canEdit, perform }: { draft: Obj; stepIds: string[]; canEdit: boolean; perform: Perform }) {
  const [name, setName] = useState(String(draft.name ?? ""));
  const [input, setInput] = useState<JsonValue | undefined>(draft.input_schema ?? { type: "object" });
  const [state, setState] = useState<JsonValue | undefined>(draft.state_schema ?? { type: "object" });
  const [output, setOutput] = useState<JsonValue | undefined>(draft.output_schema ?? { type: "object" });
  const [outcomes, setOutcomes] = useState((Array.isArray(draft.outcomes) ? draft.outcomes : ["ok"]).join(", "));
  const [start, setStart] = useState(String(draft.start ?? ""));
  const list = outcomes.split(",").map((s) => s.trim()).filter(Boolean);
  return (
    <details className="panel">
      <summary>Contract, start and name</summary>
      <label htmlFor="c-name">Name</label>
      <input id="c-name" value={name} disabled={!canEdit} onChange={(e) => setName(e.target.value)} />
      {canEdit && <EditButton perform={perform} method="workflow.draft_workspaces.set_name" params={{ name }} label="Save name" disabled={!name} />}
      <label htmlFor="c-start">Start</label>
      <select id="c-start" value={start} disabled={!canEdit} onChange={(e) => setStart(e.target.value)}>
        {stepIds.map((s) => (
          <option key={s}>{s}</option>
        ))}
      </select>
      {canEdit && <EditButton perform={perform} method="workflow.draft_workspaces.set_start" params={{ step_id: start }} label="Save start" disabled={!start} />}
      <JsonInput label="Input schema" value={input} onChange={setInput} />
      <JsonInput label="State schema" value={state} onChange={setState} />
      <JsonInput label="Output schema" value={output} onChange={setOutput} />
      <label htmlFor="c-outcomes">Outcomes (comma separated)</label>
      <input id="c-outcomes" value={outcomes} disabled={!canEdit} onChange={(e) => setOutcomes(e.target.value)} />
      {canEdit && (
        <EditButton perform={perform} method="workflow.draft_workspaces.set_contract" params={{ input_schema: asObj(input), state_schema: asObj(state), output_schema: asObj(output), outcomes: list }} label="Save contract" />
      )}
    </details>
  );
}

/** Publish saves the draft as an artifact with the workspace's title (the server titles a scaffold, as `workflow new` does) and the draft's outcomes, as the CLI saves it: after the CLI's journey, the same artifact. */
function Publish({ workspace, draft, workspaceTitle, valid }: { workspace: string; draft: Obj; workspaceTitle: string | null; valid: boolean }) {
  const { scopes } = useSession();
  const name = String(draft.name ?? workspace);
  const [artifact, setArtifact] = useState(name);
  const [version, setVersion] = useState(1);
  const [title, setTitle] = useState(workspaceTitle ?? name);
  const [saved, setSaved] = useState<{ id: string; version: number; bindings: Record<string, string> }>();
  const [deployId, setDeployId] = useState(`${name}.default`);
  const [deployed, setDeployed] = useState("");
  const [error, setError] = useState("");
  if (!scopes.author) return null;
  const outcomes = Array.isArray(draft.outcomes) ? draft.outcomes.map(String) : ["ok"];
  const bindings: SourceBindingPayload[] = saved ? Object.entries(saved.bindings).map(([logical_source, concrete_source]) => ({ logical_source, concrete_source })) : [];
  return (
    <details className="panel" open>
      <summary>Save as artifact, then deploy</summary>
      {!valid && <p className="muted">Fix the diagnostics first: only a valid draft saves.</p>}
      <label htmlFor="a-id">Artifact id</label>
      <input id="a-id" value={artifact} onChange={(e) => setArtifact(e.target.value)} />
      <label htmlFor="a-version">Version</label>
      <input id="a-version" type="number" min={1} value={version} onChange={(e) => setVersion(Number(e.target.value))} />
      <label htmlFor="a-title">Title</label>
      <input id="a-title" value={title} onChange={(e) => setTitle(e.target.value)} />
      <Action
        method="workflow.draft_workspaces.create_artifact"
        params={{ workspace_id: workspace, artifact_id: artifact, version, title, outcomes }}
        scope="author"
        label="Save artifact"
        disabled={!valid}
        onDone={(r) => {
          if (r.saved) {
            setSaved({ id: r.artifact_id, version: r.version, bindings: r.suggested_bindings });
            setDeployId(`${r.artifact_id}.default`);
            setError("");
          } else setError("the artifact was not saved: " + JSON.stringify(r));
        }}
      />
      <ErrorBox error={error || undefined} />
      {saved && (
        <div className="deploy" aria-label="Deploy">
          <p>
            Saved <code>{saved.id}</code> version {saved.version}. Bindings suggested: {bindings.map((b) => `${b.logical_source} → ${b.concrete_source}`).join(", ") || "none needed"}.
          </p>
          <BindingsForm
            initial={saved.bindings}
            render={(bs) => (
              <>
                <label htmlFor="d-id">Deployment id</label>
                <input id="d-id" value={deployId} onChange={(e) => setDeployId(e.target.value)} />
                <Deploy deploymentId={deployId} artifactId={saved.id} version={saved.version} bindings={bs} onDone={setDeployed} />
              </>
            )}
          />
          {deployed && (
            <p>
              Deployed <a href={href("artifacts", "deployment", deployed)}>{deployed}</a>.{" "}
              {needsInput(draft.input_schema) ? (
                <a href={href("artifacts", "deployment", deployed)}>Start a run with its input</a>
              ) : (
                <Action method="workflow.runs.start" params={{ deployment_id: deployed, wait: false }} scope="run" label="Run it" onDone={(r) => r.run_id && go("runs", r.run_id)} />
              )}
            </p>
          )}
        </div>
      )}
    </details>
  );
}

/** needsInput is whether a workflow's input schema requires a field: its run starts from the deployment's form. */
function needsInput(schema: unknown): boolean {
  const s = typeof schema === "object" && schema !== null ? (schema as { required?: unknown }) : {};
  return Array.isArray(s.required) && s.required.length > 0;
}

function BindingsForm({ initial, render }: { initial: Record<string, string>; render: (b: SourceBindingPayload[]) => React.ReactNode }) {
  const [b, setB] = useState(initial);
  return (
    <fieldset>
      <legend>Source bindings</legend>
      {Object.entries(b).map(([logical, concrete]) => (
        <div className="row" key={logical}>
          <label htmlFor={`bind-${logical}`}>{logical} →</label>
          <input id={`bind-${logical}`} value={concrete} onChange={(e) => setB({ ...b, [logical]: e.target.value })} />
        </div>
      ))}
      {render(Object.entries(b).map(([logical_source, concrete_source]) => ({ logical_source, concrete_source })))}
    </fieldset>
  );
}

export { Json };
