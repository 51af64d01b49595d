package records

import "strings"

// ScaffoldTitle is the title a workflow gets when none is given: its id
// or name in words, "Counter Workflow" for counter_workflow. The CLI's
// workflow new and draft save and the console's Create workflow and Save
// artifact all get it from the server (create_from_capability,
// create_artifact), so that one capability scaffolds to the same artifact
// whichever face made it (issue 29).
func ScaffoldTitle(id string) string {
	words := strings.FieldsFunc(id, func(r rune) bool { return r == '_' || r == '-' || r == '.' })
	for i, w := range words {
		words[i] = strings.ToUpper(w[:1]) + w[1:]
	}
	return strings.Join(words, " ")
}
