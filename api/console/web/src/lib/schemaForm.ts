// The form model of a JSON Schema: what the schema form draws, and the
// checks it makes before a value is sent. Pure functions, no React.
import type { JsonValue } from "../api/generated";

export type Schema = { [key: string]: JsonValue };

interface Common {
  title: string;
  description?: string;
  nullable: boolean;
  default?: JsonValue;
}

export type Field =
  | (Common & { kind: "string"; format?: string; minLength?: number })
  | (Common & { kind: "number"; integer: boolean; minimum?: number; maximum?: number })
  | (Common & { kind: "boolean" })
  | (Common & { kind: "enum"; options: JsonValue[] })
  | (Common & { kind: "object"; fields: Property[]; open: boolean })
  | (Common & { kind: "array"; item: Field })
  | (Common & { kind: "json"; reason: string });

export interface Property {
  name: string;
  required: boolean;
  field: Field;
}

const maxDepth = 16;

function isObject(v: JsonValue | undefined): v is { [key: string]: JsonValue } {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** resolveRef follows a local reference (#/$defs/X, #/definitions/X, any JSON pointer). */
export function resolveRef(root: Schema, ref: string): Schema | undefined {
  if (!ref.startsWith("#")) return undefined;
  const parts = ref.slice(1).split("/").filter((p) => p !== "").map((p) => p.replace(/~1/g, "/").replace(/~0/g, "~"));
  let cur: JsonValue = root;
  for (const p of parts) {
    if (!isObject(cur) || !(p in cur)) return undefined;
    cur = cur[p];
  }
  return isObject(cur) ? cur : undefined;
}

/** buildField turns a schema into the field that edits its values. */
export function buildField(schema: JsonValue | undefined, root: Schema, title = "value", depth = 0, seen: string[] = []): Field {
  const base = { title, nullable: false };
  if (schema === true || schema === undefined) return { ...base, kind: "json", reason: "the schema admits any value" };
  if (!isObject(schema)) return { ...base, kind: "json", reason: "the schema is not an object" };
  const common: Common = {
    title: typeof schema.title === "string" ? schema.title : title,
    description: typeof schema.description === "string" ? schema.description : undefined,
    nullable: false,
    default: schema.default,
  };
  if (depth > maxDepth) return { ...common, kind: "json", reason: "the schema nests deeper than the form draws" };
  if (typeof schema.$ref === "string") {
    const ref = schema.$ref;
    if (seen.includes(ref)) return { ...common, kind: "json", reason: `the schema refers to itself (${ref})` };
    const target = resolveRef(root, ref);
    if (!target) return { ...common, kind: "json", reason: `the reference ${ref} is not local or not found` };
    const f = buildField(target, root, common.title, depth + 1, [...seen, ref]);
    return common.description && !f.description ? { ...f, description: common.description } : f;
  }
  for (const key of ["anyOf", "oneOf"] as const) {
    const alts = schema[key];
    if (Array.isArray(alts)) {
      const nonNull = alts.filter((a) => !(isObject(a) && a.type === "null"));
      if (nonNull.length === 1 && nonNull.length < alts.length) {
        const f = buildField(nonNull[0], root, common.title, depth + 1, seen);
        return { ...f, nullable: true, description: f.description ?? common.description, default: common.default ?? f.default };
      }
      return { ...common, kind: "json", reason: `${key} of ${nonNull.length} alternatives cannot be drawn as one form` };
    }
  }
  if (Array.isArray(schema.allOf)) return { ...common, kind: "json", reason: "allOf is not drawn as a form" };
  if (Array.isArray(schema.enum)) return { ...common, kind: "enum", options: schema.enum };
  if ("const" in schema) return { ...common, kind: "enum", options: [schema.const] };
  let type = schema.type;
  if (Array.isArray(type)) {
    const nonNull = type.filter((t) => t !== "null");
    if (nonNull.length !== 1) return { ...common, kind: "json", reason: `a value of ${nonNull.length} types cannot be drawn as one form` };
    common.nullable = nonNull.length < type.length;
    type = nonNull[0];
  }
  if (type === undefined && isObject(schema.properties)) type = "object";
  switch (type) {
    case "string":
      return { ...common, kind: "string", format: typeof schema.format === "string" ? schema.format : undefined, minLength: typeof schema.minLength === "number" ? schema.minLength : undefined };
    case "integer":
    case "number":
      return { ...common, kind: "number", integer: type === "integer", minimum: typeof schema.minimum === "number" ? schema.minimum : undefined, maximum: typeof schema.maximum === "number" ? schema.maximum : undefined };
    case "boolean":
      return { ...common, kind: "boolean" };
    case "array":
      if (Array.isArray(schema.prefixItems)) return { ...common, kind: "json", reason: "tuples (prefixItems) are not drawn as a form" };
      return { ...common, kind: "array", item: buildField(schema.items ?? true, root, "item", depth + 1, seen) };
    case "object": {
      const props = isObject(schema.properties) ? schema.properties : {};
      const required = Array.isArray(schema.required) ? schema.required.filter((r): r is string => typeof r === "string") : [];
      const names = Object.keys(props);
      if (names.length === 0 && isObject(schema.additionalProperties)) {
        return { ...common, kind: "json", reason: "an object of free keys is edited as JSON" };
      }
      if (isObject(schema.patternProperties)) return { ...common, kind: "json", reason: "patternProperties are not drawn as a form" };
      return {
        ...common,
        kind: "object",
        open: schema.additionalProperties !== false && names.length === 0,
        fields: names.map((name) => ({ name, required: required.includes(name), field: buildField(props[name], root, name, depth + 1, seen) })),
      };
    }
    case "null":
      return { ...common, kind: "enum", options: [null] };
  }
  return { ...common, kind: "json", reason: "the schema names no type" };
}

/** buildForm is the field of a whole schema, its own root for references. */
export function buildForm(schema: JsonValue | undefined): Field {
  return buildField(schema, isObject(schema) ? schema : {}, "value");
}

/** jsonReasons lists why parts of a form fall back to JSON editors. */
export function jsonReasons(field: Field, path = ""): string[] {
  switch (field.kind) {
    case "json":
      return [`${path || "the value"}: ${field.reason}`];
    case "object":
      return field.fields.flatMap((p) => jsonReasons(p.field, path ? `${path}.${p.name}` : p.name));
    case "array":
      return jsonReasons(field.item, `${path}[]`);
    default:
      return [];
  }
}

/** initialValue is a field's starting value: its default, or an empty object for objects. */
export function initialValue(field: Field, required = true): JsonValue | undefined {
  if (field.default !== undefined) return field.default;
  switch (field.kind) {
    case "object": {
      if (!required) return undefined;
      const out: { [key: string]: JsonValue } = {};
      for (const p of field.fields) {
        const v = initialValue(p.field, p.required);
        if (v !== undefined) out[p.name] = v;
      }
      return out;
    }
    case "array":
      return required ? [] : undefined;
    case "boolean":
      return required ? false : undefined;
    case "enum":
      return required && field.options.length === 1 ? field.options[0] : undefined;
    default:
      return undefined;
  }
}

export interface FormError {
  path: string;
  message: string;
}

function typeOf(v: JsonValue): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  return typeof v;
}

/** validate checks a value against its field; an empty list means it may be sent. */
export function validate(field: Field, value: JsonValue | undefined, path = "", required = true): FormError[] {
  const at = path || "value";
  if (value === undefined) return required ? [{ path: at, message: "is required" }] : [];
  if (value === null) return field.nullable || (field.kind === "enum" && field.options.includes(null)) || field.kind === "json" ? [] : [{ path: at, message: "may not be null" }];
  switch (field.kind) {
    case "string":
      if (typeof value !== "string") return [{ path: at, message: `expected a string, got ${typeOf(value)}` }];
      if (field.minLength !== undefined && value.length < field.minLength) return [{ path: at, message: `needs at least ${field.minLength} characters` }];
      return [];
    case "number":
      if (typeof value !== "number" || Number.isNaN(value)) return [{ path: at, message: `expected a number, got ${typeOf(value)}` }];
      if (field.integer && !Number.isInteger(value)) return [{ path: at, message: "expected a whole number" }];
      if (field.minimum !== undefined && value < field.minimum) return [{ path: at, message: `must be ≥ ${field.minimum}` }];
      if (field.maximum !== undefined && value > field.maximum) return [{ path: at, message: `must be ≤ ${field.maximum}` }];
      return [];
    case "boolean":
      return typeof value === "boolean" ? [] : [{ path: at, message: `expected true or false, got ${typeOf(value)}` }];
    case "enum":
      return field.options.some((o) => JSON.stringify(o) === JSON.stringify(value)) ? [] : [{ path: at, message: `must be one of ${field.options.map((o) => JSON.stringify(o)).join(", ")}` }];
    case "array":
      if (!Array.isArray(value)) return [{ path: at, message: `expected an array, got ${typeOf(value)}` }];
      return value.flatMap((item, i) => validate(field.item, item, `${at}[${i}]`));
    case "object": {
      if (!isObject(value)) return [{ path: at, message: `expected an object, got ${typeOf(value)}` }];
      return field.fields.flatMap((p) => validate(p.field, value[p.name], path ? `${path}.${p.name}` : p.name, p.required));
    }
    case "json":
      return [];
  }
}

/** setIn returns obj with value at key, or without key when value is undefined. */
export function setIn(obj: JsonValue | undefined, key: string, value: JsonValue | undefined): { [key: string]: JsonValue } {
  const out: { [key: string]: JsonValue } = isObject(obj) ? { ...obj } : {};
  if (value === undefined) delete out[key];
  else out[key] = value;
  return out;
}
