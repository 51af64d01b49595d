import { describe, expect, it } from "vitest";
import { exactTime, formatDuration, parseTime, relativeTime } from "./time";

describe("times", () => {
  it("reads RFC 3339 with nanoseconds and epoch milliseconds", () => {
    expect(parseTime("2026-03-01T10:20:30.123456789Z")).toBe(Date.UTC(2026, 2, 1, 10, 20, 30, 123));
    expect(parseTime("2026-03-01T10:20:30Z")).toBe(Date.UTC(2026, 2, 1, 10, 20, 30));
    expect(parseTime(1234)).toBe(1234);
    expect(parseTime("nope")).toBeUndefined();
    expect(parseTime(null)).toBeUndefined();
  });
  it("says how long ago, in the largest unit", () => {
    const now = Date.UTC(2026, 2, 1, 12);
    expect(relativeTime(now - 2000, now)).toBe("just now");
    expect(relativeTime(now - 42_000, now)).toBe("42 s ago");
    expect(relativeTime(now - 3 * 60_000 - 5000, now)).toBe("3 min ago");
    expect(relativeTime(now - 5 * 3600_000, now)).toBe("5 h ago");
    expect(relativeTime(now - 3 * 86400_000, now)).toBe("3 d ago");
    expect(relativeTime(now + 2 * 3600_000, now)).toBe("in 2 h");
  });
  it("shows the exact time whole, to the millisecond, with its zone", () => {
    expect(exactTime(Date.UTC(2026, 2, 1, 10, 20, 30, 5))).toMatch(/^2026-03-0\d \d\d:20:30\.005 UTC[+-]\d\d:\d\d$/);
  });
  it("writes durations in the two units that matter", () => {
    expect(formatDuration(850)).toBe("850 ms");
    expect(formatDuration(4250)).toBe("4.2 s");
    expect(formatDuration(184_000)).toBe("3 min 4 s");
    expect(formatDuration(180_000)).toBe("3 min");
    expect(formatDuration(2 * 3600_000 + 5 * 60_000 + 7000)).toBe("2 h 5 min");
    expect(formatDuration(27 * 3600_000)).toBe("1 d 3 h");
    expect(formatDuration(-1)).toBe("—");
  });
});
