import { useEffect, useState } from "react";
import { exactTime, formatDuration, parseTime, relativeTime } from "../lib/time";

// One clock for every relative time and live duration on the page.
const ticks = new Set<(now: number) => void>();
let timer: ReturnType<typeof setInterval> | undefined;

/** useNow is the time now, renewed every second while a component reads it. */
export function useNow(): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    ticks.add(setNow);
    timer ??= setInterval(() => {
      const t = Date.now();
      for (const f of ticks) f(t);
    }, 1000);
    return () => {
      ticks.delete(setNow);
      if (ticks.size === 0) {
        clearInterval(timer);
        timer = undefined;
      }
    };
  }, []);
  return now;
}

/** Ago is a time as "3 min ago", the exact time on hover. */
export function Ago({ at }: { at: string | number | null | undefined }) {
  const now = useNow();
  const ms = parseTime(at);
  if (ms === undefined) return <span className="muted">—</span>;
  return (
    <time dateTime={new Date(ms).toISOString()} title={exactTime(ms)}>
      {relativeTime(ms, now)}
    </time>
  );
}

/** Duration is from → to, or from → now while live (to absent), ticking each second. */
export function Duration({ from, to, live }: { from: string | number | null | undefined; to?: string | number | null; live: boolean }) {
  const now = useNow();
  const a = parseTime(from);
  const b = live ? now : parseTime(to);
  if (a === undefined || b === undefined) return <span className="muted">—</span>;
  return (
    <span className={live ? "duration live-duration" : "duration"} data-duration-ms={Math.max(0, b - a)} title={live ? "running: the time so far" : `${exactTime(a)} → ${exactTime(b)}`}>
      {formatDuration(Math.max(0, b - a))}
    </span>
  );
}
