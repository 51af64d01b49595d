package service_test

import (
	"slices"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/api/protocol"
	"github.com/mcpflow/mcpflow/api/service"
)

// TestRunStartsAreBoundedByTheTable: the workflow.runs.start entry carries
// the server-wide bound the edge applies (MaxConcurrentRuns, its default
// when unset), and so do the other methods that start a run (rerun,
// fork and passthrough), each its own; no other method has one.
func TestRunStartsAreBoundedByTheTable(t *testing.T) {
	is := is.New(t)
	start := (&service.Service{MaxConcurrentRuns: 3}).Methods()[protocol.MethodRunsStart]
	is.Equal(start.MaxConcurrent, 3)
	is.Equal(start.Busy, "runs starting")
	methods := (&service.Service{}).Methods()
	starting := []string{protocol.MethodRunsStart, protocol.MethodRunsRerun, protocol.MethodRunsFork, protocol.MethodRunsPassthrough}
	for name, m := range methods {
		if slices.Contains(starting, name) {
			is.Equal(m.MaxConcurrent, service.DefaultMaxConcurrentRuns)
		} else {
			is.Equal(m.MaxConcurrent, 0) // only the methods that start a run are bounded
		}
	}
}
