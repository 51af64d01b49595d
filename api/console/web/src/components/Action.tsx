import { useState } from "react";
import type { Method, Methods } from "../api/generated";
import type { Scope } from "../api/scopes";
import { errorText } from "../hooks";
import { useSession } from "../session";
import { CopyAs } from "./Copy";

/**
 * Action is a button that sends one request, with its "Copy as" beside
 * it. It is not drawn at all when the token lacks the scope the method
 * needs: a read token sees no control it cannot use.
 */
export function Action<M extends Method>(props: {
  method: M;
  params: Methods[M]["params"];
  scope: Scope;
  label: string;
  disabled?: boolean;
  confirm?: string;
  className?: string;
  onDone?: (r: Methods[M]["result"]) => void;
  onError?: (e: string) => void;
}) {
  const { conn, scopes } = useSession();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState("");
  if (!scopes[props.scope]) return null;
  const run = async () => {
    if (props.confirm && !window.confirm(props.confirm)) return;
    setBusy(true);
    setError("");
    try {
      const r = await conn.call(props.method, props.params);
      props.onDone?.(r);
    } catch (e) {
      const t = errorText(e);
      setError(t);
      props.onError?.(t);
    } finally {
      setBusy(false);
    }
  };
  return (
    <span className="action">
      <button type="button" className={props.className} disabled={busy || props.disabled} onClick={run}>
        {busy ? `${props.label}…` : props.label}
      </button>
      <CopyAs method={props.method} params={props.params} />
      {error && (
        <span className="error" role="alert">
          {error}
        </span>
      )}
    </span>
  );
}
