// What the token may do. The page asks the server, never guesses: for
// each scope it sends one request of that scope with empty params. A
// token with the scope gets -32602 (the params are checked after the
// scope, so nothing runs); one without gets -32003. Either way nothing
// happens on the server.
import type { Connection } from "./rpc";
import { RpcError } from "./rpc";

export type Scope = "read" | "run" | "author" | "admin";

export interface Scopes {
  read: boolean;
  run: boolean;
  author: boolean;
  admin: boolean;
}

/** probes are, per scope, a method that needs exactly it. */
export const probes: Record<Scope, string> = {
  read: "workflow.runs.inspect",
  run: "workflow.runs.cancel",
  author: "workflow.deployments.delete",
  admin: "workflow.admin.auth.delete",
};

async function has(conn: Connection, method: string): Promise<boolean> {
  try {
    await conn.raw(method, {});
    return true; // a method that accepted empty params: the scope is there
  } catch (e) {
    if (e instanceof RpcError && e.code === -32003) return false;
    if (e instanceof RpcError && e.code === -32602) return true;
    throw e;
  }
}

export async function probeScopes(conn: Connection): Promise<Scopes> {
  const [read, run, author, admin] = await Promise.all((["read", "run", "author", "admin"] as Scope[]).map((s) => has(conn, probes[s])));
  return { read, run, author, admin };
}
