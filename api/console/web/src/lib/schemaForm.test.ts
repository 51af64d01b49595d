import { describe, expect, it } from "vitest";
import { buildForm, initialValue, jsonReasons, validate, type Field } from "./schemaForm";

const schema = {
  type: "object",
  required: ["name", "size"],
  properties: {
    name: { type: "string", minLength: 1, description: "who" },
    size: { $ref: "#/$defs/Size" },
    note: { anyOf: [{ type: "string" }, { type: "null" }] },
    tags: { type: "array", items: { type: "string" } },
    address: { type: "object", required: ["city"], properties: { city: { type: "string" }, zip: { type: ["integer", "null"] } } },
    extra: { type: "object", additionalProperties: { type: "string" } },
    either: { oneOf: [{ type: "string" }, { type: "number" }] },
  },
  $defs: { Size: { enum: ["s", "m", "l"] } },
};

function prop(f: Field, name: string): Field {
  if (f.kind !== "object") throw new Error("not an object");
  return f.fields.find((p) => p.name === name)!.field;
}

describe("buildForm", () => {
  const f = buildForm(schema);
  it("draws objects with required fields", () => {
    expect(f.kind).toBe("object");
    if (f.kind !== "object") return;
    expect(f.fields.map((p) => [p.name, p.required])).toEqual([
      ["name", true], ["size", true], ["note", false], ["tags", false], ["address", false], ["extra", false], ["either", false],
    ]);
    expect(prop(f, "name")).toMatchObject({ kind: "string", minLength: 1, description: "who" });
  });
  it("follows local $ref to an enum", () => {
    expect(prop(f, "size")).toMatchObject({ kind: "enum", options: ["s", "m", "l"] });
  });
  it("reads nullable from anyOf with null and from a type list", () => {
    expect(prop(f, "note")).toMatchObject({ kind: "string", nullable: true });
    expect(prop(prop(f, "address"), "zip")).toMatchObject({ kind: "number", integer: true, nullable: true });
  });
  it("draws arrays of items and nested objects", () => {
    expect(prop(f, "tags")).toMatchObject({ kind: "array", item: { kind: "string" } });
    expect(prop(f, "address").kind).toBe("object");
  });
  it("falls back to JSON, and says why, where a form cannot express the schema", () => {
    expect(prop(f, "extra")).toMatchObject({ kind: "json" });
    expect(prop(f, "either")).toMatchObject({ kind: "json", reason: "oneOf of 2 alternatives cannot be drawn as one form" });
    expect(jsonReasons(f)).toEqual(["extra: an object of free keys is edited as JSON", "either: oneOf of 2 alternatives cannot be drawn as one form"]);
  });
  it("stops at a reference to itself", () => {
    const tree = { $defs: { Node: { type: "object", properties: { child: { $ref: "#/$defs/Node" } } } }, $ref: "#/$defs/Node" };
    const t = buildForm(tree);
    expect(prop(t, "child")).toMatchObject({ kind: "json", reason: "the schema refers to itself (#/$defs/Node)" });
  });
  it("refuses a reference it cannot resolve", () => {
    expect(buildForm({ $ref: "https://example.com/s.json" })).toMatchObject({ kind: "json" });
  });
});

describe("initialValue and validate", () => {
  const f = buildForm(schema);
  it("starts with required parts only", () => {
    expect(initialValue(f)).toEqual({});
    expect(initialValue(buildForm({ type: "object", required: ["ok"], properties: { ok: { type: "boolean" }, n: { type: "integer", default: 3 } } }))).toEqual({ ok: false, n: 3 });
  });
  it("reports what is missing or wrong, with its path", () => {
    expect(validate(f, {})).toEqual([
      { path: "name", message: "is required" },
      { path: "size", message: "is required" },
    ]);
    expect(validate(f, { name: "", size: "xl", address: { city: 1 }, note: null })).toEqual([
      { path: "name", message: "needs at least 1 characters" },
      { path: "size", message: 'must be one of "s", "m", "l"' },
      { path: "address.city", message: "expected a string, got number" },
    ]);
    expect(validate(f, { name: "a", size: "m", tags: ["x", 2] })).toEqual([{ path: "tags[1]", message: "expected a string, got number" }]);
  });
  it("accepts a good value", () => {
    expect(validate(f, { name: "a", size: "m", address: { city: "Oslo", zip: null }, extra: { k: "v" } })).toEqual([]);
  });
  it("checks integer bounds", () => {
    const n = buildForm({ type: "integer", minimum: 1, maximum: 5 });
    expect(validate(n, 0)).toEqual([{ path: "value", message: "must be ≥ 1" }]);
    expect(validate(n, 2.5)).toEqual([{ path: "value", message: "expected a whole number" }]);
    expect(validate(n, 5)).toEqual([]);
  });
});
