import { describe, expect, it } from "vitest";
import { countdown, deliveryLabel, emptyScheduleForm, fireLabel, hookURL, idProblem, scheduleDraft, specText } from "./triggers";

describe("the Triggers screen's words", () => {
  it("writes a schedule's spec on one line", () => {
    expect(specText({ cron: "0 2 * * *", time_zone: "Europe/Paris" })).toBe("cron 0 2 * * * (Europe/Paris)");
    expect(specText({ cron: "@hourly" })).toBe("cron @hourly");
    expect(specText({ interval_seconds: 90 })).toBe("every 1 min 30 s");
    expect(specText({ interval_seconds: 3600, jitter_seconds: 60 })).toBe("every 1 h, jitter up to 1 min");
    expect(specText({})).toBe("no spec");
  });
  it("counts down to a fire, and says due once it is past", () => {
    const now = Date.UTC(2026, 11, 7, 12);
    expect(countdown(now + 4250, now)).toBe("in 4.2 s");
    expect(countdown(now + 184_000, now)).toBe("in 3 min 4 s");
    expect(countdown(now + 26 * 3600_000, now)).toBe("in 1 d 2 h");
    expect(countdown(now, now)).toBe("due");
    expect(countdown(now - 1000, now)).toBe("due");
  });
  it("labels each delivery outcome: started, duplicate, or rejected and why", () => {
    expect(deliveryLabel("started")).toEqual({ text: "started", tone: "ok" });
    expect(deliveryLabel("replayed")).toEqual({ text: "duplicate", tone: "warn" });
    expect(deliveryLabel("bad_signature")).toEqual({ text: "rejected: bad signature", tone: "err" });
    expect(deliveryLabel("stale").text).toBe("rejected: stale timestamp");
    expect(deliveryLabel("too_large").text).toBe("rejected: too large");
    expect(deliveryLabel("rate_limited").text).toBe("rejected: rate limited");
    expect(deliveryLabel("start_failed").tone).toBe("err");
    expect(deliveryLabel("something_new")).toEqual({ text: "something_new", tone: "warn" }); // a newer server's outcome, as it is
  });
  it("labels a schedule's last fire by its run's status, or why none started", () => {
    expect(fireLabel("completed")).toEqual({ text: "completed", tone: "ok" });
    expect(fireLabel("running").tone).toBe("run");
    expect(fireLabel("failed").tone).toBe("err");
    expect(fireLabel("start_failed")).toEqual({ text: "start failed", tone: "err" });
    expect(fireLabel("unrunnable").text).toBe("deployment unrunnable");
  });
  it("gives a webhook's URL on the console's origin", () => {
    expect(hookURL("/hooks/on-push", "http://127.0.0.1:8765")).toBe("http://127.0.0.1:8765/hooks/on-push");
  });
});

describe("the create-schedule form", () => {
  const base = { ...emptyScheduleForm, id: "nightly", deployment: "report.default", cron: "0 2 * * *" };
  it("makes a cron schedule, its zone and input with it", () => {
    expect(scheduleDraft({ ...base, timeZone: "Europe/Paris", input: '{"scope":"all"}' })).toEqual({
      schedule: { id: "nightly", deployment_id: "report.default", spec: { cron: "0 2 * * *", time_zone: "Europe/Paris" }, overlap: "skip", workflow_input: { scope: "all" } },
      problems: [],
    });
  });
  it("makes an interval schedule", () => {
    expect(scheduleDraft({ ...base, kind: "interval", interval: "90", overlap: "buffer_one" }).schedule).toEqual({ id: "nightly", deployment_id: "report.default", spec: { interval_seconds: 90 }, overlap: "buffer_one" });
  });
  it("says what keeps it from being sent", () => {
    expect(scheduleDraft(emptyScheduleForm).problems).toEqual(["an id is required", "pick a deployment", "a cron expression is required"]);
    expect(scheduleDraft({ ...base, id: "bad id!" }).problems).toEqual(["the id starts with a letter, a digit or _ and holds only A-Z a-z 0-9 _ . -"]);
    expect(scheduleDraft({ ...base, kind: "interval", interval: "1.5" }).problems).toEqual(["the interval is a whole number of seconds, 1 or more"]);
    expect(scheduleDraft({ ...base, input: "[1]" }).problems).toEqual(["the input is a JSON object"]);
    expect(scheduleDraft({ ...base, input: "{" }).problems).toEqual(["the input is not JSON"]);
    expect(idProblem("on-push")).toBe("");
  });
});
