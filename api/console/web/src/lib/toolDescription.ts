// The description MCP clients (agents) see for a deployment's tool on
// /mcp, computed as the server's api/mcpface (describe in catalog.go)
// computes it, so that a deploy can show what it changes before it is
// sent. Keep the two in step; the API does not return it.
import type { JsonValue } from "../api/generated";

export interface DescribedArtifact {
  id: string;
  version: number;
  title: string;
  description: string | null;
  plan: JsonValue;
}

function goQuote(s: string): string {
  // Go's %q for the titles mcpflow accepts (printable text): JSON's quoting.
  return JSON.stringify(s);
}

/** callsOf lists the capabilities a plan calls, sorted, once each. */
export function callsOf(plan: JsonValue): string[] {
  const nodes = typeof plan === "object" && plan !== null && !Array.isArray(plan) && Array.isArray(plan.nodes) ? plan.nodes : [];
  const caps = new Set<string>();
  for (const n of nodes) {
    if (typeof n === "object" && n !== null && !Array.isArray(n) && n.type === "node" && typeof n.node === "string" && n.node !== "") caps.add(n.node);
  }
  return [...caps].sort();
}

/** toolDescription is the tool description of deployment id deploying a. */
export function toolDescription(deploymentId: string, a: DescribedArtifact): string {
  let b = "";
  const own = (a.description ?? "").trim();
  if (own) b = own;
  else {
    b = `Runs the mcpflow workflow ${goQuote(a.title.trim() ? a.title : a.id)}`;
    const caps = callsOf(a.plan);
    if (caps.length > 0) b += `, which calls ${caps.join(", ")}`;
    b += ".";
  }
  b += ` (deployment ${deploymentId}, artifact ${a.id} v${a.version}.) The result is the run: run_id, status, outcome and output;`;
  b += " a run that waits for a person is interrupted: ask the user, then call mcpflow_resume_run.";
  return b;
}
