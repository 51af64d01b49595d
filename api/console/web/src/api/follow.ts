// Live feeds over the one connection: a run's events and the admin event
// log. Each keeps its cursor (the last sequence it delivered) and, after
// a reconnect or a lagged notice, subscribes again after it, so nothing
// is missed and nothing is delivered twice.
import type { AdminEventNotification, RunEventNotification } from "./generated";
import type { Connection } from "./rpc";

export interface Feed {
  stop: () => void;
}

/** followRun delivers run's events after `after`, in sequence order, until stop or a terminal status. */
export function followRun(conn: Connection, runId: string, after: number, deliver: (ev: RunEventNotification) => void, onError: (e: unknown) => void): Feed {
  let cursor = after;
  let sub = "";
  let stopped = false;
  let ended = false;
  const held = new Map<number, RunEventNotification>();
  const subscribe = () => {
    if (stopped || ended || conn.state !== "open") return;
    conn.api.runsSubscribe({ run_id: runId, after_sequence: cursor }).then((r) => {
      sub = r.subscription_id;
      if (stopped) void conn.api.runsUnsubscribe({ subscription_id: sub }).catch(() => undefined);
    }, onError);
  };
  const offEvent = conn.on("workflow.runs.event", (ev) => {
    if (ev.run_id !== runId || stopped) return;
    held.set(ev.sequence, ev);
    // The server sends in order; hold anything early until the gap fills.
    while (held.has(cursor + 1)) {
      const next = held.get(cursor + 1)!;
      held.delete(cursor + 1);
      cursor = next.sequence;
      if (next.kind === "status" && next.status?.terminal) ended = true;
      deliver(next);
    }
    for (const seq of held.keys()) if (seq <= cursor) held.delete(seq);
  });
  const offLag = conn.on("workflow.runs.lagged", (l) => {
    if (l.run_id === runId && l.subscription_id === sub) subscribe();
  });
  const offOpen = conn.onOpen(subscribe);
  subscribe();
  return {
    stop: () => {
      stopped = true;
      offEvent();
      offLag();
      offOpen();
      if (sub && !ended && conn.state === "open") void conn.api.runsUnsubscribe({ subscription_id: sub }).catch(() => undefined);
    },
  };
}

/** followAdmin delivers admin events appended from now on, across reconnects. */
export function followAdmin(conn: Connection, deliver: (ev: AdminEventNotification) => void, onError: (e: unknown) => void): Feed {
  let cursor: number | undefined;
  let sub = "";
  let stopped = false;
  const subscribe = () => {
    if (stopped || conn.state !== "open") return;
    conn.api.adminEventsSubscribe(cursor === undefined ? {} : { after_sequence: cursor }).then((r) => {
      sub = r.subscription_id;
      if (cursor === undefined) cursor = r.last_sequence;
      if (stopped) void conn.api.adminEventsUnsubscribe({ subscription_id: sub }).catch(() => undefined);
    }, onError);
  };
  const offEvent = conn.on("workflow.admin.event", (ev) => {
    if (stopped || (cursor !== undefined && ev.sequence <= cursor)) return;
    cursor = ev.sequence;
    deliver(ev);
  });
  const offLag = conn.on("workflow.admin.lagged", (l) => {
    if (l.subscription_id === sub) {
      cursor = l.cursor;
      subscribe();
    }
  });
  const offOpen = conn.onOpen(subscribe);
  subscribe();
  return {
    stop: () => {
      stopped = true;
      offEvent();
      offLag();
      offOpen();
      if (sub && conn.state === "open") void conn.api.adminEventsUnsubscribe({ subscription_id: sub }).catch(() => undefined);
    },
  };
}
