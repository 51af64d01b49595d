package mcpface

import (
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/api/protocol"
)

// TestProgressGrowsWithEveryNotification checks the value MCP requires to
// grow: finished steps count one each, what comes between two a growing
// fraction.
func TestProgressGrowsWithEveryNotification(t *testing.T) {
	is := is.New(t)
	p := &progress{}
	last := -1.0
	for _, finish := range []bool{false, true, false, false, true, true} {
		if finish {
			p.finished, p.since = p.finished+1, 0
		}
		v := p.next()
		is.True(v > last)
		is.True(v < float64(p.finished+1))
		last = v
	}
}

// TestAStepsUpstreamProgressIsReportedWithItsCounts checks that a
// step_progress event is a progress message with the upstream's progress,
// total and message, named by its step and capability, and that a
// step_log is none.
func TestAStepsUpstreamProgressIsReportedWithItsCounts(t *testing.T) {
	is := is.New(t)
	p := &progress{}
	step := &protocol.RunEventStep{FrameID: "root", NodeID: "long", Capability: "everything.default.trigger-long-running-operation"}
	msg, ok := p.message(protocol.RunEvent{Kind: "step_started", Step: step})
	is.True(ok)
	is.Equal(msg, "long: everything.default.trigger-long-running-operation → started")
	total := 5.0
	msg, ok = p.message(protocol.RunEvent{Kind: "step_progress", Step: &protocol.RunEventStep{FrameID: "root", NodeID: "long"},
		Progress: &protocol.RunEventProgress{Progress: 3, Total: &total, Message: "copying"}})
	is.True(ok)
	is.Equal(msg, "long: everything.default.trigger-long-running-operation → 3/5 copying") // the upstream's counts and words
	msg, ok = p.message(protocol.RunEvent{Kind: "step_progress", Step: &protocol.RunEventStep{FrameID: "root", NodeID: "long"},
		Progress: &protocol.RunEventProgress{Progress: 0.5}})
	is.True(ok)
	is.Equal(msg, "long: everything.default.trigger-long-running-operation → 0.5") // without a total
	_, ok = p.message(protocol.RunEvent{Kind: "step_log", Step: step, Log: &protocol.RunEventLog{Level: "info"}})
	is.True(!ok) // a log is no progress
	is.Equal(p.finished, 0)
}
