package schedules

import (
	"time"

	"github.com/mcpflow/mcpflow/actors/store"
)

// Late is how long after its fire time a tick is still on time: one fired
// later was missed (the scheduler was down or behind) and is caught up
// if it is within the catch-up window.
const Late = 5 * time.Second

// MaxTicks bounds the ticks one plan walks through, and MaxDue the ticks
// it fires: past either, the rest are left for the next plan, at once.
const (
	MaxTicks = 100_000
	MaxDue   = 100
)

// Plan is what a schedule is to do at a wake.
type Plan struct {
	// Due are the ticks to fire now, in order.
	Due []time.Time
	// Missed counts the ticks fired late or not at all because nothing
	// fired them on time; Skipped those of them beyond the catch-up
	// window, which are not fired.
	Missed, Skipped int64
	// Last is the last tick the plan dealt with (zero if none).
	Last time.Time
	// Next is when the next tick falls due (zero if never).
	Next time.Time
}

// PlanAt plans schedule sc at now: the ticks after the last one dealt
// with (or after it became active) whose fire time has come. Of those
// fired more than Late after their fire time, the ones within the
// catch-up window are fired once each, in order, and the rest skipped.
func PlanAt(sc store.Schedule, spec Spec, now time.Time) Plan {
	from := max(sc.State.LastTickMs, sc.ActiveSinceMs)
	window := max(time.Duration(sc.CatchupWindowSeconds)*time.Second, Late)
	var p Plan
	tick := spec.Next(time.UnixMilli(from))
	for n := 0; !tick.IsZero() && n < MaxTicks && len(p.Due) < MaxDue; n++ {
		at := spec.FireAt(sc.ID, tick)
		if at.After(now) {
			p.Next = at
			return p
		}
		switch late := now.Sub(at); {
		case late > window:
			p.Missed++
			p.Skipped++
		case late > Late:
			p.Missed++
			p.Due = append(p.Due, tick)
		default:
			p.Due = append(p.Due, tick)
		}
		p.Last = tick
		tick = spec.Next(tick)
	}
	if !tick.IsZero() {
		p.Next = now // more ticks than one plan walks or fires: plan again at once
	}
	return p
}
