package integration

import (
	"context"
	"encoding/json"
	"os"
	"sync"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/session"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/store/sqlite"
	"github.com/mcpflow/mcpflow/actors/store/sqlite/sqlitetest"
	p "github.com/mcpflow/mcpflow/api/protocol"
	"github.com/mcpflow/mcpflow/fakes"
)

// captureCommitsEnv names the file TestCaptureTheCommitsOfAWarmRun writes.
const captureCommitsEnv = "MCPFLOW_CAPTURE_COMMITS"

// commitRecorder is a SQLite store that keeps a copy of each commit a
// run hands it, by run.
type commitRecorder struct {
	*sqlite.Store
	mu    sync.Mutex
	byRun map[string][]json.RawMessage
}

// SubmitCommit implements store.Submitter: it copies c, as JSON, before
// the store writes it.
func (r *commitRecorder) SubmitCommit(ctx context.Context, c store.Commit, done func(store.CommitOutcome)) {
	data, err := json.Marshal(c)
	if err != nil {
		done(store.CommitOutcome{Err: err})
		return
	}
	r.mu.Lock()
	r.byRun[c.Run.ID] = append(r.byRun[c.Run.ID], data)
	r.mu.Unlock()
	r.Store.SubmitCommit(ctx, c, done)
}

// TestCaptureTheCommitsOfAWarmRun writes to the file named by
// MCPFLOW_CAPTURE_COMMITS the commits (store.Commit, as JSON) that a warm
// one-step run of the counter workflow (BenchmarkCounterCall's
// workflow_ws_sqlite) hands its store: the workload that
// integration/engines replays on each storage engine (issue 32). Skipped
// without it.
func TestCaptureTheCommitsOfAWarmRun(t *testing.T) {
	path := os.Getenv(captureCommitsEnv)
	if path == "" {
		t.Skip(captureCommitsEnv + " names no file to write")
	}
	is := is.New(t)
	rec := &commitRecorder{Store: sqlitetest.Open(t), byRun: map[string][]json.RawMessage{}}
	svc := startServiceWith(t, rec, session.Factories{config.TransportStdio: fakes.NewInMemory(nil)}, stdioSource("fixture.default", "in-memory"))
	c := svc.dial(t)
	deployment := buildCounterDeployment(t, c, "fixture.default")
	ctx := testContext(t)
	var last string
	for range 3 { // the first opens the session; the last is warm
		run, err := c.RunDeployment(ctx, p.StartRunParams{DeploymentID: deployment})
		is.NoErr(err)
		is.Equal(run.Status, "completed")
		is.True(run.RunID != nil) // a durable run has an id
		last = *run.RunID
	}
	rec.mu.Lock()
	commits := rec.byRun[last]
	rec.mu.Unlock()
	is.True(len(commits) >= 2) // created, then ended
	data, err := json.MarshalIndent(commits, "", "  ")
	is.NoErr(err)
	is.NoErr(os.WriteFile(path, append(data, '\n'), 0o644))
}
