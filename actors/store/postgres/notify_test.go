package postgres_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/catalog"
	"github.com/mcpflow/mcpflow/actors/clock"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/store/postgres"
	"github.com/mcpflow/mcpflow/actors/store/postgres/pgtest"
	"github.com/mcpflow/mcpflow/actors/workflow"
	"github.com/mcpflow/mcpflow/fakes/poll"
)

// patience bounds every wait that only a broken listener would reach.
const patience = 10 * time.Second

// TestListener runs the listener's tests, each on a database of its own.
func TestListener(t *testing.T) {
	srv := pgtest.Start(t)
	for _, tt := range []struct {
		name string
		test func(t *testing.T, s *postgres.Store, dsn string)
	}{
		{"AnnouncesEachCommitOfEvents", testAnnouncesEachCommitOfEvents},
		{"ReadsEveryPayload", testReadsEveryPayload},
		{"AnnouncesChangesToWhatNodesCache", testAnnouncesChangesToWhatNodesCache},
		{"ResyncsAfterItsConnectionIsKilled", testResyncsAfterItsConnectionIsKilled},
		{"KeepsAConnectionThatAnswersItsIdleCheck", testKeepsAConnectionThatAnswersItsIdleCheck},
		{"EndsWithItsContext", testEndsWithItsContext},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dsn := srv.NewDatabase(t)
			tt.test(t, open(t, dsn, postgres.WithNode("node")), dsn)
		})
	}
}

// heard is one call of a listener to its Waker: WakeRun (run set),
// WakeAdmin (admin set) or WakeAll (all set).
type heard struct {
	run   string
	admin bool
	seq   int64
	all   bool
	// change and id are a WakeChange's.
	change, id string
}

// hearing is a listener under test, whose Waker records what it is told.
type hearing struct {
	t        *testing.T
	listener *postgres.Listener
	heard    chan heard
	clock    *clock.Manual
	cancel   context.CancelFunc
}

func (h *hearing) WakeRun(id string, seq int64) { h.record(heard{run: id, seq: seq}) }
func (h *hearing) WakeAdmin(seq int64)          { h.record(heard{admin: true, seq: seq}) }
func (h *hearing) WakeAll()                     { h.record(heard{all: true}) }
func (h *hearing) WakeChange(kind, id string)   { h.record(heard{change: kind, id: id}) }

func (h *hearing) record(w heard) {
	select {
	case h.heard <- w:
	default:
		is.NewRelaxed(h.t).Fail() // the test reads all it is told
	}
}

// listen starts a listener on s, on a manual clock, stopped with t; it
// returns once the listener is connected (its first WakeAll).
func listen(t *testing.T, s *postgres.Store) *hearing {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	h := &hearing{t: t, heard: make(chan heard, 64), clock: clock.NewManual(time.Now()), cancel: cancel}
	h.listener = s.Listen(ctx, h, postgres.ListenOptions{Clock: h.clock})
	t.Cleanup(func() { h.stop(t) })
	is.New(t).Equal(h.next(t), heard{all: true}) // connected
	return h
}

// next is the next call heard, within patience.
func (h *hearing) next(t *testing.T) heard {
	t.Helper()
	select {
	case w := <-h.heard:
		return w
	case <-time.After(patience):
		t.Fatalf("the listener said nothing within %s", patience)
		return heard{}
	}
}

// stop ends the listener and waits, within patience, for it to end.
func (h *hearing) stop(t *testing.T) {
	h.cancel()
	select {
	case <-h.listener.Done():
	case <-time.After(patience):
		is.New(t).Fail() // the listener ends with its context
	}
}

// listeners counts the connections of dsn's database that listen for
// events (the last statement they ran was LISTEN).
func listeners(t *testing.T, dsn string) int {
	return query[int](t, dsn, `SELECT count(*)::int FROM pg_stat_activity
		WHERE datname = current_database() AND query = 'LISTEN `+postgres.EventsChannel+`'`)[0]
}

// testAnnouncesEachCommitOfEvents: a run's commits and an admin event
// are announced once each, with the last sequence number they appended.
func testAnnouncesEachCommitOfEvents(t *testing.T, s *postgres.Store, _ string) {
	is := is.New(t)
	ctx := t.Context()
	h := listen(t, s)
	r := store.Run{ID: "run-1", Status: store.RunRunning, UpdatedAt: time.Now().UTC()}
	is.NoErr(s.CreateRun(ctx, r, nil))
	r.TraceCount = 2
	entry := workflow.TraceEntry{FrameID: "root", NodeID: "a", StepType: "node", Outcome: "ok"}
	is.NoErr(s.RecordProgress(ctx, r, []workflow.TraceEntry{entry, entry})) // two events in one commit
	seq, err := s.AppendEvent(ctx, store.Event{Kind: "connection_registered", TimestampEpochMs: 1})
	is.NoErr(err)

	var got []heard
	for len(got) < 3 {
		if w := h.next(t); !w.admin || w.seq == seq {
			got = append(got, w) // the run's own admin events aside
		}
	}
	is.Equal(got, []heard{{run: "run-1", seq: 1}, {run: "run-1", seq: 3}, {admin: true, seq: seq}})
}

// testAnnouncesChangesToWhatNodesCache: a saved catalog, deployment or
// artifact, and a change the service announces, are each announced once
// written.
func testAnnouncesChangesToWhatNodesCache(t *testing.T, s *postgres.Store, _ string) {
	is := is.New(t)
	ctx := t.Context()
	h := listen(t, s)
	is.NoErr(s.SaveCatalog(ctx, catalog.Snapshot{ConnectionID: "demo.default", FetchedAtEpochMs: 1}))
	is.Equal(h.next(t), heard{change: postgres.ChangeCatalog, id: "demo.default"})
	is.NoErr(s.SaveDeployment(ctx, store.Deployment{ID: "d", ArtifactID: "a", ArtifactVersion: 1}))
	is.Equal(h.next(t), heard{change: postgres.ChangeRecords})
	s.AnnounceChange(postgres.ChangeSources, "")
	is.Equal(h.next(t), heard{change: postgres.ChangeSources})
}

// testReadsEveryPayload: a run id may hold spaces; a payload the listener
// cannot read, or the resync announced for a run id too long to name,
// wakes everything.
func testReadsEveryPayload(t *testing.T, s *postgres.Store, dsn string) {
	is := is.New(t)
	h := listen(t, s)
	for payload, want := range map[string]heard{
		"run 7 a run id":   {run: "a run id", seq: 7},
		"admin 12":         {admin: true, seq: 12},
		"run seven a":      {all: true},
		"run 7":            {all: true},
		"tomorrow's kind":  {all: true},
		"admin 12 and one": {all: true},
	} {
		exec(t, dsn, `SELECT pg_notify('`+postgres.EventsChannel+`', '`+strings.ReplaceAll(payload, "'", "''")+`')`)
		is.Equal(h.next(t), want) // the payload as read
	}

	long := store.Run{ID: strings.Repeat("r", 7001), Status: store.RunRunning, UpdatedAt: time.Now().UTC()}
	is.NoErr(s.CreateRun(t.Context(), long, nil)) // its commit does not fail
	for {
		if w := h.next(t); !w.admin {
			is.Equal(w, heard{all: true}) // every log is read again
			break
		}
	}
}

// testResyncsAfterItsConnectionIsKilled: the server ends the listener's
// connection; what is committed before it is back is not announced, and
// the listener wakes everything once it has reconnected.
func testResyncsAfterItsConnectionIsKilled(t *testing.T, s *postgres.Store, dsn string) {
	is := is.New(t)
	ctx := t.Context()
	h := listen(t, s)
	killed := query[bool](t, dsn, `SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity
		WHERE datname = current_database() AND query = 'LISTEN `+postgres.EventsChannel+`'`)
	is.Equal(killed, []bool{true}) // the listener's connection is gone

	// It waits out its backoff (its idle check is stopped).
	backingOff := func(pending []time.Duration) bool {
		return len(pending) == 1 && pending[0] <= postgres.DefaultMaxBackoff
	}
	is.True(h.clock.WaitFor(ctx, backingOff))
	// Announcements are sent after the commit returns, by the store's
	// announcer: a listener of the test's own waits until this one is
	// out, so that it cannot reach the listener once it is back.
	observer, err := pgx.Connect(ctx, dsn)
	is.NoErr(err)
	_, err = observer.Exec(ctx, "LISTEN "+postgres.EventsChannel)
	is.NoErr(err)
	missed, err := s.AppendEvent(ctx, store.Event{Kind: "connection_degraded", TimestampEpochMs: 1}) // announced to nobody
	is.NoErr(err)
	sent, cancel := context.WithTimeout(ctx, patience)
	defer cancel()
	for {
		n, err := observer.WaitForNotification(sent)
		is.NoErr(err) // the announcement is sent
		if n.Payload == "admin "+strconv.FormatInt(missed, 10) {
			break
		}
	}
	_, err = observer.Exec(ctx, "UNLISTEN *") // not a listener that listeners counts, even while its backend ends
	is.NoErr(err)
	is.NoErr(observer.Close(ctx))
	h.clock.Advance(postgres.DefaultMaxBackoff)
	is.Equal(h.next(t), heard{all: true}) // back, it says it may have missed anything

	seq, err := s.AppendEvent(ctx, store.Event{Kind: "connection_recovered", TimestampEpochMs: 2})
	is.NoErr(err)
	is.Equal(h.next(t), heard{admin: true, seq: seq}) // and listens again
	is.Equal(listeners(t, dsn), 1)
}

// testKeepsAConnectionThatAnswersItsIdleCheck: after IdleCheck without a
// notification the listener pings, and keeps a connection that answers.
func testKeepsAConnectionThatAnswersItsIdleCheck(t *testing.T, s *postgres.Store, _ string) {
	is := is.New(t)
	ctx := t.Context()
	h := listen(t, s)
	for range 3 {
		idle := func(pending []time.Duration) bool {
			return len(pending) == 1 && pending[0] == postgres.DefaultIdleCheck
		}
		is.True(h.clock.WaitFor(ctx, idle)) // waiting for a notification
		h.clock.Advance(postgres.DefaultIdleCheck)
		seq, err := s.AppendEvent(ctx, store.Event{Kind: "connection_registered", TimestampEpochMs: 1})
		is.NoErr(err)
		is.Equal(h.next(t), heard{admin: true, seq: seq}) // on the same connection: no WakeAll
	}
}

// testEndsWithItsContext: the listener's goroutine ends with its context,
// and its connection closes.
func testEndsWithItsContext(t *testing.T, s *postgres.Store, dsn string) {
	is := is.New(t)
	h := listen(t, s)
	is.Equal(listeners(t, dsn), 1)
	h.stop(t)
	poll.For(t, "the server sees the connection end", patience, func() bool { return listeners(t, dsn) == 0 })
}
