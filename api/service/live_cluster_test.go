package service_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/clock"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/store/postgres"
	"github.com/mcpflow/mcpflow/actors/store/postgres/pgtest"
	"github.com/mcpflow/mcpflow/api/live"
	"github.com/mcpflow/mcpflow/api/protocol"
	"github.com/mcpflow/mcpflow/api/service"
	"github.com/mcpflow/mcpflow/fakes/poll"
)

// TestLiveEventsAcrossNodes runs two nodes on one PostgreSQL database,
// each a service with its own store and hub: what one commits, the
// other's subscriptions deliver live, through the store's announcements.
func TestLiveEventsAcrossNodes(t *testing.T) {
	srv := pgtest.Start(t)
	for _, tt := range []struct {
		name string
		test func(t *testing.T, a, b *pgNode)
	}{
		{"RunEvents", testRunEventsAcrossNodes},
		{"AdminEvents", testAdminEventsAcrossNodes},
		{"ResyncAfterTheListenerIsCut", testResyncAfterTheListenerIsCut},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dsn := srv.NewDatabase(t)
			tt.test(t, newPGNode(t, dsn, "node-a"), newPGNode(t, dsn, "node-b"))
		})
	}
}

// pgNode is a node of a cluster as live events see it: a service over a
// PostgreSQL store through its hub, and the store's listener waking the
// hub, on a manual clock.
type pgNode struct {
	svc   *service.Service
	hub   *live.Hub
	dsn   string // as the node connects: its name is the application_name
	clock *clock.Manual
}

// newPGNode opens node name on dsn; it stops with t.
func newPGNode(t *testing.T, dsn, name string) *pgNode {
	t.Helper()
	is := is.New(t)
	is.Helper()
	dsn += " application_name=" + name
	st, err := postgres.Open(t.Context(), dsn, postgres.WithNode(name))
	is.NoErr(err) // the store opens
	t.Cleanup(func() { is.NoErr(st.Close()) })
	svc, hub := liveService(t, st, live.Options{})
	n := &pgNode{svc: svc, hub: hub, dsn: dsn, clock: clock.NewManual(time.Now())}
	ctx, cancel := context.WithCancel(context.Background())
	l := st.Listen(ctx, hub, postgres.ListenOptions{Clock: n.clock})
	t.Cleanup(func() {
		cancel()
		select {
		case <-l.Done():
		case <-time.After(patience):
			is.Fail() // the listener ends with its context
		}
	})
	return n
}

func testRunEventsAcrossNodes(t *testing.T, a, b *pgNode) {
	is := is.New(t)
	w := newRun(t, a.svc.Store, "run-1") // run on node A
	w.step("a")

	onB, onA := newConn(t), newConn(t)
	res := must[protocol.SubscribeRunResult](t, onB, b.svc, protocol.MethodRunsSubscribe, `{"run_id":"run-1"}`)
	is.Equal(res.LastSequence, int64(2))
	is.True(res.Active)
	// On node A, each commit wakes the feed twice (the hub's store, then
	// the announcement): nothing is delivered twice.
	must[protocol.SubscribeRunResult](t, onA, a.svc, protocol.MethodRunsSubscribe, `{"run_id":"run-1"}`)

	// Step by step: each event reaches node B before the next commit.
	var latencies []time.Duration
	for i := range 5 {
		committed := time.Now()
		w.step(fmt.Sprintf("s%d", i))
		want := int64(3 + i)
		onB.until(t, fmt.Sprintf("event %d", want), func(n []note) bool { return len(n) > 0 && n[len(n)-1].seq() == want })
		latencies = append(latencies, time.Since(committed))
	}
	slices.Sort(latencies)
	t.Logf("a step committed on node A reached node B's subscriber in %v (median of %d), at most %v",
		latencies[len(latencies)/2], len(latencies), latencies[len(latencies)-1])

	w.steps(30) // a burst
	w.finish()
	is.Equal(seqs(onB.untilEnd(t)), span(1, 38)) // every event on node B, in order, once
	is.Equal(seqs(onA.untilEnd(t)), span(1, 38)) // and on node A
	waitOpen(t, b.hub, 0)                        // the run's end ends the subscription
}

func testAdminEventsAcrossNodes(t *testing.T, a, b *pgNode) {
	is := is.New(t)
	ctx := t.Context()
	appendEvent := func(kind string) {
		_, err := a.svc.Store.AppendEvent(ctx, store.Event{Kind: kind, TimestampEpochMs: 1, ConnectionID: ptr("demo.default")})
		is.NoErr(err) // appended on node A
	}
	appendEvent("connection_registered")

	live, replay := newConn(t), newConn(t)
	res := must[protocol.SubscribeAdminEventsResult](t, live, b.svc, protocol.MethodAdminEventsSubscribe, `{}`)
	is.Equal(res.LastSequence, int64(1))
	must[protocol.SubscribeAdminEventsResult](t, replay, b.svc, protocol.MethodAdminEventsSubscribe, `{"after_sequence":0}`)
	for _, kind := range []string{"connection_degraded", "connection_recovered", "connection_updated"} {
		appendEvent(kind)
	}
	is.Equal(seqs(live.until(t, "three events", func(n []note) bool { return len(n) >= 3 })), span(2, 4))
	notes := replay.until(t, "four events", func(n []note) bool { return len(n) >= 4 })
	is.Equal(seqs(notes), span(1, 4))
	is.Equal(notes[3].params["kind"], "connection_updated")
}

// testResyncAfterTheListenerIsCut: node B's listener loses its connection;
// what node A commits before it is back is announced to nobody, and B's
// subscription still delivers it, with no gap, once the listener has
// reconnected and woken every feed.
func testResyncAfterTheListenerIsCut(t *testing.T, a, b *pgNode) {
	is := is.New(t)
	w := newRun(t, a.svc.Store, "run-1")
	conn := newConn(t)
	must[protocol.SubscribeRunResult](t, conn, b.svc, protocol.MethodRunsSubscribe, `{"run_id":"run-1"}`)
	w.step("before")
	conn.until(t, "two events", func(n []note) bool { return len(n) == 2 })

	b.killListener(t)
	backingOff := func(pending []time.Duration) bool {
		return len(pending) == 1 && pending[0] <= postgres.DefaultMaxBackoff
	}
	is.True(b.clock.WaitFor(bounded(t), backingOff)) // B's listener waits to reconnect
	w.steps(3)                                       // announced to nobody
	b.clock.Advance(postgres.DefaultMaxBackoff)
	notes := conn.until(t, "the events committed meanwhile", func(n []note) bool { return len(n) == 5 })
	is.Equal(seqs(notes), span(1, 5))

	w.finish() // announced again
	is.Equal(seqs(conn.untilEnd(t)), span(1, 6))
}

// listenerBackend selects the server backend of the node's listener:
// its connection, in the node's database, whose last query was its LISTEN.
const listenerBackend = `FROM pg_stat_activity
	WHERE datname = current_database() AND application_name = current_setting('application_name')
	AND query = 'LISTEN ` + postgres.EventsChannel + `'`

// killListener ends the connection of the node's listener and waits until
// the server has ended it. It first waits for the listener to be
// listening: the listener connects in the background, and the events a
// test saw before may have come from its subscription's replay, not from
// a notification, so they do not show that it is (under -race on a
// loaded machine it was not yet, once).
func (n *pgNode) killListener(t *testing.T) {
	t.Helper()
	is := is.New(t)
	is.Helper()
	ctx := bounded(t)
	conn, err := pgx.Connect(ctx, n.dsn)
	is.NoErr(err)
	defer conn.Close(context.WithoutCancel(ctx))
	poll.For(t, "the listener listens", patience, func() bool {
		var listening int
		is.NoErr(conn.QueryRow(ctx, `SELECT count(*) `+listenerBackend).Scan(&listening))
		return listening == 1
	})
	rows, err := conn.Query(ctx, `SELECT pg_terminate_backend(pid, 5000) `+listenerBackend)
	is.NoErr(err)
	killed, err := pgx.CollectRows(rows, pgx.RowTo[bool])
	is.NoErr(err)
	is.Equal(killed, []bool{true}) // the listener's connection is gone
}
