package cli

import (
	"strings"

	"github.com/spf13/cobra"
)

// rootExample is the root's example: the first steps.
const rootExample = `  mcpflow serve &
  mcpflow workflow new --from-capability demo.default.counter
  mcpflow run counter_workflow.default --follow`

// groupExample is a group's example: the first line of each of its
// subcommands' examples.
func groupExample(subs []*cobra.Command) string {
	var lines []string
	for _, sub := range subs {
		if first, _, _ := strings.Cut(sub.Example, "\n"); first != "" {
			lines = append(lines, first)
		}
	}
	return strings.Join(lines, "\n")
}
