//go:build !linux

package reap

import (
	"fmt"
	"os"
)

// Supported reports whether this platform runs the reaper.
const Supported = false

// Main refuses to run: the reaper needs Linux's child subreaper.
func Main([]string) int {
	fmt.Fprintln(os.Stderr, "mcpflow reap: needs Linux (PR_SET_CHILD_SUBREAPER)")
	return ExitUsage
}
