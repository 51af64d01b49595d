package run

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/mcpflow/mcpflow/actors/metrics"
	"github.com/mcpflow/mcpflow/actors/session"
	"github.com/mcpflow/mcpflow/actors/store"
)

// What a call's upstream reports while the call runs (session.CallProgress,
// session.CallLog) becomes the run events step_progress and step_log,
// appended to the run's event log between its commits and live to whoever
// follows the run. What is kept is bounded (LiveLimits): a call's progress
// is coalesced, the latest of each interval stored, and the last one
// before the call's end is stored before the step's step_finished (the
// commit that finishes the step appends it first); a step's log messages
// are capped, and one more step_log says how many were dropped past the
// cap. See docs/decisions.md, "Issue 28: progress and logs from upstream".

// LiveLimits bound what a run stores of its calls' progress and logs.
type LiveLimits struct {
	// ProgressInterval: at most one step_progress per call per interval
	// is stored, the latest. Zero: DefaultProgressInterval.
	ProgressInterval time.Duration
	// StepLogs caps the step_log events of one step (all its attempts).
	// Zero: DefaultStepLogs.
	StepLogs int
}

// The defaults of LiveLimits (docs/operations.md, "Limits").
const (
	DefaultProgressInterval = 500 * time.Millisecond
	DefaultStepLogs         = 100
)

func (l LiveLimits) interval() time.Duration {
	if l.ProgressInterval <= 0 {
		return DefaultProgressInterval
	}
	return l.ProgressInterval
}

func (l LiveLimits) stepLogs() int {
	if l.StepLogs <= 0 {
		return DefaultStepLogs
	}
	return l.StepLogs
}

// live holds what the run's calls reported and the run has not stored
// yet: each call's latest progress, and the log messages in order. It
// holds at most one progress and StepLogs (+1) logs per call out.
type live struct {
	calls map[string]*liveCall // by call id
	logs  []store.RunEvent
	timer *time.Timer
	// armed: the timer is set; wanted: it fired while a write was under
	// way, so the flush waits for the write's end.
	armed, wanted bool
}

// liveCall is what live keeps of one call.
type liveCall struct {
	step     store.RunEventStep
	progress *store.RunEvent // the latest, not stored yet
	storedAt time.Time       // when its last progress was taken to be stored
	logs     int             // step_log events kept
	dropped  int             // log messages past the cap
	ended    bool            // its step has its result: what it holds goes with the next write
}

// liveDue: the flush interval passed.
type liveDue struct{}

// liveAppended: a flush of live events was written, or failed.
type liveAppended struct {
	events []store.RunEvent
	err    error
}

// liveCallOf returns what live keeps of the call the correlation id of a
// report names, or nil for a call the run no longer waits for.
func (a *Actor) liveCallOf(corr uint64) *liveCall {
	id, ok := a.byCorr[corr]
	f := a.calls[id]
	if !ok || f == nil || a.stopping || a.exec == nil {
		return nil
	}
	if a.live.calls == nil {
		a.live.calls = map[string]*liveCall{}
	}
	c := a.live.calls[id]
	if c == nil {
		c = &liveCall{step: store.RunEventStep{FrameID: f.call.FrameID, NodeID: f.call.NodeID, CallID: id}}
		a.live.calls[id] = c
	}
	return c
}

// onCallProgress keeps a call's progress, in place of the one before it
// if that was not stored yet.
func (a *Actor) onCallProgress(m session.CallProgress) {
	c := a.liveCallOf(m.CorrelationID)
	if c == nil {
		a.spec.Metrics.LiveEvent(store.RunEventStepProgress, metrics.LiveDropped, 1)
		return
	}
	if c.progress != nil {
		a.spec.Metrics.LiveEvent(store.RunEventStepProgress, metrics.LiveCoalesced, 1)
	}
	p := &store.RunEventProgress{Progress: m.Progress, Message: m.Message}
	if m.Total > 0 {
		p.Total = &m.Total
	}
	step := c.step
	c.progress = &store.RunEvent{Kind: store.RunEventStepProgress, TimestampEpochMs: time.Now().UnixMilli(), Step: &step, Progress: p}
	a.armLive()
}

// onCallLog keeps a call's log message, up to its step's cap.
func (a *Actor) onCallLog(m session.CallLog) {
	c := a.liveCallOf(m.CorrelationID)
	if c == nil || c.logs >= a.spec.Live.stepLogs() {
		if c != nil {
			c.dropped++
		}
		a.spec.Metrics.LiveEvent(store.RunEventStepLog, metrics.LiveDropped, 1)
		return
	}
	c.logs++
	step := c.step
	a.live.logs = append(a.live.logs, store.RunEvent{Kind: store.RunEventStepLog, TimestampEpochMs: time.Now().UnixMilli(), Step: &step,
		Log: &store.RunEventMessage{Level: m.Log.Level, Logger: m.Log.Logger, Data: m.Log.Data, Truncated: m.Log.Truncated}})
	a.armLive()
}

// endLive marks call id's step as having its result: its last progress,
// and the count of the log messages dropped past the cap, go with the
// next write, the commit of its step_finished at the latest.
func (a *Actor) endLive(id string) {
	c := a.live.calls[id]
	if c == nil {
		return
	}
	c.ended = true
	if c.dropped > 0 {
		step := c.step
		a.live.logs = append(a.live.logs, store.RunEvent{Kind: store.RunEventStepLog, TimestampEpochMs: time.Now().UnixMilli(), Step: &step,
			Log: &store.RunEventMessage{Level: "warning", Logger: "mcpflow", Dropped: c.dropped,
				Data: fmt.Appendf(nil, "%q", fmt.Sprintf("%d log messages of this step were dropped past its cap of %d", c.dropped, a.spec.Live.stepLogs()))}})
	}
}

// endAllLive marks every call's step as ended: the run stops.
func (a *Actor) endAllLive() {
	for id := range a.live.calls {
		a.endLive(id)
	}
}

// takeLive returns the live events due now, in the order they are to be
// appended: the log messages, then the progress of each call whose
// interval has passed or whose step has ended. What it returns is no
// longer held.
func (a *Actor) takeLive(now time.Time) []store.RunEvent {
	events := a.live.logs
	a.live.logs = nil
	for id, c := range a.live.calls {
		if c.progress != nil && (c.ended || now.Sub(c.storedAt) >= a.spec.Live.interval()) {
			events = append(events, *c.progress)
			c.progress, c.storedAt = nil, now
		}
		if c.ended {
			delete(a.live.calls, id)
		}
	}
	return events
}

// pendingLive reports whether live holds anything not stored yet.
func (a *Actor) pendingLive() bool {
	if len(a.live.logs) > 0 {
		return true
	}
	for _, c := range a.live.calls {
		if c.progress != nil || c.ended {
			return true
		}
	}
	return false
}

// armLive sets the flush timer, unless it is set or a flush waits for
// the write under way.
func (a *Actor) armLive() {
	if a.live.armed || a.live.wanted {
		return
	}
	a.live.armed = true
	engine, self := a.engine, a.self
	a.live.timer = time.AfterFunc(a.spec.Live.interval(), func() { engine.Send(self, liveDue{}) })
}

// onLiveDue flushes what is due, now or after the write under way.
func (a *Actor) onLiveDue() {
	a.live.armed = false
	if a.writing {
		a.live.wanted = true
		return
	}
	a.flushLive()
}

// flushLive appends the live events due, off the inbox, as the run's one
// write under way: a commit waits for it, so that nothing is appended
// out of order. What is held but not due yet waits for the next timer.
func (a *Actor) flushLive() {
	a.live.wanted = false
	if a.exec == nil || a.stopping || a.halting {
		return
	}
	events := a.takeLive(time.Now())
	if len(events) == 0 {
		if a.pendingLive() {
			a.armLive()
		}
		return
	}
	a.writing = true
	engine, self, timeout, id, st := a.engine, a.self, a.spec.StoreTimeout, a.record.ID, a.spec.Store
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		engine.Send(self, liveAppended{events: events, err: st.AppendRunEvents(ctx, id, events)})
	}()
}

// onLiveAppended goes on after a flush, as after a commit: the results
// that came meanwhile are taken, a halt or a stop taken meanwhile is
// finished, and the execution advances.
func (a *Actor) onLiveAppended(m liveAppended) {
	a.writing = false
	a.liveWritten(m.events, m.err)
	if a.halting {
		a.finishHalt()
		return
	}
	for _, r := range a.results {
		a.onToolResult(r)
	}
	a.results = nil
	a.advance()
	a.afterWrite()
}

// afterWrite flushes what came due during a write, or arms the timer
// for what is held.
func (a *Actor) afterWrite() {
	switch {
	case a.writing:
	case a.live.wanted:
		a.flushLive()
	case a.pendingLive():
		a.armLive()
	}
}

// liveWritten counts live events as stored, or, when their write failed,
// as dropped: a run's progress and logs are not retried (the commit of
// its steps is, see commit.go).
func (a *Actor) liveWritten(events []store.RunEvent, err error) {
	fate := metrics.LiveStored
	if err != nil {
		fate = metrics.LiveDropped
		slog.Warn("the progress and logs of a run's calls were not stored", "run", a.record.ID, "events", len(events), "err", err)
	}
	for _, e := range events {
		a.spec.Metrics.LiveEvent(e.Kind, fate, 1)
	}
}

// stopLive stops the flush timer: the actor stops.
func (a *Actor) stopLive() {
	if a.live.timer != nil {
		a.live.timer.Stop()
	}
}
