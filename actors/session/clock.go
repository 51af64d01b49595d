package session

import "github.com/mcpflow/mcpflow/actors/clock"

// Clock is the time source of a session actor's policy: its backoff,
// reconnect, probe, keepalive and queue timers, and what it compares
// deadlines with. Production uses SystemClock; tests drive a ManualClock.
type Clock = clock.Clock

// Timer is a pending AfterFunc.
type Timer = clock.Timer

// ManualClock is a Clock that moves only when told to (clock.Manual).
type ManualClock = clock.Manual

// SystemClock is the wall clock.
func SystemClock() Clock { return clock.System() }

// NewManualClock returns a manual clock that reads start until advanced.
var NewManualClock = clock.NewManual

// clockOrSystem returns c, or the wall clock when c is nil.
func clockOrSystem(c Clock) Clock {
	if c == nil {
		return SystemClock()
	}
	return c
}
