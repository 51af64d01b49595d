// Times as the console shows them: relative ("3 min ago") with the exact
// local time on hover, and durations ("1.2 s", "3 min 4 s"). The API
// sends RFC 3339 with nanoseconds and epoch milliseconds; no raw stamp is
// ever shown. Pure functions, no React.

/** parseTime reads an RFC 3339 stamp (any number of fraction digits) or epoch milliseconds; undefined when it is neither. */
export function parseTime(t: string | number | null | undefined): number | undefined {
  if (typeof t === "number") return Number.isFinite(t) ? t : undefined;
  if (!t) return undefined;
  // Date.parse is only specified for three fraction digits: cut the rest.
  const ms = Date.parse(t.replace(/(\.\d{3})\d+/, "$1"));
  return Number.isNaN(ms) ? undefined : ms;
}

const units: [number, string][] = [
  [365 * 24 * 3600_000, "y"],
  [30 * 24 * 3600_000, "mo"],
  [7 * 24 * 3600_000, "w"],
  [24 * 3600_000, "d"],
  [3600_000, "h"],
  [60_000, "min"],
  [1000, "s"],
];

/** relativeTime is how long ago (or from now) at is: "just now", "42 s ago", "3 min ago", "in 2 h". */
export function relativeTime(at: number, now: number): string {
  const d = now - at;
  const abs = Math.abs(d);
  if (abs < 5000) return "just now";
  for (const [size, name] of units) {
    if (abs >= size) {
      const n = Math.floor(abs / size);
      return d >= 0 ? `${n} ${name} ago` : `in ${n} ${name}`;
    }
  }
  return "just now";
}

/** exactTime is the full local date and time, to the millisecond, with the zone: what a hover shows. */
export function exactTime(at: number): string {
  const d = new Date(at);
  const pad = (n: number, w = 2) => String(n).padStart(w, "0");
  const off = -d.getTimezoneOffset();
  const zone = `UTC${off >= 0 ? "+" : "-"}${pad(Math.floor(Math.abs(off) / 60))}:${pad(Math.abs(off) % 60)}`;
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)} ${zone}`;
}

/** formatDuration is a span in the two largest units that matter: "850 ms", "4.2 s", "3 min 4 s", "2 h 5 min", "1 d 3 h". */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return "—";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(Math.floor(ms / 100) / 10).toFixed(1)} s`;
  const s = Math.floor(ms / 1000);
  const [d, h, m, sec] = [Math.floor(s / 86400), Math.floor(s / 3600) % 24, Math.floor(s / 60) % 60, s % 60];
  if (d > 0) return h > 0 ? `${d} d ${h} h` : `${d} d`;
  if (h > 0) return m > 0 ? `${h} h ${m} min` : `${h} h`;
  return sec > 0 ? `${m} min ${sec} s` : `${m} min`;
}
