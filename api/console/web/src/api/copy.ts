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
