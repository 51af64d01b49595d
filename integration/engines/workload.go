package engines

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mcpflow/mcpflow/actors/store"
)

// warmRunCommits are the commits of a warm one-step run of the counter
// workflow, as its run actor handed them to its store, written by
// integration's TestCaptureTheCommitsOfAWarmRun (see README.md).
//
//go:embed testdata/warm-run-commits.json
var warmRunCommits []byte

// Workload is the commits of one run, in order: its creation, its steps
// and its end.
type Workload []store.Commit

// WarmRun is the workload of a warm one-step run: it is created, commits
// its step (its call in flight) and ends with the call's trace entry.
func WarmRun() (Workload, error) {
	var w Workload
	if err := json.Unmarshal(warmRunCommits, &w); err != nil {
		return nil, fmt.Errorf("read the warm run's commits: %w", err)
	}
	if len(w) < 3 || !w[0].Create || w[len(w)-1].Run.Status == store.RunRunning {
		return nil, errors.New("the warm run's commits are not a creation, a step and an end")
	}
	return w, nil
}

// Step is the workload's first step commit: a commit of a run that stays
// running, which the SQLite store appends to the run's journal.
func (w Workload) Step() store.Commit { return w[1] }

// Replay commits w's commits as those of run id, each once the one
// before it is written (Commit).
func (w Workload) Replay(ctx context.Context, st store.Runs, id string) error {
	for _, c := range w {
		if err := Commit(ctx, st, As(c, id)); err != nil {
			return err
		}
	}
	return nil
}

// As is c as a commit of run id. It shares c's maps and slices, which a
// store only reads.
func As(c store.Commit, id string) store.Commit {
	c.Run.ID = id
	return c
}

// Commit writes c to st as a run actor does (store.Submit: through the
// store's writer when it has one) and waits for its outcome.
func Commit(ctx context.Context, st store.Runs, c store.Commit) error {
	done := make(chan store.CommitOutcome, 1)
	store.Submit(ctx, st, c, func(o store.CommitOutcome) { done <- o })
	select {
	case o := <-done:
		if err := errors.Join(o.Err, o.LiveErr); err != nil {
			return fmt.Errorf("commit run %s: %w", c.Run.ID, err)
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("commit run %s: %w", c.Run.ID, ctx.Err())
	}
}
