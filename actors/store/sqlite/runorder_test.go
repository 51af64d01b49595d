package sqlite

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/store"
)

// TestListRunsOrdersRunningRunsByTheirLastStep lists runs whose steps
// left their rows' updated_at as it was (runStep): each running run is
// still placed by its last update, between the others, page by page.
func TestListRunsOrdersRunningRunsByTheirLastStep(t *testing.T) {
	is := is.New(t)
	ctx := t.Context()
	s := openTest(t, filepath.Join(t.TempDir(), "mcpflow.db"))
	defer s.Close()
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	at := func(seconds int) time.Time { return t0.Add(time.Duration(seconds) * time.Second) }
	create := func(id, status string, seconds int) store.Run {
		r := store.Run{ID: id, Status: status, CreatedAt: at(0), UpdatedAt: at(seconds)}
		is.NoErr(s.CreateRun(ctx, r, nil))
		return r
	}
	create("done-10", store.RunCompleted, 10)
	create("done-30", store.RunCompleted, 30)
	create("failed-50", store.RunFailed, 50)
	slow, fast := create("slow", store.RunRunning, 1), create("fast", store.RunRunning, 2)
	slow.UpdatedAt = at(20)
	is.NoErr(s.RecordProgress(ctx, slow, nil))
	fast.UpdatedAt = at(40)
	is.NoErr(s.RecordProgress(ctx, fast, nil))
	fast.UpdatedAt = at(60)
	is.NoErr(s.RecordProgress(ctx, fast, nil))

	ids := func(q store.RunQuery) []string {
		list, _, err := s.ListRuns(ctx, q)
		is.NoErr(err)
		got := []string{}
		for _, r := range list {
			got = append(got, r.ID)
		}
		return got
	}
	is.Equal(ids(store.RunQuery{}), []string{"fast", "failed-50", "done-30", "slow", "done-10"})
	is.Equal(ids(store.RunQuery{Offset: 2, Limit: 2}), []string{"done-30", "slow"}) // pages cut across both parts
	is.Equal(ids(store.RunQuery{Status: store.RunRunning}), []string{"fast", "slow"})
	is.Equal(ids(store.RunQuery{Status: store.RunCompleted}), []string{"done-30", "done-10"})
}
