package storetest

import (
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/store"
)

// testListRunsByLastUpdate lists runs some of whose steps were committed
// while they kept running (which a durable store may record apart from
// the indexed time of their rows): each running run is still placed by
// its last update, to the nanosecond, between the others, page by page.
func testListRunsByLastUpdate(t *testing.T, s store.Store) {
	is := is.New(t)
	ctx := t.Context()
	at := func(seconds int) time.Time { return t0.Add(time.Duration(seconds) * time.Second) }
	for _, r := range []store.Run{
		run("done-10", store.RunCompleted, at(10)),
		run("done-30", store.RunCompleted, at(30)),
		run("failed-50", store.RunFailed, at(50)),
	} {
		is.NoErr(s.CreateRun(ctx, r, nil))
	}
	slow, fast := run("slow", store.RunRunning, at(1)), run("fast", store.RunRunning, at(2))
	is.NoErr(s.CreateRun(ctx, slow, nil))
	is.NoErr(s.CreateRun(ctx, fast, nil))
	slow.UpdatedAt = at(30).Add(1500 * time.Nanosecond) // after done-30 by less than a microsecond and a half
	progress(ctx, is, s, slow)
	fast.UpdatedAt = at(40)
	fast = progress(ctx, is, s, fast, entry("fetch", "parse"))
	fast.UpdatedAt = at(60).Add(123456789)
	progress(ctx, is, s, fast, entry("parse", "save"))

	ids := func(q store.RunQuery) []string {
		t.Helper()
		list, _, err := s.ListRuns(ctx, q)
		is.NoErr(err)
		got := []string{}
		for _, r := range list {
			got = append(got, r.ID)
		}
		return got
	}
	is.Equal(ids(store.RunQuery{}), []string{"fast", "failed-50", "slow", "done-30", "done-10"})
	is.Equal(ids(store.RunQuery{Offset: 2, Limit: 2}), []string{"slow", "done-30"}) // pages cut across running and not
	is.Equal(ids(store.RunQuery{Status: store.RunRunning}), []string{"fast", "slow"})
	is.Equal(ids(store.RunQuery{Status: store.RunCompleted}), []string{"done-30", "done-10"})
	is.Equal(ids(store.RunQuery{DeploymentID: "dep", Offset: 1, Limit: 1}), []string{"failed-50"})
}
