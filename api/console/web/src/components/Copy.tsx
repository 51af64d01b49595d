import { useState } from "react";
import { copiesOf } from "../api/copy";
import type { Method, Methods } from "../api/generated";

/** CopyAs offers an action as its mcpflow command, its JSON-RPC frame and a curl POST. */
export function CopyAs<M extends Method>({ method, params, label }: { method: M; params: Methods[M]["params"]; label?: string }) {
  const [copied, setCopied] = useState("");
  const c = copiesOf(method, params);
  const copy = (what: string, text: string) => {
    navigator.clipboard?.writeText(text).then(
      () => setCopied(what),
      () => setCopied(""),
    );
  };
  const rows: [string, string][] = [...(c.cli ? [["CLI", c.cli] as [string, string]] : []), ["JSON-RPC", c.jsonrpc], ["curl", c.curl]];
  return (
    <details className="copy">
      <summary aria-label={`Copy ${method} as CLI or JSON-RPC`}>{label ? `Copy ${label} as…` : "Copy as…"}</summary>
      <div className="copy-body">
        {rows.map(([what, text]) => (
          <div key={what} className="copy-row">
            <button type="button" onClick={() => copy(what, text)}>
              {copied === what ? "Copied" : `Copy ${what}`}
            </button>
            <code data-copy={what}>{text}</code>
          </div>
        ))}
      </div>
    </details>
  );
}
