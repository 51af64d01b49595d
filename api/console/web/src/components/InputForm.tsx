import { useMemo, useState } from "react";
import type { JsonValue } from "../api/generated";
import { buildForm, initialValue, validate, type Field, type FormError } from "../lib/schemaForm";
import { JsonInput, SchemaForm } from "./SchemaForm";

type Obj = { [key: string]: JsonValue };

export interface InputFormState {
  field: Field;
  value: JsonValue | undefined;
  setValue: (v: JsonValue | undefined) => void;
  problems: FormError[];
  /** the value as an object payload ({} when it is not one) */
  payload: Obj;
}

/** useInputForm holds the value of a form drawn from schema, and what is wrong with it. */
export function useInputForm(schema: JsonValue | undefined): InputFormState {
  const field = useMemo(() => buildForm(schema), [schema]);
  const [value, setValue] = useState<JsonValue | undefined>(() => initialValue(field) ?? {});
  const problems = validate(field, value);
  const payload = (typeof value === "object" && value !== null && !Array.isArray(value) ? value : {}) as Obj;
  return { field, value, setValue, problems, payload };
}

function hasRequired(f: Field): boolean {
  return f.kind === "object" && f.fields.some((p) => p.required);
}

/**
 * InputForm is the one form of an input: the playground's call, a
 * deployment's Start a run. It is drawn from the schema (required fields
 * marked *), with the whole value as JSON on demand; what stops the value
 * from being sent is listed under it.
 */
export function InputForm({ form, label, name }: { form: InputFormState; label: string; name: string }) {
  const [asJson, setAsJson] = useState(false);
  return (
    <div className="input-form" data-form={name}>
      <label className="inline json-toggle">
        <input type="checkbox" checked={asJson} onChange={(e) => setAsJson(e.target.checked)} /> Edit as JSON
      </label>
      {hasRequired(form.field) && <small className="help">Inputs marked <span className="req">*</span> are required.</small>}
      {asJson ? <JsonInput label={label} value={form.value} onChange={form.setValue} rows={8} /> : <SchemaForm field={form.field} value={form.value} onChange={form.setValue} label={label} />}
      {form.problems.length > 0 && (
        <ul className="problems" aria-label={`${name} problems`}>
          {form.problems.map((p) => (
            <li key={p.path}>
              {p.path} {p.message}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
