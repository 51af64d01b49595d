package session_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anthdm/hollywood/actor"
	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/reply"
	"github.com/mcpflow/mcpflow/actors/session"
	"github.com/mcpflow/mcpflow/fakes"
)

// openKeepalive opens a session to an in-memory upstream behind a
// blackhole, pinged every 10 s of the manual clock; each ping waits 2 s
// for its answer, and the failures-th missed in a row ends the session.
// The session is opened by a catalog listing, which proves nothing
// (Policy.ProvedItself), and the tests end it within its ProvedAfter: its
// death is a failed start, reopened after the backoff. The logs are captured.
func openKeepalive(t *testing.T, failures int) (*harness, *session.ManualClock, *blackhole, *fakes.Logs) {
	t.Helper()
	return openKeepaliveWith(t, failures, nil)
}

// openKeepaliveWith is openKeepalive with the process's starvation as
// stalls tells (nil: none measured).
func openKeepaliveWith(t *testing.T, failures int, stalls session.StallMeter) (*harness, *session.ManualClock, *blackhole, *fakes.Logs) {
	t.Helper()
	is := is.New(t)
	is.Helper()
	logs := fakes.CaptureLogs(t)
	// Longer than the pings the tests miss take.
	opts, clock := clocked(session.Policy{MinBackoff: time.Second, MaxBackoff: time.Second, ProvedAfter: time.Hour, ProbeInterval: time.Minute})
	opts.KeepAlive, opts.PingTimeout, opts.PingFailures = 10*time.Second, 2*time.Second, failures
	opts.Stalls = stalls
	hole := &blackhole{inner: fakes.NewInMemory(nil)}
	h := spawnWithParent(t, hole, opts)
	listed := expect[session.CatalogListed](h.engine)
	h.engine.Send(h.pid, session.ListCatalog{Deadline: clock.Now().Add(time.Minute), Reply: listed.To()})
	is.NoErr(await(t, listed).Error.Err())
	h.waitState(t, session.StateConnecting)
	h.waitState(t, session.StateOpen)
	return h, clock, hole, logs
}

// nextPing lets the keepalive interval pass, so that a ping goes out.
func nextPing(t *testing.T, clock *session.ManualClock) {
	t.Helper()
	awaitTimer(t, clock, 10*time.Second)
	clock.Advance(10 * time.Second)
}

// missPing sends a ping the upstream never answers, and lets its timeout
// pass.
func missPing(t *testing.T, clock *session.ManualClock) {
	t.Helper()
	nextPing(t, clock)
	awaitTimer(t, clock, 2*time.Second)
	clock.Advance(2 * time.Second)
}

// missedPings waits until the actor has handled the last ping (it arms
// the next one) and returns its count of pings missed in a row.
func missedPings(t *testing.T, h *harness, clock *session.ManualClock) int {
	t.Helper()
	is := is.New(t)
	is.Helper()
	awaitTimer(t, clock, 10*time.Second)
	st := liveStatus(t, h.engine, h.pid)
	is.Equal(st.State, session.StateOpen) // the session is kept
	return st.MissedPings
}

func TestMissedPingsEndTheSessionOnlyAtTheLimitInARow(t *testing.T) {
	is := is.New(t)
	h, clock, hole, logs := openKeepalive(t, 3)

	hole.on.Store(true) // the upstream is slow: nothing it is sent is answered
	w := sendAt(h.engine, h.pid, clock, "counter", nil, time.Hour)
	missPing(t, clock)
	is.Equal(missedPings(t, h, clock), 1)
	missPing(t, clock)
	is.Equal(missedPings(t, h, clock), 2)
	is.True(pending(w)) // two missed pings keep the session and its calls

	hole.on.Store(false) // an answer starts the count again
	nextPing(t, clock)
	is.Equal(missedPings(t, h, clock), 0)

	hole.on.Store(true)
	missPing(t, clock)
	missPing(t, clock)
	is.Equal(missedPings(t, h, clock), 2)
	is.True(pending(w))
	missPing(t, clock) // the third in a row ends it
	st := h.waitState(t, session.StateBackoff)
	is.True(strings.Contains(st.LastError, "keepalive failed: 3 pings in a row got no answer within 2s"))
	is.Equal(st.MissedPings, 0) // the count belongs to the session that ended
	r := await(t, w)
	is.True(errors.Is(r.Error.Err(), session.ErrSessionLost)) // the hung session's call is answered at once

	missed := logs.Lines("keepalive ping missed")
	is.Equal(len(missed), 5)
	is.True(strings.Contains(missed[4], "missed=3 limit=3 timeout=2s"))
	is.Equal(len(logs.Lines("session closed")), 0) // a missed ping is not a closed session
}

func TestAPingThatFindsTheSessionClosedEndsItAtOnce(t *testing.T) {
	is := is.New(t)
	h, clock, hole, logs := openKeepalive(t, 3)

	hole.broken.Store(true) // the connection is gone: every write fails
	nextPing(t, clock)
	// The ping fails on the transport; the session ends before or with
	// the second try (go-sdk closes a connection it cannot write to).
	st := h.waitState(t, session.StateBackoff) // without waiting for the ping timeout
	// Whichever sees the broken transport first says why: the ping
	// ("broken pipe"), or the session's reader ("closed pipe", "EOF").
	if !strings.Contains(st.LastError, "pipe") && !strings.Contains(st.LastError, "EOF") {
		t.Logf("last error: %s", st.LastError)
		is.Fail() // the session ended for its broken transport
	}
	is.True(!strings.Contains(st.LastError, "no answer")) // not for a ping that timed out
	is.True(len(logs.Lines("keepalive found the session closed")) <= 1)
	is.Equal(len(logs.Lines("keepalive ping missed")), 0) // a closed session is no missed ping

	hole.broken.Store(false)
	awaitTimer(t, clock, time.Second)
	clock.Advance(time.Second)
	h.waitState(t, session.StateConnecting)
	is.Equal(h.waitState(t, session.StateOpen).Generation, int64(2))
}

func TestAnAnsweredCallForgivesMissedPings(t *testing.T) {
	is := is.New(t)
	h, clock, hole, _ := openKeepalive(t, 3)

	hole.on.Store(true)
	missPing(t, clock)
	missPing(t, clock)
	is.Equal(missedPings(t, h, clock), 2)

	hole.on.Store(false) // the peer is slow to ping, but it answers calls
	r := await(t, sendAt(h.engine, h.pid, clock, "counter", nil, time.Minute))
	is.NoErr(r.Error.Err())
	st := liveStatus(t, h.engine, h.pid)
	is.Equal(st.MissedPings, 0) // the answer proves the session alive
	is.Equal(st.Generation, int64(1))
}

func TestTheKeepalivesOfSessionsOpenedTogetherAreSpread(t *testing.T) {
	is := is.New(t)
	const sessions, keepAlive = 16, 10 * time.Second
	opts, clock := clocked(session.Policy{MinBackoff: time.Second, MaxBackoff: time.Second, Jitter: 0.5, ProvedAfter: time.Minute, ProbeInterval: time.Minute})
	opts.KeepAlive, opts.PingTimeout = keepAlive, time.Second
	e := newEngine(t)
	factory := fakes.NewInMemory(nil)
	var waits []*reply.Expected[session.ToolResult]
	for i := range sessions {
		conn := testConn()
		conn.ID = fmt.Sprintf("spread%02d.default", i)
		pid := e.Spawn(session.New(conn, factory, opts), "session", actor.WithID(conn.ID))
		t.Cleanup(func() { stop(t, e, pid) })
		waits = append(waits, sendAt(e, pid, clock, "counter", nil, time.Minute)) // opens the session
	}
	for _, w := range waits {
		is.NoErr(await(t, w).Error.Err())
	}
	// Every session armed its first ping, all at the same instant of the
	// clock: each waits between half the interval and all of it.
	var pings []time.Duration
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	is.True(clock.WaitFor(ctx, func(p []time.Duration) bool {
		pings = slices.DeleteFunc(p, func(d time.Duration) bool { return d > keepAlive })
		return len(pings) == sessions
	}))
	is.True(pings[0] >= keepAlive/2)                 // never sooner than the jitter allows
	is.True(slices.Max(pings) <= keepAlive)          // never later than the interval
	is.True(len(slices.Compact(pings)) > sessions/2) // spread, not one instant
	is.True(pings[len(pings)-1]-pings[0] >= keepAlive/10)
}

// starvation is a StallMeter the test sets.
type starvation struct{ stalled atomic.Int64 }

func (s *starvation) Stalled() time.Duration { return time.Duration(s.stalled.Load()) }

func TestAPingMissedWhileMcpflowWasStarvedIsNotCounted(t *testing.T) {
	is := is.New(t)
	starved := &starvation{}
	h, clock, hole, logs := openKeepaliveWith(t, 2, starved)

	hole.on.Store(true) // no answer comes
	nextPing(t, clock)
	awaitTimer(t, clock, 2*time.Second)
	starved.stalled.Add(int64(time.Second)) // mcpflow could not run for half the wait
	clock.Advance(2 * time.Second)
	awaitTimer(t, clock, time.Second) // the wait is extended by what mcpflow lost
	clock.Advance(time.Second)
	is.Equal(missedPings(t, h, clock), 0) // inconclusive: not counted
	is.Equal(len(logs.Lines("keepalive ping inconclusive: mcpflow was starved of CPU")), 1)

	missPing(t, clock) // a miss with mcpflow running counts
	is.Equal(missedPings(t, h, clock), 1)
	missPing(t, clock)
	h.waitState(t, session.StateBackoff) // and a hung upstream is still found
}
