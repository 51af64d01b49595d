package supervisor_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/anthdm/hollywood/actor"
	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/catalog"
	"github.com/mcpflow/mcpflow/actors/guard"
	"github.com/mcpflow/mcpflow/actors/reply"
	"github.com/mcpflow/mcpflow/actors/session"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/supervisor"
	"github.com/mcpflow/mcpflow/fakes"
	"github.com/mcpflow/mcpflow/fakes/poll"
)

func TestCallToUnknownOrDisabledConnectionFailsAtOnce(t *testing.T) {
	rec := fakes.NewRecording(fakes.NewInMemory(nil))
	s := start(t, rec, testOptions())
	for _, id := range []string{"fake.nowhere", "fake.off"} {
		t.Run(id, func(t *testing.T) {
			is := is.New(t)
			began := time.Now()
			r := s.call(t, id, "counter", nil)
			is.True(r.Error.Err() != nil)
			is.True(strings.Contains(r.Error.Err().Error(), `"`+id+`"`)) // names the connection
			is.True(time.Since(began) < time.Second)
		})
	}
	is := is.New(t)
	is.Equal(rec.SessionsCreated(), 0) // nothing was opened for them
}

func TestRefreshOfUnknownConnectionFails(t *testing.T) {
	is := is.New(t)
	s := start(t, fakes.NewInMemory(nil), testOptions())
	_, err := s.handle.RefreshCatalog(ctx(t), "fake.nowhere")
	is.True(err != nil)
	_, err = s.store.GetCatalog(ctx(t), "fake.nowhere")
	is.True(errors.Is(err, store.ErrNotFound))
}

func TestCallsAreRoutedToOneSessionPerConnection(t *testing.T) {
	is := is.New(t)
	rec := fakes.NewRecording(fakes.NewInMemory(nil))
	s := start(t, rec, testOptions())

	is.Equal(s.mustCall(t, "fake.one", "counter", nil)["count"], 1.0)
	is.Equal(s.mustCall(t, "fake.one", "counter", nil)["count"], 2.0)
	is.Equal(s.mustCall(t, "fake.two", "counter", nil)["count"], 1.0) // its own upstream
	is.Equal(rec.SessionsCreated(), 2)
	var routed []string
	for _, c := range rec.ToolCalls() {
		routed = append(routed, c.Connection)
	}
	is.Equal(routed, []string{"fake.one", "fake.one", "fake.two"})
}

func TestRefreshCatalogStoresTheSnapshotAndReportsTheSessionOpen(t *testing.T) {
	is := is.New(t)
	s := start(t, fakes.NewInMemory(nil), testOptions())

	snap, err := s.handle.RefreshCatalog(ctx(t), "fake.one")
	is.NoErr(err)
	is.Equal(snap.ConnectionID, "fake.one")
	is.Equal(len(snap.Tools), 7)

	stored, err := s.store.GetCatalog(ctx(t), "fake.one")
	is.NoErr(err)
	is.Equal(toolNames(stored), []string{"counter", "crash", "echo", "fail", "idle", "overlap", "sleep"})
	is.Equal(stored.FetchedAtEpochMs, snap.FetchedAtEpochMs)

	statuses, err := s.handle.Statuses(ctx(t))
	is.NoErr(err)
	is.Equal(len(statuses), 3) // every configured connection, in order
	is.Equal(statuses[0].Connection, "fake.one")
	is.Equal(statuses[0].State, session.StateOpen)
	is.Equal(statuses[0].SessionsOpened, 1)
	is.Equal(statuses[1].Connection, "fake.two")
	is.Equal(statuses[1].State, session.StateIdle) // never used
	is.Equal(statuses[2].Connection, "fake.off")
	is.Equal(statuses[2].State, session.StateClosed) // disabled
}

func TestChangedToolsAreStoredWithoutARefresh(t *testing.T) {
	is := is.New(t)
	newServer, servers := fakes.Handing(nil)
	s := start(t, fakes.NewInMemory(newServer), testOptions())
	_, err := s.handle.RefreshCatalog(ctx(t), "fake.one")
	is.NoErr(err)

	(<-servers).RemoveTools("crash")
	snap := poll.Value(t, "the changed catalog stored", patience, func() (catalog.Snapshot, bool) {
		snap, err := s.store.GetCatalog(ctx(t), "fake.one")
		is.NoErr(err)
		return snap, len(snap.Tools) == 6
	})
	is.Equal(toolNames(snap), []string{"counter", "echo", "fail", "idle", "overlap", "sleep"})
}

// panicSession makes the session actor of connection (the only one open)
// panic in its Receive: the actor reads the trapped clock as it admits a
// call.
func (s *sup) panicSession(t *testing.T, connection string) {
	t.Helper()
	before := s.status(t, connection)
	s.trap.arm()
	s.engine.Send(s.handle.PID(), session.CallTool{Connection: connection, Tool: "counter", Deadline: time.Now().Add(2 * time.Second)})
	s.waitStatus(t, connection, func(st session.Status) bool {
		// The successor counts the crash as a restart, or degrades.
		return strings.Contains(st.LastError, "panicked") &&
			(st.Restarts > before.Restarts || (st.State == session.StateDegraded && before.State != session.StateDegraded))
	})
}

func TestAPanickedSessionActorIsReplacedAndItsCountersGoOn(t *testing.T) {
	is := is.New(t)
	observer := fakes.ObserveCloses(fakes.NewInMemory(nil))
	rec := fakes.NewRecording(observer)
	s := start(t, rec, testOptions())
	is.Equal(s.mustCall(t, "fake.one", "counter", nil)["count"], 1.0)

	s.panicSession(t, "fake.one")
	observer.WaitClosed(t, 1, patience) // the panicked actor was stopped, closing its session
	// Its successor reopens the session by itself, after a backoff.
	st := s.waitStatus(t, "fake.one", func(st session.Status) bool { return st.State == session.StateOpen })
	is.Equal(st.Generation, int64(2))
	is.Equal(st.SessionsOpened, 2) // counted on from the predecessor, not from 0
	is.Equal(st.Restarts, 1)
	is.True(strings.Contains(st.LastError, "panicked"))

	is.Equal(s.mustCall(t, "fake.one", "counter", nil)["count"], 1.0) // a fresh upstream
	is.Equal(rec.SessionsCreated(), 2)
}

// The supervisor stops a panicked child asynchronously; a call it handles
// right after the panic must reach a fresh child, not the stopping one.
func TestCallRightAfterAPanicReachesAFreshSession(t *testing.T) {
	is := is.New(t)
	rec := fakes.NewRecording(fakes.NewInMemory(nil))
	s := start(t, rec, testOptions())
	s.mustCall(t, "fake.one", "counter", nil)
	child := s.engine.Registry.GetPID("supervisor/mcp/session", "fake.one")
	is.True(child != nil) // the session actor is registered

	// Queue the panic report and a call back to back at the supervisor
	// (past the line, which the real panic's report would have barred),
	// so that it handles the call while the panicked child is stopping.
	s.engine.Send(s.handle.PID(), guard.Panic{PID: child, Message: "test", Value: "injected"})
	first := reply.Expect[session.ToolResult](s.replies)
	s.engine.Send(s.handle.PID(), session.CallTool{Connection: "fake.one", Tool: "counter", Deadline: time.Now().Add(2 * time.Second), Reply: first.To()})
	r, err := first.Wait(ctx(t))
	is.NoErr(err) // the call is answered: it waited for the new session
	is.NoErr(r.Error.Err())
	is.Equal(fakes.ToolOutput(t, r)["count"], 1.0)                    // by a fresh upstream
	is.Equal(s.mustCall(t, "fake.one", "counter", nil)["count"], 2.0) // which later calls reach too
	is.Equal(rec.SessionsCreated(), 2)
}

func TestRepeatedPanicsDegradeTheConnectionAndRecordAnEvent(t *testing.T) {
	is := is.New(t)
	rec := fakes.NewRecording(fakes.NewInMemory(nil))
	st := store.NewMemory()
	opts := testOptions() // two restarts a minute
	opts.Events = st
	s := startWith(t, rec, st, opts)

	for i := range 3 {
		s.mustCall(t, "fake.one", "counter", nil)
		s.panicSession(t, "fake.one")
		if i < 2 {
			is.True(s.status(t, "fake.one").State != session.StateDegraded) // not yet degraded
		}
	}
	status := s.status(t, "fake.one")
	is.Equal(status.State, session.StateDegraded)
	is.Equal(status.Restarts, 2)

	began := time.Now()
	r := s.call(t, "fake.one", "counter", nil)
	is.True(errors.Is(r.Error.Err(), session.ErrDegraded))    // fails fast while degraded
	is.True(errors.Is(r.Error.Err(), session.ErrUnavailable)) // a kind of unavailable
	is.True(time.Since(began) < time.Second)
	_, err := s.handle.RefreshCatalog(ctx(t), "fake.one")
	is.True(errors.Is(err, session.ErrUnavailable))
	is.Equal(rec.SessionsCreated(), 3) // no session was opened for them

	is.Equal(s.mustCall(t, "fake.two", "counter", nil)["count"], 1.0) // other connections are unaffected

	events := poll.Value(t, "a connection_degraded event recorded", patience, func() ([]store.Event, bool) {
		all, err := st.ListEvents(ctx(t), 0, 100)
		is.NoErr(err)
		var events []store.Event
		for _, e := range all {
			if e.Kind == supervisor.EventConnectionDegraded {
				events = append(events, e)
			}
		}
		return events, len(events) > 0
	})
	is.Equal(*events[0].ConnectionID, "fake.one")
	is.Equal(events[0].Payload["max_restarts"], float64(2))
}

func TestADegradedConnectionRecoversWhenAProbeConnects(t *testing.T) {
	is := is.New(t)
	clock := session.NewManualClock(time.Now())
	opts := testOptions()
	opts.Clock = clock
	opts.Session.Policy.MaxRestarts = 1
	opts.Session.Policy.MinBackoff, opts.Session.Policy.MaxBackoff = time.Second, time.Second
	s := start(t, fakes.NewInMemory(nil), opts)
	s.mustCall(t, "fake.one", "counter", nil)

	s.panicSession(t, "fake.one") // restart 1 of 1: reopens after a second
	s.waitStatus(t, "fake.one", func(st session.Status) bool { return st.State == session.StateBackoff })
	advance(t, clock, time.Second)
	s.waitStatus(t, "fake.one", func(st session.Status) bool { return st.State == session.StateOpen })
	s.panicSession(t, "fake.one") // one too many
	st := s.waitStatus(t, "fake.one", func(st session.Status) bool { return st.State == session.StateDegraded })
	is.Equal(st.NextAttemptAt, clock.Now().Add(time.Minute))
	is.True(errors.Is(s.call(t, "fake.one", "counter", nil).Error.Err(), session.ErrDegraded))

	advance(t, clock, time.Minute) // the probe
	st = s.waitStatus(t, "fake.one", func(st session.Status) bool { return st.State == session.StateOpen })
	is.Equal(st.Generation, int64(3))
	r := s.callAt(t, clock, "fake.one", "counter")
	is.NoErr(r.Error.Err())
	is.Equal(fakes.ToolOutput(t, r)["count"], 1.0)
}

func TestSessionActorsThatKeepCrashingGetNoSuccessorUntilAProbe(t *testing.T) {
	is := is.New(t)
	clock := session.NewManualClock(time.Now())
	opts := testOptions()
	opts.Clock = clock
	opts.Session.Policy.MaxRestarts = 1 // so the supervisor replaces 2 crashes a minute at once
	rec := fakes.NewRecording(fakes.NewInMemory(nil))
	s := start(t, rec, opts)
	s.mustCall(t, "fake.one", "counter", nil)

	s.panicSession(t, "fake.one") // replaced: reopens after a backoff
	advance(t, clock, 50*time.Millisecond)
	s.waitStatus(t, "fake.one", func(st session.Status) bool { return st.State == session.StateOpen })
	s.panicSession(t, "fake.one") // replaced, degraded by its own restart limit
	s.panicSession(t, "fake.one") // a third crash within the minute: no successor
	st := s.status(t, "fake.one")
	is.Equal(st.State, session.StateDegraded)
	is.True(strings.Contains(st.LastError, "panicked"))
	is.Equal(s.engine.Registry.GetPID("supervisor/mcp/session", "fake.one#4"), nil) // no successor
	r := s.call(t, "fake.one", "counter", nil)
	is.True(errors.Is(r.Error.Err(), session.ErrDegraded))
	is.True(strings.Contains(r.Error.Err().Error(), "crashed"))

	advance(t, clock, time.Minute) // the probe: a successor that connects at once
	s.waitStatus(t, "fake.one", func(st session.Status) bool { return st.State == session.StateOpen })
	is.NoErr(s.callAt(t, clock, "fake.one", "counter").Error.Err())
}

// TestStatusesShowCallsInFlightLive runs in a synctest bubble: the
// sleep's 500 ms pass only once everything waits, so the status is always
// asked while the call is in flight, however slow the machine.
func TestStatusesShowCallsInFlightLive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		is := is.New(t)
		rec := fakes.NewRecording(fakes.NewInMemory(nil))
		s := start(t, rec, testOptions())
		s.mustCall(t, "fake.one", "counter", nil)
		w := s.send("fake.one", "sleep", map[string]any{"ms": 500})
		is.True(rec.WaitForToolCalls(2, patience)) // the sleep is at the server

		st := s.status(t, "fake.one")
		is.Equal(st.CallsInFlight, 1) // no state changed: the status is asked live
		is.Equal(st.State, session.StateOpen)
		is.Equal(st.Generation, int64(1))
		_, err := w.Wait(ctx(t))
		is.NoErr(err)
		is.Equal(s.status(t, "fake.one").CallsInFlight, 0)
		is.Equal(s.status(t, "fake.off").State, session.StateClosed) // disabled
		is.Equal(s.status(t, "fake.two").State, session.StateIdle)   // never used
	})
}

func TestPanicOfAnUnknownActorIsIgnored(t *testing.T) {
	is := is.New(t)
	s := start(t, fakes.NewInMemory(nil), testOptions())
	s.mustCall(t, "fake.one", "counter", nil)
	child := s.engine.Registry.GetPID("supervisor/mcp/session", "fake.one")
	is.True(child != nil) // the session actor is registered
	stranger := s.engine.SpawnFunc(func(*actor.Context) {}, "stranger")
	defer s.engine.Poison(stranger)

	s.engine.Send(s.handle.PID(), guard.Panic{PID: stranger, Message: "test", Value: "not ours"})
	is.Equal(s.mustCall(t, "fake.one", "counter", nil)["count"], 2.0) // the same session
	is.True(s.engine.Registry.GetPID("supervisor/mcp/session", "fake.one").Equals(child))
	is.Equal(s.status(t, "fake.one").State, session.StateOpen)
}

func TestStopClosesEveryUpstreamSession(t *testing.T) {
	is := is.New(t)
	observer := fakes.ObserveCloses(fakes.NewInMemory(nil))
	s := start(t, observer, testOptions())
	s.mustCall(t, "fake.one", "counter", nil)
	s.mustCall(t, "fake.two", "counter", nil)

	stopCtx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	is.NoErr(s.handle.Stop(stopCtx))
	is.Equal(observer.Closed(), 2) // both upstream sessions closed before Stop returned
	is.Equal(s.engine.Registry.GetPID("supervisor", "mcp"), nil)
}

func TestStopAnswersCallsInFlight(t *testing.T) {
	is := is.New(t)
	rec := fakes.NewRecording(fakes.NewInMemory(nil))
	s := start(t, rec, testOptions())
	s.mustCall(t, "fake.one", "counter", nil)
	w := s.send("fake.one", "sleep", map[string]any{"ms": 60_000})
	is.True(rec.WaitForToolCalls(2, patience)) // the sleep is at the server

	stopCtx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	is.NoErr(s.handle.Stop(stopCtx))
	r, err := w.Wait(ctx(t))
	is.NoErr(err) // the caller is not left waiting
	is.True(errors.Is(r.Error.Err(), session.ErrUnavailable))
}

func toolNames(s catalog.Snapshot) []string {
	var names []string
	for _, t := range s.Tools {
		names = append(names, t.Name)
	}
	slices.Sort(names)
	return names
}

// advance waits until the clock has a timer of d pending, then moves it
// by d.
func advance(t *testing.T, clock *session.ManualClock, d time.Duration) {
	t.Helper()
	is := is.New(t)
	is.Helper()
	waitCtx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	is.True(clock.WaitFor(waitCtx, func(p []time.Duration) bool { return slices.Contains(p, d) })) // the timer is armed
	clock.Advance(d)
}

// callAt calls tool with a deadline on clock, which tests move ahead of
// the wall clock.
func (s *sup) callAt(t *testing.T, clock session.Clock, connection, tool string) session.ToolResult {
	t.Helper()
	is := is.New(t)
	is.Helper()
	w := reply.Expect[session.ToolResult](s.replies)
	s.engine.Send(s.handle.PID(), session.CallTool{Connection: connection, Tool: tool, Deadline: clock.Now().Add(2 * time.Second), Reply: w.To()})
	r, err := w.Wait(ctx(t))
	is.NoErr(err) // the supervisor replies to the call
	return r
}
