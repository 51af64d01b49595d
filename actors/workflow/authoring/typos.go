package authoring

import (
	"fmt"
	"slices"

	"github.com/mcpflow/mcpflow/actors/catalog"
	"github.com/mcpflow/mcpflow/actors/suggest"
	"github.com/mcpflow/mcpflow/actors/workflow"
)

// TypoWarnings are the input_path_typo warnings of an edit from before to
// after: each field the edit added to the workflow's input or state
// schema because a step's input binding read it (input.X, state.X), when
// X is near a field the schema declared before or the field the binding
// fills, so that it reads as a typo of it (--in url=input.ur adds "ur").
// They belong to the edit's answer: validation does not repeat them.
func TypoWarnings(before, after workflow.Object) []workflow.Diagnostic {
	old, _ := workflow.ParseDraft(before)
	next, _ := workflow.ParseDraft(after)
	var out []workflow.Diagnostic
	for _, root := range []struct {
		name      string
		old, next workflow.Object
	}{
		{workflow.RootInput, old.InputSchema, next.InputSchema},
		{workflow.RootState, old.StateSchema, next.StateSchema},
	} {
		declared := catalog.Properties(root.old)
		for _, field := range catalog.Properties(root.next) {
			if slices.Contains(declared, field) {
				continue
			}
			out = append(out, typosOf(next, root.name, field, declared)...)
		}
	}
	return out
}

// typosOf warns of each input binding of draft that reads root.field (a
// field just added) when field is near a declared one or the binding's
// target.
func typosOf(draft workflow.Draft, root, field string, declared []string) []workflow.Diagnostic {
	var out []workflow.Diagnostic
	for _, id := range keysInOrder(draft.Steps) {
		for i, b := range draft.Steps[id].Input {
			if b.Path == nil || b.Path.Root != root || len(b.Path.Parts) == 0 || b.Path.Parts[0] != field {
				continue
			}
			candidates := slices.Clone(declared)
			if len(b.Target.Parts) > 0 {
				candidates = append(candidates, b.Target.Parts[0])
			}
			near, ok := suggest.Nearest(field, candidates)
			if !ok || near == field {
				continue
			}
			out = append(out, workflow.Warning("input_path_typo", fmt.Sprintf("steps.%s.input[%d]", id, i), id,
				fmt.Sprintf("%s.%s added the field %q to the workflow's %s schema; did you mean %s.%s?", root, field, field, root, root, near)))
		}
	}
	return out
}
