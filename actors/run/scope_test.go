package run_test

import (
	"context"
	"testing"
	"time"

	"github.com/anthdm/hollywood/actor"
	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/guard"
	"github.com/mcpflow/mcpflow/actors/reply"
	"github.com/mcpflow/mcpflow/actors/run"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/supervisor"
	"github.com/mcpflow/mcpflow/actors/workflow"
	"github.com/mcpflow/mcpflow/fakes"
)

// observedWorld is newWorld whose upstream closes the test sees.
func observedWorld(t *testing.T) (*world, *fakes.CloseObserver) {
	t.Helper()
	is := is.New(t)
	is.Helper()
	e, err := actor.NewEngine(actor.NewEngineConfig())
	is.NoErr(err) // new engine
	mem := fakes.NewInMemory(nil)
	w := &world{engine: e, store: store.NewMemory(), rec: fakes.NewRecording(mem), mem: mem}
	w.replies = newRouter(t, e)
	w.writes = &progressLog{Memory: w.store}
	obs := fakes.ObserveCloses(w.rec)
	opts := supervisor.DefaultOptions()
	opts.Session.ConnectTimeout, opts.Session.CallTimeout, opts.Session.CloseTimeout = 2*time.Second, 2*time.Second, time.Second
	conns := []config.Connection{{Kind: "mcp", ID: "fake.one", Transport: config.Transport{Kind: "inmemory"}}}
	w.sup = supervisor.Spawn(e, conns, obs, w.store, opts)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), patience)
		defer cancel()
		is.NoErr(w.sup.Stop(ctx)) // stop supervisor
	})
	return w, obs
}

// runScoped runs plan to its end as run id of deployment dep, its calls
// to fake.one in scope ("" shared), and returns the final record.
func (w *world) runScoped(t *testing.T, id, dep string, plan workflow.Plan, scope string) store.Run {
	t.Helper()
	is := is.New(t)
	is.Helper()
	targets, err := run.Resolve(workflow.Program{Root: plan}, nil, func(c string) bool { return c == "fake.one" })
	is.NoErr(err) // resolve the plan's targets
	var scopes map[string]string
	if scope != "" {
		scopes = map[string]string{"fake.one": scope}
	}
	now := time.Now().UTC()
	done := reply.Expect[run.Stopped](w.replies)
	engine := w.engine
	w.engine.Spawn(guard.Producer(run.New(run.Spec{
		Record: store.Run{
			ID: id, DeploymentID: dep, ArtifactID: "art-1", ArtifactVersion: 1,
			Status: store.RunRunning, ResumeReadiness: "not_applicable", Input: workflow.Object{},
			CreatedAt: now, UpdatedAt: now,
		},
		Program: workflow.Program{Root: plan}, Targets: targets, Scopes: scopes,
		Supervisor: w.sup.PID(), Lines: w.sup.Lines(), Store: w.writes,
		CallTimeout: 2 * time.Second, StoreTimeout: 2 * time.Second, Done: done.To(),
	}), func(p guard.Panic) { engine.Send(p.PID, p) }), "run", actor.WithID(id))
	stopped, err := done.Wait(wait(t))
	final := stopped.Run
	is.NoErr(err) // the run finished
	is.Equal(final.Status, store.RunCompleted)
	return final
}

func TestARunsOwnSessionClosesWhenTheRunEnds(t *testing.T) {
	is := is.New(t)
	w, obs := observedWorld(t)
	plan := w.plan(t, "counter") // lists the catalog on the shared session

	is.Equal(w.runScoped(t, "shared-1", "dep-1", plan, "").Output["count"], 1.0)
	is.Equal(w.runScoped(t, "shared-2", "dep-1", plan, "").Output["count"], 2.0) // runs share by default

	closed := obs.Closed()
	for _, id := range []string{"own-1", "own-2"} {
		is.Equal(w.runScoped(t, id, "dep-1", plan, supervisor.RunScope(id)).Output["count"], 1.0) // a fresh session each
		obs.WaitClosed(t, 1, patience)                                                            // closed when the run ended
	}
	is.Equal(obs.Closed(), closed+2)

	dep := supervisor.DeploymentScope("dep-1")
	is.Equal(w.runScoped(t, "dep-1", "dep-1", plan, dep).Output["count"], 1.0)
	is.Equal(w.runScoped(t, "dep-2", "dep-1", plan, dep).Output["count"], 2.0) // outlives each run
	is.Equal(w.runScoped(t, "shared-3", "dep-1", plan, "").Output["count"], 3.0)
	is.Equal(w.rec.SessionsCreated(), 4) // shared, own-1, own-2, dep-1
}
