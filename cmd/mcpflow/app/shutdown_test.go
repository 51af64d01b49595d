package app

import (
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/supervisor"
)

// The default budget leaves the finish its second, the sessions their
// CloseTimeout and KillGrace before it, and the drain the rest, halting a
// second before the sessions' stage.
func TestAStopPlanGivesEachStageItsOwnShareOfTheBudget(t *testing.T) {
	is := is.New(t)
	now := time.Date(2026, 12, 7, 3, 0, 0, 0, time.UTC)
	closeTimeout := 3 * time.Second
	plan := planStop(now, now.Add(DefaultShutdownTimeout), closeTimeout)
	is.Equal(plan.finished, now.Add(DefaultShutdownTimeout))
	is.Equal(plan.sessions, plan.finished.Add(-finishReserve))
	is.Equal(plan.drained, plan.sessions.Add(-(closeTimeout + supervisor.KillGrace)))
	is.Equal(plan.drainUntil, plan.drained.Add(-haltReserve))
	is.Equal(plan.drainUntil.Sub(now), 4*time.Second) // 10 s - 1 s - (3 s + 1 s) - 1 s
}

// A budget shorter than the shares gives the last stages theirs first;
// no deadline falls before the stop began.
func TestAStopPlanOnAShortBudgetKeepsTheLastStagesShares(t *testing.T) {
	is := is.New(t)
	now := time.Date(2026, 12, 7, 3, 0, 0, 0, time.UTC)
	plan := planStop(now, now.Add(2*time.Second), 3*time.Second)
	is.Equal(plan.finished, now.Add(2*time.Second))
	is.Equal(plan.sessions, now.Add(time.Second)) // the finish keeps its second
	is.Equal(plan.drained, now)                   // the sessions take the rest
	is.Equal(plan.drainUntil, now)                // and the drain gets nothing
}
