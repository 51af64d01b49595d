import { useCallback, useEffect, useRef, useState } from "react";
import { RpcError } from "./api/rpc";

export function errorText(e: unknown): string {
  if (e instanceof RpcError) return `${e.detail} (${e.code})`;
  return e instanceof Error ? e.message : String(e);
}

/** useLoad runs load now and whenever deps change; reload runs it again (after an event or an action). */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): { data?: T; error?: string; reload: () => void; loading: boolean } {
  const [state, setState] = useState<{ data?: T; error?: string; loading: boolean }>({ loading: true });
  const gen = useRef(0);
  const run = useCallback(() => {
    const g = ++gen.current;
    setState((s) => ({ ...s, loading: true }));
    load().then(
      (data) => g === gen.current && setState({ data, loading: false }),
      (e) => g === gen.current && setState({ error: errorText(e), loading: false }),
    );
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, deps);
  useEffect(run, [run]);
  return { ...state, reload: run };
}
