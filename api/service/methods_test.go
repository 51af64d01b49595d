package service_test

import (
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/api/protocol"
	"github.com/mcpflow/mcpflow/api/service"
)

// TestRunStartsAreBoundedByTheTable: the workflow.runs.start entry carries
// the server-wide bound the edge applies (MaxConcurrentRuns, its default
// when unset), and so does workflow.runs.passthrough's, which starts runs
// too; no other method has one.
func TestRunStartsAreBoundedByTheTable(t *testing.T) {
	is := is.New(t)
	start := (&service.Service{MaxConcurrentRuns: 3}).Methods()[protocol.MethodRunsStart]
	is.Equal(start.MaxConcurrent, 3)
	is.Equal(start.Busy, "runs starting")
	methods := (&service.Service{}).Methods()
	is.Equal(methods[protocol.MethodRunsStart].MaxConcurrent, service.DefaultMaxConcurrentRuns)
	is.Equal(methods[protocol.MethodRunsPassthrough].MaxConcurrent, service.DefaultMaxConcurrentRuns)
	for name, m := range methods {
		if name != protocol.MethodRunsStart && name != protocol.MethodRunsPassthrough {
			is.Equal(m.MaxConcurrent, 0) // only the methods that start runs are bounded
		}
	}
}
