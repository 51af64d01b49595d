package service_test

import (
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/api/protocol"
	"github.com/mcpflow/mcpflow/api/service"
)

// TestRunStartsAreBoundedByTheTable: the workflow.runs.start entry carries
// the server-wide bound the edge applies (MaxConcurrentRuns, its default
// when unset); no other method has one.
func TestRunStartsAreBoundedByTheTable(t *testing.T) {
	is := is.New(t)
	start := (&service.Service{MaxConcurrentRuns: 3}).Methods()[protocol.MethodRunsStart]
	is.Equal(start.MaxConcurrent, 3)
	is.Equal(start.Busy, "runs starting")
	methods := (&service.Service{}).Methods()
	is.Equal(methods[protocol.MethodRunsStart].MaxConcurrent, service.DefaultMaxConcurrentRuns)
	for name, m := range methods {
		if name != protocol.MethodRunsStart {
			is.Equal(m.MaxConcurrent, 0) // only runs.start is bounded
		}
	}
}
