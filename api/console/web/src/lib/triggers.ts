// The Triggers screen's words: a schedule's spec, the countdown to its
// next fires, and the outcome of a schedule's last fire or of a
// webhook's delivery as a label and a tone. Pure functions, no React.
import type { Json, ScheduleSpec, WebhookDeliveryPayload } from "../api/generated";
import { formatDuration } from "./time";

/** specText is a schedule's spec as one line: "cron 0 2 * * * (Europe/Paris)", "every 90 s", with its jitter. */
export function specText(spec: ScheduleSpec): string {
  let text = spec.cron ? `cron ${spec.cron}${spec.time_zone ? ` (${spec.time_zone})` : ""}` : spec.interval_seconds ? `every ${formatDuration(spec.interval_seconds * 1000)}` : "no spec";
  if (spec.jitter_seconds) text += `, jitter up to ${formatDuration(spec.jitter_seconds * 1000)}`;
  return text;
}

/** countdown is how long until at: "in 4.2 s", "in 3 min 4 s", "due" once it is past. */
export function countdown(at: number, now: number): string {
  const d = at - now;
  return d <= 0 ? "due" : `in ${formatDuration(d)}`;
}

/** The tone of an outcome: ok, warn (nothing started, nothing wrong either) or err. */
export type Tone = "ok" | "warn" | "err" | "run";

export interface OutcomeLabel {
  text: string;
  tone: Tone;
}

const deliveryLabels: Record<WebhookDeliveryPayload["outcome"], OutcomeLabel> = {
  started: { text: "started", tone: "ok" },
  replayed: { text: "duplicate", tone: "warn" },
  unsigned: { text: "rejected: not signed", tone: "err" },
  bad_signature: { text: "rejected: bad signature", tone: "err" },
  stale: { text: "rejected: stale timestamp", tone: "err" },
  too_large: { text: "rejected: too large", tone: "err" },
  rate_limited: { text: "rejected: rate limited", tone: "warn" },
  bad_request: { text: "rejected: bad request", tone: "err" },
  start_failed: { text: "start refused", tone: "err" },
};

/** deliveryLabel is a webhook delivery's outcome in words: started, duplicate, or rejected and why. */
export function deliveryLabel(outcome: string): OutcomeLabel {
  return deliveryLabels[outcome as WebhookDeliveryPayload["outcome"]] ?? { text: outcome, tone: "warn" };
}

/** fireLabel is a schedule's last fire: its run's status as last seen, or why no run started. */
export function fireLabel(outcome: string): OutcomeLabel {
  switch (outcome) {
    case "completed":
      return { text: "completed", tone: "ok" };
    case "running":
      return { text: "running", tone: "run" };
    case "interrupted":
      return { text: "interrupted", tone: "warn" };
    case "start_failed":
      return { text: "start failed", tone: "err" };
    case "unrunnable":
      return { text: "deployment unrunnable", tone: "err" };
    default:
      return { text: outcome, tone: outcome === "failed" || outcome === "cancelled" ? "err" : "warn" };
  }
}

/** hookURL is where a sender posts a webhook's deliveries: its path on the console's own origin (the serve listener). */
export function hookURL(path: string, origin: string): string {
  return new URL(path, origin).toString();
}

/** ScheduleForm is what the create form holds, as typed. */
export interface ScheduleForm {
  id: string;
  deployment: string;
  kind: "cron" | "interval";
  cron: string;
  timeZone: string;
  interval: string;
  overlap: "skip" | "buffer_one" | "allow_all" | "cancel_other";
  input: string;
}

export const emptyScheduleForm: ScheduleForm = { id: "", deployment: "", kind: "cron", cron: "", timeZone: "", interval: "", overlap: "skip", input: "" };

const idPattern = /^[A-Za-z0-9_][A-Za-z0-9_.-]*$/;

/** idProblem is what is wrong with a schedule's or a webhook's id, as the server would say it; "" when nothing. */
export function idProblem(id: string): string {
  if (id === "") return "an id is required";
  if (id.length > 128 || !idPattern.test(id)) return "the id starts with a letter, a digit or _ and holds only A-Z a-z 0-9 _ . -";
  return "";
}

/**
 * scheduleDraft turns the create form into workflow.schedules.create's
 * schedule, or the problems that keep it from being sent (the server
 * still judges the cron and the zone).
 */
export function scheduleDraft(f: ScheduleForm): { schedule?: { id: string; deployment_id: string; spec: ScheduleSpec; overlap: ScheduleForm["overlap"]; workflow_input?: { [key: string]: Json } }; problems: string[] } {
  const problems: string[] = [];
  const idWrong = idProblem(f.id.trim());
  if (idWrong) problems.push(idWrong);
  if (!f.deployment) problems.push("pick a deployment");
  let spec: ScheduleSpec = {};
  if (f.kind === "cron") {
    if (!f.cron.trim()) problems.push("a cron expression is required");
    spec = { cron: f.cron.trim(), ...(f.timeZone.trim() ? { time_zone: f.timeZone.trim() } : {}) };
  } else {
    const n = Number(f.interval);
    if (!Number.isInteger(n) || n < 1) problems.push("the interval is a whole number of seconds, 1 or more");
    spec = { interval_seconds: n };
  }
  let input: { [key: string]: Json } | undefined;
  if (f.input.trim()) {
    try {
      const v: unknown = JSON.parse(f.input);
      if (typeof v !== "object" || v === null || Array.isArray(v)) problems.push("the input is a JSON object");
      else input = v as { [key: string]: Json };
    } catch {
      problems.push("the input is not JSON");
    }
  }
  if (problems.length > 0) return { problems };
  return { schedule: { id: f.id.trim(), deployment_id: f.deployment, spec, overlap: f.overlap, ...(input ? { workflow_input: input } : {}) }, problems };
}
