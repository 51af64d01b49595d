// The signed-in tab: its connection, what its token may do, and the
// current route. The token lives in sessionStorage only: this tab, until
// it closes.
import { createContext, useContext, useEffect, useState } from "react";
import type { Connection, ConnState } from "./api/rpc";
import type { Scopes } from "./api/scopes";

export interface Session {
  conn: Connection;
  scopes: Scopes;
  /** the token's name (never the token), or "no token" */
  name: string;
  /** connected without a token: the server needs none */
  tokenless: boolean;
  signOut: () => void;
}

export const SessionContext = createContext<Session | null>(null);

export function useSession(): Session {
  const s = useContext(SessionContext);
  if (!s) throw new Error("useSession outside a signed-in page");
  return s;
}

export const tokenKey = "mcpflow.console.token";

export function useConnState(conn: Connection): ConnState {
  const [s, setS] = useState(conn.state);
  useEffect(() => conn.onState(setS), [conn]);
  return s;
}

/** useRoute is the hash route, split at slashes: #/runs/run_1 → ["runs", "run_1"]. */
export function useRoute(): string[] {
  const read = () => window.location.hash.replace(/^#\/?/, "").split("/").filter(Boolean).map(decodeURIComponent);
  const [r, setR] = useState(read);
  useEffect(() => {
    const on = () => setR(read());
    window.addEventListener("hashchange", on);
    return () => window.removeEventListener("hashchange", on);
  }, []);
  return r;
}

export function go(...parts: string[]) {
  window.location.hash = "#/" + parts.map(encodeURIComponent).join("/");
}

export function href(...parts: string[]): string {
  return "#/" + parts.map(encodeURIComponent).join("/");
}
