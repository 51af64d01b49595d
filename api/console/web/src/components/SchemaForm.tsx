import { useId, useState } from "react";
import type { JsonValue } from "../api/generated";
import { initialValue, jsonReasons, setIn, type Field } from "../lib/schemaForm";

type Props = { field: Field; value: JsonValue | undefined; onChange: (v: JsonValue | undefined) => void; required?: boolean; label?: string };

/** SchemaForm edits a value of a schema's field: inputs for what a form can express, a JSON editor (with the reason) for the rest. */
export function SchemaForm(props: Props) {
  const reasons = jsonReasons(props.field);
  return (
    <div className="schema-form">
      {reasons.length > 0 && (
        <p className="note" role="note">
          Edited as JSON: {reasons.join("; ")}.
        </p>
      )}
      <FieldInput {...props} required={props.required ?? true} label={props.label ?? props.field.title} />
    </div>
  );
}

function FieldInput({ field, value, onChange, required, label }: Props & { required: boolean; label: string }) {
  const id = useId();
  const help = field.description ? <small className="help">{field.description}</small> : null;
  const nullToggle = field.nullable ? (
    <label className="inline">
      <input type="checkbox" checked={value === null} onChange={(e) => onChange(e.target.checked ? null : initialValue(field, true))} /> null
    </label>
  ) : null;
  const title = (
    <label htmlFor={id}>
      {label}
      {required ? <span className="req" aria-label="required"> *</span> : null}
    </label>
  );
  if (value === null && field.nullable) {
    return (
      <div className="field">
        {title} {nullToggle} {help}
      </div>
    );
  }
  switch (field.kind) {
    case "string":
      return (
        <div className="field">
          {title}
          <input id={id} type="text" value={typeof value === "string" ? value : ""} onChange={(e) => onChange(e.target.value === "" && !required ? undefined : e.target.value)} />
          {nullToggle}
          {help}
        </div>
      );
    case "number":
      return (
        <div className="field">
          {title}
          <input
            id={id}
            type="number"
            step={field.integer ? 1 : "any"}
            min={field.minimum}
            max={field.maximum}
            value={typeof value === "number" ? value : ""}
            onChange={(e) => onChange(e.target.value === "" ? undefined : Number(e.target.value))}
          />
          {nullToggle}
          {help}
        </div>
      );
    case "boolean":
      return (
        <div className="field">
          <label className="inline">
            <input id={id} type="checkbox" checked={value === true} onChange={(e) => onChange(e.target.checked)} /> {label}
            {required ? <span className="req" aria-label="required"> *</span> : null}
          </label>
          {nullToggle}
          {help}
        </div>
      );
    case "enum": {
      const idx = field.options.findIndex((o) => JSON.stringify(o) === JSON.stringify(value));
      return (
        <div className="field">
          {title}
          <select id={id} value={idx} onChange={(e) => onChange(Number(e.target.value) < 0 ? undefined : field.options[Number(e.target.value)])}>
            <option value={-1}>—</option>
            {field.options.map((o, i) => (
              <option key={i} value={i}>
                {typeof o === "string" ? o : JSON.stringify(o)}
              </option>
            ))}
          </select>
          {nullToggle}
          {help}
        </div>
      );
    }
    case "object": {
      const obj = typeof value === "object" && value !== null && !Array.isArray(value) ? value : undefined;
      if (!required && obj === undefined) {
        return (
          <div className="field">
            <span>{label}</span>{" "}
            <button type="button" onClick={() => onChange(initialValue(field, true))}>
              Add {label}
            </button>
            {help}
          </div>
        );
      }
      return (
        <fieldset className="field object">
          <legend>{label}</legend>
          {help}
          {field.fields.map((p) => (
            <FieldInput key={p.name} field={p.field} required={p.required} label={p.name} value={obj?.[p.name]} onChange={(v) => onChange(setIn(obj, p.name, v))} />
          ))}
          {field.open && <JsonInput label={`${label} (free keys)`} value={obj ?? {}} onChange={onChange} />}
          {nullToggle}
        </fieldset>
      );
    }
    case "array": {
      const list = Array.isArray(value) ? value : [];
      return (
        <fieldset className="field array">
          <legend>{label}</legend>
          {help}
          {list.map((item, i) => (
            <div key={i} className="array-item">
              <FieldInput field={field.item} required label={`${label} ${i + 1}`} value={item} onChange={(v) => onChange(list.map((x, j) => (j === i ? (v ?? null) : x)))} />
              <button type="button" aria-label={`Remove ${label} ${i + 1}`} onClick={() => onChange(list.filter((_, j) => j !== i))}>
                Remove
              </button>
            </div>
          ))}
          <button type="button" onClick={() => onChange([...list, initialValue(field.item, true) ?? null])}>
            Add {label} item
          </button>
          {nullToggle}
        </fieldset>
      );
    }
    case "json":
      return (
        <div className="field">
          <JsonInput label={label} value={value} onChange={onChange} />
          {help}
        </div>
      );
  }
}

/** JsonInput edits any JSON value as text; it reports a value only while the text parses. */
export function JsonInput({ label, value, onChange, rows = 4 }: { label: string; value: JsonValue | undefined; onChange: (v: JsonValue | undefined) => void; rows?: number }) {
  const id = useId();
  const [text, setText] = useState(value === undefined ? "" : JSON.stringify(value, null, 2));
  const [bad, setBad] = useState("");
  return (
    <div className="field">
      <label htmlFor={id}>{label} (JSON)</label>
      <textarea
        id={id}
        rows={rows}
        spellCheck={false}
        value={text}
        aria-invalid={bad !== ""}
        onChange={(e) => {
          setText(e.target.value);
          if (e.target.value.trim() === "") {
            setBad("");
            onChange(undefined);
            return;
          }
          try {
            onChange(JSON.parse(e.target.value) as JsonValue);
            setBad("");
          } catch (err) {
            setBad((err as Error).message);
          }
        }}
      />
      {bad && <small className="error">not JSON yet: {bad}</small>}
    </div>
  );
}

/** FieldsView shows a schema as its fields: name, type, required, description. */
export function FieldsView({ field, name = "" }: { field: Field; name?: string }) {
  const type = (f: Field): string => {
    const base = f.kind === "array" ? `array of ${type(f.item)}` : f.kind === "enum" ? f.options.map((o) => JSON.stringify(o)).join(" | ") : f.kind === "number" ? (f.integer ? "integer" : "number") : f.kind === "json" ? "any JSON" : f.kind;
    return f.nullable ? `${base} or null` : base;
  };
  if (field.kind !== "object") return <p>{name ? `${name}: ` : ""}{type(field)}</p>;
  if (field.fields.length === 0) return <p className="muted">no fields{field.open ? " (any keys)" : ""}</p>;
  return (
    <table className="fields">
      <thead>
        <tr>
          <th scope="col">field</th>
          <th scope="col">type</th>
          <th scope="col">required</th>
          <th scope="col">description</th>
        </tr>
      </thead>
      <tbody>
        {field.fields.map((p) => (
          <tr key={p.name}>
            <td>
              <code>{name ? `${name}.${p.name}` : p.name}</code>
            </td>
            <td>{p.field.kind === "object" ? <FieldsView field={p.field} name={p.name} /> : type(p.field)}</td>
            <td>{p.required ? "yes" : "no"}</td>
            <td>{p.field.description ?? ""}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
