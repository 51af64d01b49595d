import { describe, expect, it } from "vitest";
import { healthBadge } from "./health";

describe("the Health badge", () => {
  it("says ok when every source works, or when the server has no sources detail", () => {
    expect(healthBadge({ status: "ok", store_root: "/s" })).toEqual({ status: "ok", text: "ok", causes: [] });
    expect(healthBadge({ status: "ok", store_root: "/s", sources: { status: "ok", total: 2, failing: 0, detail: [] } }).text).toBe("ok");
  });
  it("says degraded, how many sources fail, and why, while a source fails", () => {
    const b = healthBadge({
      status: "ok",
      store_root: "/s",
      sources: { status: "degraded", total: 3, failing: 1, detail: [{ source_id: "broken.default", state: "failing", cause: "the command `nope` was not found on PATH" }] },
    });
    expect(b.status).toBe("degraded");
    expect(b.text).toBe("degraded (1 of 3 sources failing)");
    expect(b.causes).toEqual(["broken.default: failing (the command `nope` was not found on PATH)"]);
  });
});
