package storetest

import (
	"sync"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/store"
)

// retainedEvents is the bound testEventRetention opens its store with.
const retainedEvents = 5

// appendEvents appends event(from) .. event(to) and checks that they are
// numbered from..to.
func appendEvents(t *testing.T, s store.Store, from, to int) {
	t.Helper()
	is := is.New(t)
	for i := from; i <= to; i++ {
		seq, err := s.AppendEvent(t.Context(), event(i))
		is.NoErr(err)
		is.Equal(seq, int64(i)) // numbered in order, from 1
	}
}

// wantEvents is event(from) .. event(to) as stored.
func wantEvents(from, to int) []store.Event {
	want := []store.Event{}
	for i := from; i <= to; i++ {
		want = append(want, numbered(event(i), int64(i)))
	}
	return want
}

func testEvents(t *testing.T, s store.Store) {
	is := is.New(t)
	ctx := t.Context()
	list, err := s.ListEvents(ctx, 0, 0)
	is.NoErr(err)
	is.Equal(len(list), 0) // a new store has no events
	last, err := s.LastEventSeq(ctx)
	is.NoErr(err)
	is.Equal(last, int64(0))

	appendEvents(t, s, 1, 2)
	last, err = s.LastEventSeq(ctx)
	is.NoErr(err)
	is.Equal(last, int64(2)) // the last appended
	bare := store.Event{Seq: 99, Kind: "auth_saved", TimestampEpochMs: 7}
	seq, err := s.AppendEvent(ctx, bare)
	is.NoErr(err)
	is.Equal(seq, int64(3)) // the store numbers events; e.Seq is ignored

	list, err = s.ListEvents(ctx, 0, 0)
	is.NoErr(err)
	is.Equal(list, append(wantEvents(1, 2), numbered(bare, 3)))
	is.Equal(list[2].ConnectionID, nil) // absent ids stay absent
	is.Equal(list[2].Payload, nil)
}

// testConcurrentEvents appends from many goroutines: every append gets its
// own number and every event is kept.
func testConcurrentEvents(t *testing.T, s store.Store) {
	const writers = 20
	is := is.New(t)
	ctx := t.Context()
	seqs := make([]int64, writers)
	errs := make([]error, writers)
	var wg sync.WaitGroup
	for i := range writers {
		wg.Go(func() { seqs[i], errs[i] = s.AppendEvent(ctx, event(i)) })
	}
	wg.Wait()
	for _, err := range errs {
		is.NoErr(err)
	}
	list, err := s.ListEvents(ctx, 0, 0)
	is.NoErr(err)
	is.Equal(len(list), writers) // every event is kept
	listed := []int64{}
	for _, e := range list {
		i := int(e.Payload["i"].(float64))
		is.Equal(e, numbered(event(i), seqs[i])) // stored under the number its append returned
		listed = append(listed, e.Seq)
	}
	want := []int64{}
	for seq := range int64(writers) {
		want = append(want, seq+1)
	}
	is.Equal(listed, want) // one number each, listed in sequence order
}

func testEventPaging(t *testing.T, s store.Store) {
	is := is.New(t)
	ctx := t.Context()
	appendEvents(t, s, 1, 7)

	var pages [][]store.Event
	after := int64(0)
	for {
		page, err := s.ListEvents(ctx, after, 3)
		is.NoErr(err)
		if len(page) == 0 {
			break
		}
		pages = append(pages, page)
		after = page[len(page)-1].Seq
	}
	is.Equal(pages, [][]store.Event{wantEvents(1, 3), wantEvents(4, 6), wantEvents(7, 7)})

	for _, tt := range []struct {
		name     string
		afterSeq int64
		limit    int
		want     []store.Event
	}{
		{"all", 0, 0, wantEvents(1, 7)},
		{"before the first", -5, 2, wantEvents(1, 2)},
		{"after one", 2, 0, wantEvents(3, 7)},
		{"limit past the end", 5, 10, wantEvents(6, 7)},
		{"after the last", 7, 10, []store.Event{}},
		{"after the future", 100, 0, []store.Event{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			is := is.New(t)
			list, err := s.ListEvents(ctx, tt.afterSeq, tt.limit)
			is.NoErr(err)
			is.Equal(list, tt.want)
		})
	}
}

// testEventRetention runs on a store that keeps retainedEvents events.
func testEventRetention(t *testing.T, s store.Store) {
	is := is.New(t)
	ctx := t.Context()
	for i := 1; i <= 12; i++ {
		appendEvents(t, s, i, i)
		list, err := s.ListEvents(ctx, 0, 0)
		is.NoErr(err)
		is.Equal(list, wantEvents(max(1, i-retainedEvents+1), i)) // the newest, never more than the bound
	}

	list, err := s.ListEvents(ctx, 3, 2)
	is.NoErr(err)
	is.Equal(list, wantEvents(8, 9)) // a reader that fell behind resumes at the oldest kept
	list, err = s.ListEvents(ctx, 10, 0)
	is.NoErr(err)
	is.Equal(list, wantEvents(11, 12))

	appendEvents(t, s, 13, 13) // numbers go on past the dropped ones
	list, err = s.ListEvents(ctx, 0, 0)
	is.NoErr(err)
	is.Equal(list, wantEvents(9, 13))
	last, err := s.LastEventSeq(ctx)
	is.NoErr(err)
	is.Equal(last, int64(13))
}
