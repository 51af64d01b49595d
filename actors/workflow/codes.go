package workflow

// CodeInfo says what one validation diagnostic code means and how to
// repair what it reports. It is what `mcpflow explain CODE` prints;
// docs/language.md's validation table lists the same codes.
type CodeInfo struct {
	Code string `json:"code"`
	// Severity is "error" (it blocks Compile) or "warning".
	Severity string `json:"severity"`
	Means    string `json:"means"`
	Repair   string `json:"repair"`
}

// DiagnosticCodes are the codes ValidateDraft and ValidatePlan report,
// one entry each.
var DiagnosticCodes = []CodeInfo{
	{"draft_invalid", "error",
		"The document does not parse, or a step is incomplete: no name; a step without exactly one kind key; an interrupt without kind; a subgraph without workflow; a foreach's alias, mode, item_error or concurrency limits; a binding without exactly one source; retry below 0 or timeout not above 0; an unknown condition operator; choose without clauses; match without cases.",
		"Read the diagnostic's path and message: it names the field. Fix that field, or run 'mcpflow schema draft' to see the document's shape."},
	{"unknown_start", "error",
		"The draft's start names no step.",
		"Set start to one of the step ids."},
	{"invalid_node_id", "error",
		"A step is named __end__, the name routes use for the end of the workflow.",
		"Rename the step."},
	{"duplicate_node_id", "error",
		"A step id is one a decision step generates for its own nodes (<id>_2, <id>_3…).",
		"Rename the step, or the decision step whose generated ids it takes."},
	{"unknown_edge_source", "error",
		"A route leaves from a step that does not exist.",
		"Remove the route, or name an existing step."},
	{"unknown_edge_destination", "error",
		"A route goes to a step that does not exist (and is not __end__).",
		"Route it to an existing step or to __end__."},
	{"duplicate_edge", "error",
		"One outcome of a step is routed twice.",
		"Keep one route per outcome."},
	{"undeclared_edge_outcome", "error",
		"A route is of an outcome the step does not declare.",
		"Route one of the step's outcomes ('mcpflow caps inspect NAME' lists a capability's), or remove the route."},
	{"missing_outcome_edge", "error",
		"A reachable step declares an outcome that has no route.",
		"Route that outcome to a step, or to __end__."},
	{"undeclared_workflow_outcome", "error",
		"An end step's outcome, or the ok of a route to __end__, is not among the workflow's outcomes.",
		"Add the outcome to the workflow's outcomes, or end with one of them."},
	{"unknown_node_def", "error",
		"A use step names a capability the server does not know.",
		"Check the name with 'mcpflow caps list'; refresh the source's catalog if the tool is new."},
	{"invalid_node_input_field", "error",
		"An input binding targets a field the capability's input schema does not declare, or two targets overlap.",
		"Target a field of the capability's input schema ('mcpflow caps inspect NAME'), once."},
	{"required_input_unbound", "error",
		"A use step leaves a field its capability's input schema requires unbound: the call would be refused at run time.",
		"Bind it: mcpflow draft bind WORKSPACE STEP input.FIELD FIELD (or --in FIELD=PATH, --value FIELD=VALUE on the step)."},
	{"input_path_typo", "warning",
		"An edit's binding read a path (input.X or state.X) that the workflow did not declare, so the edit added the field X to the workflow's input or state schema; X is close to a field that exists or to the field it fills, so it may be a typo.",
		"If it is one, bind the path the diagnostic suggests and remove the field from the schema (mcpflow draft contract set); if not, ignore it."},
	{"invalid_node_output_field", "error",
		"An output binding reads a field the capability's output schema does not declare.",
		"Read a field of the capability's output schema ('mcpflow caps inspect NAME')."},
	{"invalid_source_path", "error",
		"A binding reads a path that is malformed or not declared (input.* by the input schema, state.* by the state schema), or an expression is over its limits.",
		"Declare the field in the input or state schema, or read one that is declared."},
	{"invalid_destination_path", "error",
		"A binding writes outside the state schema, or two writes overlap.",
		"Declare the field in the state schema, or write to one that is declared, once."},
	{"invalid_workflow_output_field", "error",
		"A workflow output binding targets a field the output schema does not declare, or reads an undeclared path.",
		"Declare the field in the output schema, and read a declared state or input path."},
	{"empty_condition_args", "error",
		"An and or or condition has no args, or a not has no arg.",
		"Give the condition its arguments."},
	{"invalid_condition_path", "error",
		"A condition reads a malformed or undeclared path, or an operator lacks an operand.",
		"Read a declared path; give each comparison a left and a right operand."},
	{"invalid_foreach_source", "error",
		"A foreach's over is not a path to a declared list.",
		"Point over at an array field of the input or state schema."},
	{"invalid_foreach_collect_destination", "error",
		"A foreach's item_error collect_to is not a declared state path.",
		"Declare the state field that collects the failed items, as an array."},
	{"invalid_foreach_return", "error",
		"A foreach body routes to __end__, or reaches an end step, instead of routing back to its foreach.",
		"Route the body's last step back to the foreach step."},
	{"invalid_interrupt_source", "error",
		"An interrupt's request binding is malformed or reads an undeclared path.",
		"Read declared paths in the request bindings."},
	{"invalid_interrupt_destination", "error",
		"An interrupt's resume binding writes outside the state schema.",
		"Declare the state field the resume payload is written to."},
	{"unsupported_step_type", "error",
		"A plan node has a type the runtime does not know.",
		"Use one of node, condition, foreach, join, end, interrupt, subgraph ('mcpflow schema plan')."},
	{"unreachable_step", SeverityWarning,
		"No route from the start reaches this step. It does not block compiling.",
		"Route to it from a reachable step, or remove it."},
	{"error_routed_to_end", SeverityWarning,
		"A step's error outcome (a tool's error result) routes straight to __end__: the run would complete with outcome ok, the failure and its reason only in the trace. It does not block compiling.",
		"Route error to a wf.std.runtime_error step that fails the run with the reason (input message, and details from context.prior_error), or to an end step with an outcome of its own."},
	{"loop_without_exit", "error",
		"From a reachable step no route ever reaches an end: the run could never finish.",
		"Route some outcome on the loop to a step that reaches __end__."},
}

// repairs maps each diagnostic code to its repair, for the hint every
// diagnostic carries.
var repairs = func() map[string]string {
	m := make(map[string]string, len(DiagnosticCodes))
	for _, c := range DiagnosticCodes {
		m[c.Code] = c.Repair
	}
	return m
}()
