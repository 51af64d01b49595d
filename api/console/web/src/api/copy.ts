// "Copy as": every action of the console as the JSON-RPC frame it sends,
// as a curl POST to /rpc, and, where the CLI has a command for it, as
// that `mcpflow` command. The token is never copied: commands read it
// from $MCPFLOW_TOKEN.
import type { Method, Methods } from "./generated";

export interface Copies {
  jsonrpc: string;
  curl: string;
  cli?: string;
}

/** quote is a POSIX shell single-quoted word. */
export function quote(s: string): string {
  return /^[A-Za-z0-9_./:=@%+-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

type P = { [key: string]: unknown };

function json(v: unknown): string {
  return JSON.stringify(v);
}

function isEmpty(v: unknown): boolean {
  return v === undefined || v === null || (typeof v === "object" && Object.keys(v as object).length === 0);
}

/** cliOf is the mcpflow command that does what method does with params, if the CLI has one. */
export function cliOf(method: string, params: P): string | undefined {
  const words: string[] = ["mcpflow"];
  const flag = (name: string, v: unknown) => {
    if (v === undefined || v === null || v === "") return;
    words.push(`--${name}`, quote(typeof v === "string" ? v : String(v)));
  };
  switch (method) {
    case "workflow.runs.start":
      words.push("run", quote(String(params.deployment_id)));
      if (!isEmpty(params.workflow_input)) words.push("--input", quote(json(params.workflow_input)));
      if (params.wait !== false) words.push("--wait");
      break;
    case "workflow.runs.resume":
      words.push("runs", "resume", quote(String(params.run_id)));
      flag("outcome", params.resume_outcome);
      if (!isEmpty(params.resume_payload)) words.push("--payload", quote(json(params.resume_payload)));
      break;
    case "workflow.runs.rerun":
      words.push("runs", "rerun", quote(String(params.run_id)));
      flag("artifact-version", params.artifact_version);
      break;
    case "workflow.runs.fork":
      words.push("runs", "fork", quote(String(params.run_id)));
      flag("from", params.from_node);
      break;
    case "workflow.runs.cancel":
      words.push("runs", "cancel", quote(String(params.run_id)));
      flag("reason", params.reason);
      break;
    case "workflow.runs.inspect":
      words.push("runs", "inspect", quote(String(params.run_id)));
      break;
    case "workflow.runs.trace":
      words.push("runs", "trace", quote(String(params.run_id)));
      break;
    case "workflow.runs.list":
      words.push("runs", "list");
      flag("status", params.status);
      flag("cursor", params.cursor);
      flag("limit", params.limit);
      break;
    case "workflow.capabilities.list":
      words.push("caps", "list");
      flag("query", params.query);
      flag("source", params.source_id);
      flag("cursor", params.cursor);
      break;
    case "workflow.capabilities.inspect":
      words.push("caps", "inspect", quote(String(params.qualified_name)));
      break;
    case "workflow.deployments.save": {
      const d = (params.deployment ?? {}) as { id?: string; artifact_id?: string; artifact_version?: number; bindings?: { logical_source: string; concrete_source: string; session?: string }[] };
      if (d.bindings?.some((b) => b.session)) return undefined;
      words.push("deploy", "--artifact", quote(String(d.artifact_id)));
      flag("id", d.id);
      flag("version", d.artifact_version);
      for (const b of d.bindings ?? []) words.push("--bind", quote(`${b.logical_source}=${b.concrete_source}`));
      break;
    }
    case "workflow.admin.connection_statuses.list":
      words.push("status");
      break;
    case "workflow.sources.list":
      words.push("sources", "list");
      break;
    case "workflow.sources.diagnose":
      words.push("sources", "diagnose", quote(String(params.source_id)));
      break;
    case "workflow.capabilities.call":
      words.push("caps", "call", quote(String(params.qualified_name)));
      if (!isEmpty(params.payload)) words.push("--input", quote(json(params.payload)));
      flag("deployment", params.deployment_id);
      break;
    case "workflow.artifacts.inspect":
    case "workflow.artifacts.delete":
      words.push("artifacts", method.endsWith("delete") ? "delete" : "inspect", quote(`${String(params.artifact_id)}@${String(params.version)}`));
      break;
    case "workflow.deployments.inspect":
    case "workflow.deployments.delete":
      words.push("deployments", method.endsWith("delete") ? "delete" : "inspect", quote(String(params.deployment_id)));
      break;
    case "workflow.deployments.validate":
      words.push("deployments", "validate", quote(String(params.deployment_id)));
      if (params.live_check) words.push("--live-check");
      break;
    case "workflow.draft_workspaces.create_from_capability":
      words.push("draft", "create", quote(String(params.workspace_id)), "--from-capability", quote(String(params.capability_name)));
      flag("name", params.name);
      flag("title", params.title);
      break;
    case "workflow.draft_workspaces.create_empty":
      words.push("draft", "create", quote(String(params.workspace_id)));
      flag("name", params.name);
      if (Array.isArray(params.outcomes)) flag("outcomes", params.outcomes.join(","));
      break;
    case "workflow.draft_workspaces.validate":
      words.push("draft", "validate", quote(String(params.workspace_id)));
      break;
    case "workflow.draft_workspaces.set_route":
      words.push("draft", "route", "set", ...[params.workspace_id, params.step_id, params.outcome, params.target].map((w) => quote(String(w))));
      break;
    case "workflow.draft_workspaces.remove_route":
      words.push("draft", "route", "remove", ...[params.workspace_id, params.step_id, params.outcome].map((w) => quote(String(w))));
      break;
    case "workflow.draft_workspaces.set_start":
      words.push("draft", "start", "set", quote(String(params.workspace_id)), quote(String(params.step_id)));
      break;
    case "workflow.draft_workspaces.set_name":
      words.push("draft", "name", "set", quote(String(params.workspace_id)), quote(String(params.name)));
      break;
    case "workflow.draft_workspaces.create_artifact":
      words.push("draft", "save", quote(String(params.workspace_id)), "--artifact", quote(String(params.artifact_id)));
      flag("version", params.version);
      flag("title", params.title);
      if (Array.isArray(params.outcomes)) flag("outcomes", params.outcomes.join(","));
      break;
    case "workflow.draft_workspaces.add_step_from_capability":
      words.push("draft", "add", "use", ...[params.workspace_id, params.step_id, params.capability_name].map((w) => quote(String(w))));
      for (const [o, t] of Object.entries((params.routes ?? {}) as Record<string, string>)) words.push("--route", quote(`${o}=${t}`));
      break;
    case "workflow.draft_workspaces.set_step_output_bindings":
      words.push("draft", "outputs", "set", quote(String(params.workspace_id)), quote(String(params.step_id)));
      for (const b of (params.bindings ?? []) as { source: string; target: string }[]) words.push("--out", quote(`${b.target}=${b.source}`));
      break;
    case "workflow.draft_workspaces.set_step_input_bindings": {
      const bs = (params.bindings ?? []) as { target: string; path?: string; value?: unknown; expression?: unknown }[];
      if (bs.some((b) => b.expression !== undefined)) return undefined; // the CLI has no flag for expressions
      words.push("draft", "inputs", "set", quote(String(params.workspace_id)), quote(String(params.step_id)));
      for (const b of bs) words.push(b.path !== undefined ? "--in" : "--value", quote(`${b.target}=${b.path !== undefined ? b.path : json(b.value)}`));
      break;
    }
    default:
      return undefined;
  }
  return words.join(" ");
}

export function copiesOf<M extends Method>(method: M, params: Methods[M]["params"], origin = window.location.origin): Copies {
  const frame = json({ jsonrpc: "2.0", id: 1, method, params });
  return {
    jsonrpc: frame,
    curl: `curl -s ${quote(origin + "/rpc")} -H 'Content-Type: application/json' -H "Authorization: Bearer $MCPFLOW_TOKEN" -d ${quote(frame)}`,
    cli: cliOf(method, params as P),
  };
}
