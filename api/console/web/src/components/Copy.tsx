import { useState } from "react";
import { copiesOf } from "../api/copy";
import type { Method, Methods } from "../api/generated";

/** useCopy copies a text to the clipboard and remembers which (by name) was copied last. */
function useCopy(): { copied: string; copy: (what: string, text: string) => void } {
  const [copied, setCopied] = useState("");
  const copy = (what: string, text: string) => {
    navigator.clipboard?.writeText(text).then(
      () => setCopied(what),
      () => setCopied(""),
    );
  };
  return { copied, copy };
}

/** CopyAs offers an action as its mcpflow command, its JSON-RPC frame and a curl POST. */
export function CopyAs<M extends Method>({ method, params, label }: { method: M; params: Methods[M]["params"]; label?: string }) {
  const { copied, copy } = useCopy();
  const c = copiesOf(method, params);
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

/** CopyValue shows a value (a URL, a secret shown once) with a button that copies it. */
export function CopyValue({ value, label }: { value: string; label: string }) {
  const { copied, copy } = useCopy();
  return (
    <span className="copy-row copy-value">
      <code data-copy-value={label}>{value}</code>
      <button type="button" onClick={() => copy(label, value)}>
        {copied === label ? "Copied" : `Copy ${label}`}
      </button>
    </span>
  );
}
