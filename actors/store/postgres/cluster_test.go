package postgres_test

import (
	"errors"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/store/postgres"
	"github.com/mcpflow/mcpflow/actors/store/postgres/pgtest"
	"github.com/mcpflow/mcpflow/actors/workflow"
)

// clusterStart is when the runs of the cluster tests start.
var clusterStart = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// clusterRun is a new run id with status.
func clusterRun(id, status string) store.Run {
	return store.Run{ID: id, DeploymentID: "dep", ArtifactID: "wf", ArtifactVersion: 1, Status: status,
		CurrentStep: "fetch", CreatedAt: clusterStart, UpdatedAt: clusterStart}
}

// step returns r after one more step, with status, and the step's entry.
func step(r store.Run, status string) (store.Run, []workflow.TraceEntry) {
	r.Status = status
	r.TraceCount++
	r.UpdatedAt = r.UpdatedAt.Add(time.Second)
	return r, []workflow.TraceEntry{{FrameID: "root", NodeID: "step-" + strconv.Itoa(r.TraceCount), NextNodeID: "next"}}
}

// nodeOf is the node that runs.node names for run id.
func nodeOf(t *testing.T, dsn, id string) string {
	t.Helper()
	nodes := query[string](t, dsn, `SELECT node FROM runs WHERE id = '`+id+`'`)
	is.New(t).Equal(len(nodes), 1) // the run exists
	return nodes[0]
}

// testFence has node b claim a run of node a, as a survivor does when a
// seems dead: a's next commit of the run is fenced off, while b goes on.
// An interrupted run may be committed by any node, and becomes its; a
// finished one only by the node that finished it, so that a node waking
// up late cannot overwrite the end a survivor recorded.
func testFence(t *testing.T, srv *pgtest.Server) {
	is := is.New(t)
	ctx := t.Context()
	dsn := srv.NewDatabase(t)
	a, b := open(t, dsn, postgres.WithNode("a")), open(t, dsn, postgres.WithNode("b"))

	r := clusterRun("run", store.RunRunning)
	is.NoErr(a.CreateRun(ctx, r, nil))
	is.Equal(nodeOf(t, dsn, "run"), "a") // created by a: a's
	r, entries := step(r, store.RunRunning)
	is.NoErr(a.RecordProgress(ctx, r, entries))

	claimed, err := b.ClaimRuns(ctx, "a")
	is.NoErr(err)
	is.Equal(len(claimed), 1)
	is.Equal(nodeOf(t, dsn, "run"), "b")

	late, entries := step(r, store.RunRunning)
	err = a.RecordProgress(ctx, late, entries)
	is.True(errors.Is(err, store.ErrFenced))    // a lost the run
	is.True(!errors.Is(err, store.ErrConflict)) // and is told so, not that it raced
	got, err := b.GetRun(ctx, "run")
	is.NoErr(err)
	is.Equal(got, claimed[0]) // the fenced commit changed nothing
	trace, err := b.ReadTrace(ctx, "run", 0, 0)
	is.NoErr(err)
	is.Equal(len(trace), 1)

	wrong, entries := step(r, store.RunRunning)
	wrong.TraceCount += 5
	err = b.RecordProgress(ctx, wrong, entries)
	is.True(errors.Is(err, store.ErrConflict)) // the owner's wrong count is a conflict
	is.True(!errors.Is(err, store.ErrFenced))  // not a fence

	r, entries = step(r, store.RunInterrupted)
	is.NoErr(b.RecordProgress(ctx, r, entries)) // b goes on, and pauses the run
	r, entries = step(r, store.RunRunning)
	is.NoErr(a.RecordProgress(ctx, r, entries)) // any node may resume an interrupted run
	is.Equal(nodeOf(t, dsn, "run"), "a")        // which is then its
	stale, entries := step(r, store.RunRunning)
	is.True(errors.Is(b.RecordProgress(ctx, stale, entries), store.ErrFenced)) // b no longer runs it

	r, entries = step(r, store.RunFailed)
	is.NoErr(a.RecordProgress(ctx, r, entries)) // a ends the run, as a survivor does a claimed one
	late, entries = step(r, store.RunCompleted)
	is.True(errors.Is(b.RecordProgress(ctx, late, entries), store.ErrFenced)) // a late node cannot overwrite that end
	got, err = a.GetRun(ctx, "run")
	is.NoErr(err)
	is.Equal(got.Status, store.RunFailed)
}

// testClaimRuns claims the runs of a store used by one node alone, and a
// node's own: only running runs move, and each comes back as stored.
func testClaimRuns(t *testing.T, srv *pgtest.Server) {
	is := is.New(t)
	ctx := t.Context()
	dsn := srv.NewDatabase(t)
	solo, a := open(t, dsn), open(t, dsn, postgres.WithNode("a"))
	// A run interrupted by its server's request waited in a live actor,
	// its call out: it is claimed as a running run is.
	asked := clusterRun("solo-asked", store.RunInterrupted)
	asked.Interrupt = &workflow.Interrupt{ID: "upstream:c:g1.1", NodeID: "fetch", Kind: "elicitation"}
	for _, r := range []store.Run{
		clusterRun("solo-2", store.RunRunning), clusterRun("solo-1", store.RunRunning),
		clusterRun("solo-paused", store.RunInterrupted), clusterRun("solo-done", store.RunCompleted), asked,
	} {
		is.NoErr(solo.CreateRun(ctx, r, nil))
	}
	is.NoErr(a.CreateRun(ctx, clusterRun("a-1", store.RunRunning), nil))
	is.Equal(nodeOf(t, dsn, "solo-1"), "") // a store of one node alone runs them as node ""

	claimed, err := a.ClaimRuns(ctx, "")
	is.NoErr(err)
	ids := []string{}
	for _, r := range claimed {
		ids = append(ids, r.ID)
		stored, err := a.GetRun(ctx, r.ID)
		is.NoErr(err)
		is.Equal(r, stored)                                           // as stored
		is.True(r.Status == store.RunRunning || r.ID == "solo-asked") // still running
		is.Equal(nodeOf(t, dsn, r.ID), "a")                           // now a's
	}
	is.Equal(ids, []string{"solo-1", "solo-2", "solo-asked"}) // the running ones and the one waiting on its server, by id
	is.Equal(nodeOf(t, dsn, "solo-paused"), "")               // the others stay

	again, err := a.ClaimRuns(ctx, "")
	is.NoErr(err)
	is.Equal(len(again), 0) // nothing left to claim

	own, err := a.ClaimRuns(ctx, "a")
	is.NoErr(err)
	ids = []string{}
	for _, r := range own {
		ids = append(ids, r.ID)
	}
	is.Equal(ids, []string{"a-1", "solo-1", "solo-2", "solo-asked"}) // a node's own, at its start
}

// testClaimRunsRace has two nodes claim a dead node's runs at once: each
// run goes to exactly one of them.
func testClaimRunsRace(t *testing.T, srv *pgtest.Server) {
	const runs = 300
	is := is.New(t)
	ctx := t.Context()
	dsn := srv.NewDatabase(t)
	dead, other := open(t, dsn, postgres.WithNode("dead")), open(t, dsn, postgres.WithNode("other"))
	want := []string{}
	for i := range runs {
		id := "run-" + strconv.Itoa(i)
		is.NoErr(dead.CreateRun(ctx, clusterRun(id, store.RunRunning), nil))
		want = append(want, id)
	}
	is.NoErr(dead.CreateRun(ctx, clusterRun("done", store.RunCompleted), nil))
	is.NoErr(other.CreateRun(ctx, clusterRun("theirs", store.RunRunning), nil))

	survivors := []*postgres.Store{open(t, dsn, postgres.WithNode("x")), open(t, dsn, postgres.WithNode("y"))}
	claimed := make([][]store.Run, len(survivors))
	errs := make([]error, len(survivors))
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, s := range survivors {
		wg.Go(func() {
			<-start
			claimed[i], errs[i] = s.ClaimRuns(ctx, "dead")
		})
	}
	close(start)
	wg.Wait()

	got := []string{}
	for i := range survivors {
		is.NoErr(errs[i])
		for _, r := range claimed[i] {
			got = append(got, r.ID)
		}
	}
	slices.Sort(got)
	slices.Sort(want)
	is.Equal(got, want) // every running run once: disjoint, and together all of them
	for i, node := range []string{"x", "y"} {
		n := query[int](t, dsn, `SELECT count(*)::int FROM runs WHERE node = '`+node+`'`)
		is.Equal(n[0], len(claimed[i])) // each has what it was told it has
	}
	is.Equal(nodeOf(t, dsn, "done"), "dead")    // a finished run is not claimed
	is.Equal(nodeOf(t, dsn, "theirs"), "other") // nor another node's
}

// testRecoverRunningOfItsNode recovers at a node's start: only the runs
// that node was running fail, not those other nodes are running.
func testRecoverRunningOfItsNode(t *testing.T, srv *pgtest.Server) {
	is := is.New(t)
	ctx := t.Context()
	dsn := srv.NewDatabase(t)
	stores := map[string]*postgres.Store{
		"a": open(t, dsn, postgres.WithNode("a")), "b": open(t, dsn, postgres.WithNode("b")), "": open(t, dsn),
	}
	for node, s := range stores {
		is.NoErr(s.CreateRun(ctx, clusterRun("run-of-"+node, store.RunRunning), nil))
	}
	status := func(id string) string {
		r, err := stores["a"].GetRun(ctx, id)
		is.NoErr(err)
		return r.Status
	}

	recovered, err := stores["a"].RecoverRunning(ctx, clusterStart.Add(time.Hour))
	is.NoErr(err)
	is.Equal(len(recovered), 1)
	is.Equal(recovered[0].ID, "run-of-a")
	is.Equal(status("run-of-a"), store.RunFailed)
	is.Equal(status("run-of-b"), store.RunRunning) // b's runs go on
	is.Equal(status("run-of-"), store.RunRunning)  // so do those of a store of one node, which a claims first

	recovered, err = stores[""].RecoverRunning(ctx, clusterStart.Add(time.Hour))
	is.NoErr(err)
	is.Equal(len(recovered), 1)
	is.Equal(recovered[0].ID, "run-of-") // one node alone recovers its own, as before
	is.Equal(status("run-of-b"), store.RunRunning)
}
