import { useEffect, useState, type FormEvent } from "react";
import { Connection, wsURL } from "./api/rpc";
import { whoami, type Identity, type Scopes } from "./api/scopes";
import { errorText } from "./hooks";
import { href, SessionContext, tokenKey, useConnState, useRoute, type Session } from "./session";
import { Overview } from "./screens/Overview";
import { Discover } from "./screens/Discover";
import { Workbench } from "./screens/Workbench";
import { Artifacts } from "./screens/Artifacts";
import { Runs } from "./screens/Runs";
import { RunPage } from "./screens/RunPage";
import { Triggers } from "./screens/Triggers";

async function connect(token: string): Promise<{ conn: Connection; me: Identity }> {
  const conn = new Connection(wsURL(), token);
  await conn.open();
  try {
    return { conn, me: await whoami(conn) };
  } catch (e) {
    conn.close();
    throw e;
  }
}

/** tokenRequired asks the console's handler whether the API needs a token (no call to the API: its 401 would show as an error in the browser). */
async function tokenRequired(): Promise<boolean> {
  const r = await fetch(new URL("auth.json", window.location.href.split("#")[0]), { cache: "no-store" });
  if (!r.ok) return true;
  const body = (await r.json()) as { token_required?: unknown };
  return body.token_required !== false;
}

export function App() {
  const [session, setSession] = useState<Session | null>(null);
  const [error, setError] = useState("");
  const [busy, setBusy] = useState(true);
  // undefined until known: the page shows no prompt before it knows one is needed.
  const [needsToken, setNeedsToken] = useState<boolean>();

  const signIn = async (token: string) => {
    setBusy(true);
    setError("");
    try {
      const { conn, me } = await connect(token);
      sessionStorage.setItem(tokenKey, token);
      setSession({
        conn,
        scopes: me.scopes,
        name: me.anonymous ? "no token" : me.name,
        tokenless: token === "",
        signOut: () => {
          conn.close();
          sessionStorage.removeItem(tokenKey);
          setSession(null);
        },
      });
    } catch (e) {
      sessionStorage.removeItem(tokenKey);
      setError(errorText(e));
    } finally {
      setBusy(false);
    }
  };

  useEffect(() => {
    // A server without tokens is connected to at once; one with tokens
    // with this tab's token, or asks for it.
    tokenRequired().then(
      (needed) => {
        setNeedsToken(needed);
        const saved = sessionStorage.getItem(tokenKey);
        if (!needed) void signIn("");
        else if (saved !== null) void signIn(saved);
        else setBusy(false);
      },
      () => {
        setNeedsToken(true);
        setBusy(false);
      },
    );
  }, []);

  if (!session) {
    if (needsToken === false && busy) return <p className="signin muted">Connecting…</p>;
    if (needsToken === undefined) return <p className="signin muted">Connecting…</p>;
    return <SignIn onSubmit={signIn} error={error} busy={busy} tokenless={!needsToken} />;
  }
  return (
    <SessionContext.Provider value={session}>
      <Shell session={session} />
    </SessionContext.Provider>
  );
}

function SignIn({ onSubmit, error, busy, tokenless }: { onSubmit: (t: string) => void; error: string; busy: boolean; tokenless: boolean }) {
  const [token, setToken] = useState("");
  const submit = (e: FormEvent) => {
    e.preventDefault();
    onSubmit(token.trim());
  };
  const alert = error && (
    <p className="error" role="alert">
      {error}
    </p>
  );
  if (tokenless) {
    return (
      <main className="signin">
        <h1>mcpflow console</h1>
        <form onSubmit={submit} aria-label="Connect">
          <p>This server needs no token, but the console could not reach it. Is it still running?</p>
          {alert}
          <div className="form-actions">
            <button type="submit" disabled={busy}>
              {busy ? "Connecting…" : "Try again"}
            </button>
          </div>
        </form>
      </main>
    );
  }
  return (
    <main className="signin">
      <h1>mcpflow console</h1>
      <form onSubmit={submit} aria-label="Sign in">
        <p>This server needs an access token.</p>
        <label htmlFor="token">Access token</label>
        <input id="token" type="password" autoComplete="off" value={token} onChange={(e) => setToken(e.target.value)} aria-describedby="token-help" />
        <p className="help" id="token-help">
          It is kept for this tab only, and sent as a WebSocket subprotocol to this server&apos;s /ws. Ask whoever runs the server for one (docs/access.md).
        </p>
        {alert}
        <div className="form-actions">
          <button type="submit" disabled={busy || token.trim() === ""}>
            {busy ? "Connecting…" : "Connect"}
          </button>
        </div>
      </form>
    </main>
  );
}

const screens = [
  ["overview", "Overview"],
  ["discover", "Discover"],
  ["workbench", "Workbench"],
  ["artifacts", "Artifacts & deployments"],
  ["runs", "Runs"],
  ["triggers", "Triggers"],
] as const;

function Shell({ session }: { session: Session }) {
  const route = useRoute();
  const state = useConnState(session.conn);
  const [screen = "overview", ...rest] = route;
  const granted = (Object.keys(session.scopes) as (keyof Scopes)[]).filter((s) => session.scopes[s]);
  let page;
  switch (screen) {
    case "discover":
      page = <Discover selected={rest[0]} />;
      break;
    case "workbench":
      page = <Workbench workspace={rest[0]} />;
      break;
    case "artifacts":
      page = <Artifacts kind={rest[0]} id={rest[1]} version={rest[2]} />;
      break;
    case "runs":
      page = rest[0] === "status" ? <Runs key={rest[1]} status={rest[1]} /> : rest[0] ? <RunPage key={rest[0]} runId={rest[0]} /> : <Runs />;
      break;
    case "triggers":
      page = <Triggers />;
      break;
    default:
      page = <Overview />;
  }
  return (
    <div className="shell">
      <a className="skip" href="#main">
        Skip to content
      </a>
      <header>
        <span className="brand">mcpflow</span>
        <nav aria-label="Screens">
          {screens.map(([id, name]) => (
            <a key={id} href={href(id)} aria-current={screen === id ? "page" : undefined}>
              {name}
            </a>
          ))}
        </nav>
        <span className={`conn conn-${state}`} role="status" aria-live="polite">
          {state === "open" ? "connected" : state === "connecting" ? "reconnecting…" : "disconnected"}
        </span>
        <span className="scopes" data-scopes={granted.join(" ")}>
          {session.name} · {granted.join(", ") || "no scopes"}
        </span>
        {!session.tokenless && (
          <button type="button" onClick={session.signOut}>
            Sign out
          </button>
        )}
      </header>
      <main id="main" tabIndex={-1}>
        {page}
      </main>
    </div>
  );
}
