package authoring

import (
	"sort"

	"github.com/mcpflow/mcpflow/actors/workflow"
)

// Summary is the graph facts of a draft document.
type Summary struct {
	Name, Start any // as the document holds them; nil when missing
	StepCount   int
	RouteCount  int      // the routes of every step, counted one by one
	Steps       []string // the step ids, sorted
}

// Summarize reads the graph facts of a draft document, which may be
// invalid: missing parts read as nil or zero.
func Summarize(doc workflow.Object) Summary {
	steps, _ := doc["steps"].(map[string]any)
	routes, _ := doc["routes"].(map[string]any)
	ids := make([]string, 0, len(steps))
	for id := range steps {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	count := 0
	for _, r := range routes {
		if m, ok := r.(map[string]any); ok {
			count += len(m)
		}
	}
	return Summary{Name: doc["name"], Start: doc["start"], StepCount: len(ids), RouteCount: count, Steps: ids}
}
