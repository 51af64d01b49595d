package postgres_test

import (
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/store/postgres"
	"github.com/mcpflow/mcpflow/actors/store/postgres/pgtest"
)

// testEventsInCommitOrder starts and ends runs from several nodes at once
// while a reader pages the admin event log by sequence number, as a
// subscription does: each page goes on from the reader's cursor with no
// gap (no number n+1 is ever seen before n), and in the end every run has
// its two events, started before ended.
func testEventsInCommitOrder(t *testing.T, srv *pgtest.Server) {
	const (
		nodes   = 4
		perNode = 25
		events  = nodes * perNode * 2
	)
	is := is.New(t)
	ctx := t.Context()
	dsn := srv.NewDatabase(t)
	reader := open(t, dsn)
	writers := make([]*postgres.Store, nodes)
	for i := range writers {
		writers[i] = open(t, dsn, postgres.WithNode("node-"+strconv.Itoa(i)))
	}

	done := make(chan struct{})
	errs := make(chan error, nodes)
	var wg sync.WaitGroup
	for i, s := range writers {
		wg.Go(func() {
			for j := range perNode {
				if err := startFinish(ctx, s, "run-"+strconv.Itoa(i)+"-"+strconv.Itoa(j)); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	go func() {
		wg.Wait()
		close(done)
	}()

	var (
		cursor int64
		read   []store.Event
	)
	deadline := time.After(2 * time.Minute)
	tick := time.NewTicker(2 * time.Millisecond) // paces the reader; it synchronises nothing
	defer tick.Stop()
	for finished := false; !finished; {
		select {
		case <-done:
			finished = true // one last read after the last commit
		case <-tick.C:
		case <-deadline:
			t.Fatal("the writers did not finish within 2 minutes")
		}
		page, err := reader.ListEvents(ctx, cursor, 0)
		is.NoErr(err)
		for _, e := range page {
			is.Equal(e.Seq, cursor+1) // never a gap, never a number before a smaller one
			cursor = e.Seq
		}
		read = append(read, page...)
	}
	close(errs)
	for err := range errs {
		is.NoErr(err)
	}

	is.Equal(len(read), events) // every event, once
	last, err := reader.LastEventSeq(ctx)
	is.NoErr(err)
	is.Equal(last, int64(events))
	started := map[string]bool{}
	for _, e := range read {
		id := e.Payload["run_id"].(string)
		switch e.Kind {
		case store.EventRunStarted:
			started[id] = true
		case store.EventRunCompleted:
			is.True(started[id]) // a run's start comes before its end
		default:
			t.Fatalf("unexpected event %q", e.Kind)
		}
	}
}

// testQueuedEventsNumbered leaves admin events queued, as a node that
// stopped between a commit and its numbering does: the next numbering
// numbers them first, whoever makes it, and so does the next Open; the
// retention bound holds over a numbering of more events than it keeps.
func testQueuedEventsNumbered(t *testing.T, srv *pgtest.Server) {
	const kept = 3
	is := is.New(t)
	ctx := t.Context()
	dsn := srv.NewDatabase(t)
	s := open(t, dsn, postgres.WithStoreOptions(store.WithMaxEvents(kept)))
	leave := func(kinds ...string) {
		t.Helper()
		for _, kind := range kinds {
			exec(t, dsn, `INSERT INTO event_queue (record) VALUES ('{"kind":"`+kind+`"}')`)
		}
	}
	kinds := func(from int64) []string {
		t.Helper()
		events, err := s.ListEvents(ctx, from, 0)
		is.NoErr(err)
		out := []string{}
		for _, e := range events {
			out = append(out, strconv.FormatInt(e.Seq, 10)+" "+e.Kind)
		}
		return out
	}

	leave("left-1")
	is.NoErr(startFinish(ctx, s, "run"))
	is.Equal(kinds(0), []string{"1 left-1", "2 " + store.EventRunStarted, "3 " + store.EventRunCompleted})

	leave("left-2", "left-3", "left-4", "left-5")
	seq, err := s.AppendEvent(ctx, store.Event{Kind: "appended"})
	is.NoErr(err)
	is.Equal(seq, int64(8))                                            // after those queued before it, in their order
	is.Equal(kinds(0), []string{"6 left-4", "7 left-5", "8 appended"}) // the newest 3 only

	leave("left-6")
	open(t, dsn, postgres.WithStoreOptions(store.WithMaxEvents(kept)))
	is.Equal(kinds(0), []string{"7 left-5", "8 appended", "9 left-6"}) // numbered by the next Open
	last, err := s.LastEventSeq(ctx)
	is.NoErr(err)
	is.Equal(last, int64(9))
}
