package protocol

import "github.com/mcpflow/mcpflow/actors/workflow"

// DependencyCodes say what each code of a DependencyDiag means and how to
// repair what it reports: the diagnostics of deployment validation, of a
// source's diagnosis, of a registry apply's auth check and of a direct
// capability call. `mcpflow explain CODE` prints them, with
// workflow.DiagnosticCodes; a test in api/service holds them to the codes
// the service raises.
var DependencyCodes = []workflow.CodeInfo{
	{Code: "platform_binding_forbidden", Severity: "error",
		Means:  "A deployment binds a platform source (wf.std, wf.recipes, wf.source) to another source; platform sources cannot be rebound.",
		Repair: "Remove the binding: platform sources resolve to themselves."},
	{Code: "binding_missing", Severity: "error",
		Means:  "The artifact requires a logical source the deployment does not bind.",
		Repair: "Bind it to a configured connection: mcpflow deploy --artifact ID --bind LOGICAL=CONCRETE."},
	{Code: "source_missing", Severity: "error",
		Means:  "A binding names a connection that is not configured.",
		Repair: "Bind to a connection 'mcpflow sources list' shows, or add it (mcpflow registry add, then apply)."},
	{Code: "source_disabled", Severity: "error",
		Means:  "A binding names a connection that is disabled.",
		Repair: "Enable it (mcpflow registry enable SOURCE, then apply), or bind another."},
	{Code: "catalog_missing", Severity: "warning",
		Means:  "The bound connection has no catalog yet, so its capabilities cannot be checked.",
		Repair: "Let its session list its tools (mcpflow sources diagnose SOURCE says why it has not), then validate again."},
	{Code: "capability_missing", Severity: "error",
		Means:  "The bound connection has no tool of the name the artifact requires.",
		Repair: "Refresh its catalog if the tool is new, or bind a connection that has it."},
	{Code: "schema_changed", Severity: "error",
		Means:  "A required tool's input or output schema differs from the one the artifact was saved against (an error under drift_policy block, a warning under warn).",
		Repair: "Save a new artifact version against the current catalog, or set the deployment's drift_policy to warn or allow."},
	{Code: "source_unreachable", Severity: "error",
		Means:  "A live check could not list the bound connection's tools: its server did not answer.",
		Repair: "Check the connection's server and its status (mcpflow status, mcpflow sources diagnose SOURCE)."},
	{Code: "source_transport_missing", Severity: "error",
		Means:  "The source has no transport configured: neither a command (stdio) nor a URL (http).",
		Repair: "Give its config or registry entry a transport (mcpflow registry update SOURCE FILE)."},
	{Code: "auth_not_found", Severity: "error",
		Means:  "The source names an auth_ref whose auth record does not exist.",
		Repair: "Save the record (mcpflow auth save AUTH_REF --scheme SCHEME --payload-file FILE), or clear the source's auth_ref."},
	{Code: "auth_scheme_not_supported", Severity: "error",
		Means:  "The source's auth record has a scheme its transport does not take (http: bearer, headers, oauth_refresh_token; stdio: env).",
		Repair: "Save an auth record of a scheme the transport takes."},
	{Code: "auth_invalid", Severity: "error",
		Means:  "The source's auth record lacks what its scheme needs (a token, headers, env values), or holds a control character.",
		Repair: "Save the record again with the payload its scheme needs (mcpflow auth save --help lists them)."},
	{Code: "auth_unreadable", Severity: "error",
		Means:  "The source's auth record could not be read from the store.",
		Repair: "Check the store and its secrets key (mcpflow store, mcpflow secrets)."},
	{Code: "capability_call_failed", Severity: "error",
		Means:  "A direct capability call (workflow.capabilities.call) failed: the tool or its source answered an error.",
		Repair: "Check the payload and the source (mcpflow sources diagnose SOURCE), then call again; inside a workflow, read the run's trace."},
	{Code: "capability_call_unfinished", Severity: "warning",
		Means:  "A direct call of a wrapper capability started a run that had not finished when the call answered (still running, or interrupted).",
		Repair: "Follow the run: mcpflow runs watch RUN."},
}
