// The Health badge's words: workflow.health's status stays "ok" while the
// server answers; the sources extension says whether every enabled source
// works now, and which fail and why.
import type { HealthResult } from "../api/generated";

export interface HealthBadge {
  /** ok, or degraded while a source fails */
  status: "ok" | "degraded";
  /** what the badge says: "ok", or "degraded (1 of 3 sources failing)" */
  text: string;
  /** one line per failing source: its id, its session state and the cause */
  causes: string[];
}

export function healthBadge(h: HealthResult): HealthBadge {
  const s = h.sources;
  if (!s || s.status === "ok") return { status: "ok", text: "ok", causes: [] };
  const causes = s.detail.map((d) => `${d.source_id}: ${d.state}${d.cause ? ` (${d.cause})` : ""}`);
  return { status: "degraded", text: `degraded (${s.failing} of ${s.total} source${s.total === 1 ? "" : "s"} failing)`, causes };
}
