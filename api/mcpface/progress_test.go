package mcpface

import (
	"testing"

	"github.com/matryer/is"
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
