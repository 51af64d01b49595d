// Package contract embeds the workflow API manifest and checks requests and results against it.
//
// The manifest (workflow-api.manifest.json, copied from the reference system) lists every
// JSON-RPC method with its by-name params and its result as JSON Schemas. [Load] turns each
// method's param list into one object schema (unknown keys rejected) and compiles it, with
// the result schema, through the workflows' own JSON Schema package (actors/workflow/schema,
// on github.com/santhosh-tekuri/jsonschema), so one library serves the contract and the
// workflows. Every default in the manifest must match its schema, or Load fails. Checks then
// cost one validation.
//
// When a check fails, the error is a *[ValidationError] naming the offending path and a short
// reason, such as "params.trace_range.limit: must be <= 100", ready for a -32602 message.
//
// The package knows nothing about transports or handlers; it only answers "does this JSON
// match the contract?".
package contract
