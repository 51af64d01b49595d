package cli

import (
	"os"
	"path/filepath"
	"strings"
)

// goRunInvocation is how a user of a clone runs mcpflow without
// installing it, as the README does.
const goRunInvocation = "go run ./cmd/mcpflow"

// invocation is how to run this mcpflow again in a suggested next command:
// "go run ./cmd/mcpflow" when go run built it (its executable lies in the
// go command's build cache, a go-build directory), else "mcpflow". A
// suggestion a go run user copies then works: mcpflow is not on their
// PATH.
func invocation() string {
	exe, err := os.Executable()
	if err != nil {
		return "mcpflow"
	}
	for _, dir := range strings.Split(filepath.ToSlash(filepath.Dir(exe)), "/") {
		if strings.HasPrefix(dir, "go-build") {
			return goRunInvocation
		}
	}
	return "mcpflow"
}
