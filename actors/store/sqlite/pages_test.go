package sqlite

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/workflow"
)

// What a commit costs SQLite is the pages it appends to the write-ahead
// log: one frame (a 24-byte header and the page) per page it changed,
// after the log's 32-byte header. With no checkpoint the log only grows,
// so the frames of a commit are its growth over pageSize+24.
//
// The commits are those of warm runs, as the run actor makes them
// (actors/run, commit): CreateRun, a step commit that lists the step's
// call as in flight, and so on, in a store that already holds runs with
// random ids, as actors/runs makes them.

// stepCommitPages is the bound on the WAL frames of a step commit (one
// that changes no status), on average: issue 32's target. A step is one
// row of the run's journal (journal.go), about 1.0 frame; it was 6.8-7.2
// when it wrote the run's row (moving it in the two indexes of
// updated_at), its trace and its events, and 4.6-4.9 without the move.
const stepCommitPages = 2.0

// warmRuns is how many runs the store holds before the commits counted,
// and countedRuns how many runs' commits are counted.
const (
	warmRuns    = 400
	countedRuns = 100
)

// commitPages counts the frames each commit of a run appends to the log.
type commitPages struct {
	t        *testing.T
	wal      string
	pageSize int64
}

// frames is how many frames the log holds.
func (c commitPages) frames() int64 {
	info, err := os.Stat(c.wal)
	if os.IsNotExist(err) {
		return 0
	}
	is.New(c.t).NoErr(err)
	if info.Size() < 32 {
		return 0
	}
	return (info.Size() - 32) / (c.pageSize + 24)
}

// of runs commit and returns the frames it appended.
func (c commitPages) of(commit func() error) int64 {
	before := c.frames()
	is.New(c.t).NoErr(commit())
	return c.frames() - before
}

// warmRun returns a new running run with a random id, as a deployment of a
// one-call workflow starts it.
func warmRun(t *testing.T) store.Run {
	var b [16]byte
	_, err := rand.Read(b[:])
	is.New(t).NoErr(err)
	now := time.Now().UTC()
	input := workflow.Object{"n": 1.0}
	return store.Run{
		ID: "run_" + hex.EncodeToString(b[:]), DeploymentID: "dep-counter", ArtifactID: "counter", ArtifactVersion: 1,
		Status: store.RunRunning, ResumeReadiness: "not_applicable", Input: input,
		Deployment: store.Deployment{ID: "dep-counter", ArtifactID: "counter", ArtifactVersion: 1, DriftPolicy: "warn",
			Bindings: []store.Binding{{LogicalSource: "demo", ConcreteSource: "demo"}}},
		StartedBy: "local", CreatedAt: now, UpdatedAt: now,
		Checkpoint: &workflow.Snapshot{Status: workflow.StatusRunning, Ready: []string{"root"},
			Scopes: map[string]*workflow.Scope{"root": {ID: "root", Input: input, State: workflow.Object{}}},
			Frames: map[string]*workflow.Frame{"root": {ID: "root", Scope: "root", Node: "count"}},
			Calls:  map[string]workflow.Call{}},
	}
}

// stepCall puts run r's step node in flight as its call id, as the step
// commit that precedes the call does.
func stepCall(r *store.Run, id, node string) {
	r.CurrentStep = node
	r.UpdatedAt = time.Now().UTC()
	r.Checkpoint.Ready = nil
	r.Checkpoint.Calls = map[string]workflow.Call{id: {ID: id, FrameID: "root", NodeID: node,
		Capability: "demo.default.counter", Input: workflow.Object{"n": 1.0}}}
	r.Checkpoint.NextCall++
}

// stepEntry is the trace entry of step node, which called the counter.
func stepEntry(node, next string) workflow.TraceEntry {
	return workflow.TraceEntry{FrameID: "root", NodeID: node, StepType: workflow.NodeCall, Outcome: workflow.OutcomeOK,
		NextNodeID: next, ResolvedInput: workflow.Object{"n": 1.0}, Output: workflow.Object{"count": 7.0},
		StateChanges: workflow.Object{"state.count": 7.0}, Attempts: 1}
}

// runPages makes a two-step run in s, as the run actor commits it, and
// returns the frames of its commits: its creation, its step commits (the
// first call in flight; the first step's entry and the second call in
// flight) and its end.
func runPages(t *testing.T, ctx context.Context, s *Store, c commitPages) (create int64, steps []int64, end int64) {
	r := warmRun(t)
	create = c.of(func() error { return s.CreateRun(ctx, r, nil) })
	stepCall(&r, "c1", "count")
	steps = append(steps, c.of(func() error { return s.RecordProgress(ctx, r, nil) }))
	r.TraceCount++
	r.Checkpoint.Steps++
	stepCall(&r, "c2", "again")
	steps = append(steps, c.of(func() error { return s.RecordProgress(ctx, r, []workflow.TraceEntry{stepEntry("count", "again")}) }))
	r.TraceCount++
	r.Checkpoint.Steps++
	r.CurrentStep, r.Checkpoint.Calls = "", map[string]workflow.Call{}
	r.Status, r.Outcome, r.Output = store.RunCompleted, new(workflow.OutcomeOK), workflow.Object{"count": 7.0}
	r.UpdatedAt = time.Now().UTC()
	end = c.of(func() error { return s.RecordProgress(ctx, r, []workflow.TraceEntry{stepEntry("again", workflow.End)}) })
	return create, steps, end
}

// TestAStepCommitWritesFewPages counts the write-ahead log's frames of the
// commits of warm runs, in a store that already holds warmRuns runs, and
// keeps a step commit's within stepCommitPages on average.
func TestAStepCommitWritesFewPages(t *testing.T) {
	is := is.New(t)
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "mcpflow.db")
	// Sync normal: the frames are the same, the test spares the syncs.
	s, err := Open(ctx, path, WithSync(SyncNormal), func(o *options) { o.checkpointPages = 0 })
	is.NoErr(err)
	defer s.Close()
	c := commitPages{t: t, wal: path + "-wal"}
	is.NoErr(s.read.QueryRowContext(ctx, "PRAGMA page_size").Scan(&c.pageSize))

	for range warmRuns {
		runPages(t, ctx, s, c)
	}
	var create, steps, end, stepCommits int64
	for range countedRuns {
		cr, st, en := runPages(t, ctx, s, c)
		create, end = create+cr, end+en
		for _, n := range st {
			steps += n
			stepCommits++
		}
	}
	perStep := float64(steps) / float64(stepCommits)
	t.Logf("WAL frames per commit over %d runs after %d: create %.2f, step %.2f, end %.2f; a run %.2f",
		countedRuns, warmRuns, float64(create)/countedRuns, perStep, float64(end)/countedRuns,
		float64(create+steps+end)/countedRuns)
	is.True(perStep <= stepCommitPages) // a step commit's pages, on average
}
