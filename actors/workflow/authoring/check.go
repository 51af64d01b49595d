package authoring

import "github.com/mcpflow/mcpflow/actors/workflow"

// Check decodes a draft document and validates it against the language
// and the capabilities find knows: the parse findings first, then the
// rest. A document that is malformed as a whole answers its parse
// findings alone.
func Check(doc workflow.Object, find workflow.Lookup) (workflow.Draft, []workflow.Diagnostic) {
	draft, diags := workflow.ParseDraft(doc)
	for _, d := range diags {
		if d.Path == "" { // the document itself is malformed
			return draft, diags
		}
	}
	return draft, append(diags, workflow.ValidateDraft(draft, find)...)
}

// Compile checks a draft document as Check does and compiles it when no
// finding is an error. diags are every finding (never nil); plan is nil
// when one of them blocks.
func Compile(doc workflow.Object, find workflow.Lookup) (*workflow.Plan, []workflow.Diagnostic, error) {
	draft, diags := Check(doc, find)
	if diags == nil {
		diags = []workflow.Diagnostic{}
	}
	if len(workflow.Blocking(diags)) > 0 {
		return nil, diags, nil
	}
	plan, err := workflow.Compile(draft)
	if err != nil {
		return nil, nil, invalid("%v", err)
	}
	return &plan, diags, nil
}
