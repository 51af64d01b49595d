// What the token may do, as the server says: workflow.access.whoami
// answers the caller's name and scopes. admin grants every other scope
// (docs/access.md). The page draws no control its scopes cannot use; the
// server still judges every call.
import type { Connection } from "./rpc";

export type Scope = "read" | "run" | "author" | "admin";

export interface Scopes {
  read: boolean;
  run: boolean;
  author: boolean;
  admin: boolean;
}

export interface Identity {
  name: string;
  anonymous: boolean;
  scopes: Scopes;
}

/** scopesOf turns whoami's list into what each scope allows. */
export function scopesOf(list: readonly string[]): Scopes {
  const admin = list.includes("admin");
  return { read: admin || list.includes("read"), run: admin || list.includes("run"), author: admin || list.includes("author"), admin };
}

export async function whoami(conn: Connection): Promise<Identity> {
  const r = await conn.api.accessWhoami();
  return { name: r.name, anonymous: r.anonymous, scopes: scopesOf(r.scopes) };
}
