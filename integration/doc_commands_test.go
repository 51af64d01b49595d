package integration

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/matryer/is"
)

// docCommand is a command a document shows, as `$ INVOCATION ARGS` in an
// indented block, and the lines it shows it printing.
type docCommand struct {
	args   []string
	output []string
}

// docCommands reads the commands of section heading (a "## " heading) of
// file (from the module root) that run invocation, each with the
// indented lines after it (blank lines within a block kept, trailing
// ones dropped). Commands of other tools end the lines of the one before.
func docCommands(t *testing.T, file, heading, invocation string) []docCommand {
	t.Helper()
	is := is.New(t)
	data, err := os.ReadFile(filepath.Join("..", file))
	is.NoErr(err)
	_, section, ok := strings.Cut(string(data), "\n## "+heading+"\n")
	is.True(ok) // the document has the section
	section, _, _ = strings.Cut(section, "\n## ")
	var cmds []docCommand
	in := false
	for _, line := range strings.Split(section, "\n") {
		text, indented := strings.CutPrefix(line, "    ")
		switch {
		case indented && strings.HasPrefix(text, "$ "+invocation+" "):
			cmds, in = append(cmds, docCommand{args: strings.Fields(strings.TrimPrefix(text, "$ "+invocation+" "))}), true
		case indented && strings.HasPrefix(text, "$ "):
			in = false // another tool's command
		case in && (indented || line == ""):
			cmds[len(cmds)-1].output = append(cmds[len(cmds)-1].output, text)
		default:
			in = false
		}
	}
	for i := range cmds {
		for n := len(cmds[i].output); n > 0 && cmds[i].output[n-1] == ""; n-- {
			cmds[i].output = cmds[i].output[:n-1]
		}
	}
	return cmds
}
