package runs_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/anthdm/hollywood/actor"
	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/catalog"
	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/reply/replytest"
	"github.com/mcpflow/mcpflow/actors/runs"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/supervisor"
	"github.com/mcpflow/mcpflow/actors/workflow"
	"github.com/mcpflow/mcpflow/fakes"
)

// patience bounds every wait that only a broken manager would reach.
const patience = 10 * time.Second

// node is a run manager with no API above it: an engine, a supervisor
// over an in-memory fake upstream ("fake.one"), an in-memory store and a
// deployment "count" of the one-step workflow of fake.one's counter tool.
// extra are effective connections the supervisor was not given, so that a
// probe of one fails.
type node struct {
	store   *store.Memory
	manager *runs.Manager
	sup     *supervisor.Handle
}

func newNode(t *testing.T, extra ...config.Connection) *node {
	t.Helper()
	return newNodeTuned(t, nil, extra...)
}

// newNodeTuned is newNode with its manager's config as tune changes it
// (nil: as it is).
func newNodeTuned(t *testing.T, tune func(*runs.Config), extra ...config.Connection) *node {
	t.Helper()
	return newNodeSupervised(t, nil, tune, extra...)
}

// newNodeSupervised is newNodeTuned whose supervisor's options
// tuneSupervisor changes (nil: as they are).
func newNodeSupervised(t *testing.T, tuneSupervisor func(*supervisor.Options), tune func(*runs.Config), extra ...config.Connection) *node {
	t.Helper()
	is := is.New(t)
	is.Helper()
	e, err := actor.NewEngine(actor.NewEngineConfig())
	is.NoErr(err) // new engine
	st := store.NewMemory()
	conns := []config.Connection{{Kind: "mcp", ID: "fake.one", Transport: config.Transport{Kind: "inmemory"}}}
	opts := supervisor.DefaultOptions()
	opts.Session.ConnectTimeout, opts.Session.CallTimeout, opts.Session.CloseTimeout = 2*time.Second, 2*time.Second, time.Second
	if tuneSupervisor != nil {
		tuneSupervisor(&opts)
	}
	sup := supervisor.Spawn(e, conns, fakes.NewInMemory(nil), st, opts)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), patience)
		defer cancel()
		is.NoErr(sup.Stop(ctx)) // stop the supervisor
	})
	ctx := bounded(t)
	snap, err := sup.RefreshCatalog(ctx, "fake.one")
	is.NoErr(err) // fake.one lists its tools
	var plan workflow.Plan
	for _, c := range snap.Capabilities() {
		if c.Name == "fake.one.counter" {
			draft, _ := workflow.Scaffold(c, workflow.ScaffoldOptions{})
			plan, err = workflow.Compile(draft)
			is.NoErr(err) // the scaffolded draft compiles
		}
	}
	is.Equal(plan.Start != "", true) // fake.one has a counter tool
	_, err = st.SaveArtifact(ctx, store.Artifact{ID: "count", Version: 1, Title: "Count", Kind: "workflow", Plan: plan,
		InputSchema: plan.InputSchema, OutputSchema: plan.OutputSchema, Outcomes: plan.Outcomes})
	is.NoErr(err) // the artifact is saved
	is.NoErr(st.SaveDeployment(ctx, store.Deployment{ID: "count", ArtifactID: "count", ArtifactVersion: 1, DriftPolicy: "block",
		Bindings: []store.Binding{{LogicalSource: "fake.one", ConcreteSource: "fake.one"}}})) // the deployment is saved
	cfg := runs.Config{
		Engine: e, Supervisor: sup, Replies: replytest.Router(t, e, "runs"), Store: st,
		Catalogs: catalog.NewRegistry([]catalog.Snapshot{snap}), Connections: config.NewView(append(conns, extra...)), CallTimeout: 2 * time.Second,
	}
	if tune != nil {
		tune(&cfg)
	}
	return &node{store: st, manager: runs.New(cfg), sup: sup}
}

func bounded(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	t.Cleanup(cancel)
	return ctx
}

// A run starts, runs and is answered finished through the manager alone;
// once it has ended it is no longer live, so a cancel of it is refused
// from its record.
func TestAOneStepRunRunsThroughTheManagerAlone(t *testing.T) {
	is := is.New(t)
	n := newNode(t)
	ctx := bounded(t)
	res, err := n.manager.Start(ctx, runs.StartRequest{DeploymentID: "count", StartedBy: "test", Wait: patience})
	is.NoErr(err)                                // the run starts
	is.True(res.Unrunnable == nil)               // the deployment is runnable
	is.Equal(res.Run.Status, store.RunCompleted) // answered once finished
	is.Equal(res.Run.StartedBy, "test")
	stored, err := n.store.GetRun(ctx, res.Run.ID)
	is.NoErr(err)                               // the run is in the store
	is.Equal(stored.Status, store.RunCompleted) // as it ended
	is.Equal(stored.Output, res.Run.Output)     // with the output answered

	_, err = n.manager.Cancel(ctx, res.Run.ID, "late")
	var refused *runs.Error
	is.True(errors.As(err, &refused)) // a finished run cannot be cancelled
	is.Equal(refused.Kind, runs.Invalid)
	is.Equal(refused.Message, `workflow run "`+res.Run.ID+`" is completed; only a running or interrupted run can be cancelled`)
}

// Failures are typed: a missing deployment is a StoreError wrapping the
// store's ErrNotFound, and once the manager stops accepting runs nothing
// starts and the drain has nothing to wait for.
func TestTheManagersFailuresAreTyped(t *testing.T) {
	is := is.New(t)
	n := newNode(t)
	ctx := bounded(t)
	_, err := n.manager.Start(ctx, runs.StartRequest{DeploymentID: "nope"})
	var missing *runs.StoreError
	is.True(errors.As(err, &missing))          // a store failure
	is.True(errors.Is(err, store.ErrNotFound)) // of a record that does not exist
	is.Equal(missing.What, `deployment "nope"`)

	n.manager.StopAccepting()
	_, err = n.manager.Start(ctx, runs.StartRequest{DeploymentID: "count", Wait: patience})
	is.True(errors.Is(err, runs.ErrShuttingDown)) // refused once stopping
	stopped, err := n.manager.Drain(ctx, time.Now().Add(patience))
	is.NoErr(err)                         // nothing was live
	is.Equal(stopped, runs.RunsStopped{}) // so nothing finished or halted
}

// TestACancelOfARunningRunThatNoActorRunsDoesNotContradictItself: a run
// the store has running but no live actor answers for (its node died
// before another claimed it, say) is refused saying so, and how it ends;
// it was refused as "is running; only a running or interrupted run can
// be cancelled".
func TestACancelOfARunningRunThatNoActorRunsDoesNotContradictItself(t *testing.T) {
	is := is.New(t)
	n := newNode(t)
	ctx := bounded(t)
	now := time.Now().UTC()
	is.NoErr(n.store.CreateRun(ctx, store.Run{ID: "run_orphan", DeploymentID: "count", Status: store.RunRunning, CreatedAt: now, UpdatedAt: now}, nil))

	_, err := n.manager.Cancel(ctx, "run_orphan", "")
	var refused *runs.Error
	is.True(errors.As(err, &refused)) // refused
	is.Equal(refused.Kind, runs.Invalid)
	is.Equal(refused.Message, `workflow run "run_orphan" is running, but no live run answered its cancel within 10s; retry, or it is recovered at the next start of its node`)
}

// A start that the store refuses because the node's cluster membership
// lapsed waits for the node to rejoin and is tried once more: the run is
// created then, under the same id, and runs to its end.
func TestAStartOnANodeWhoseMembershipLapsedWaitsForItToRejoin(t *testing.T) {
	is := is.New(t)
	var lapsed *fakes.Lapsed
	n := newNodeTuned(t, func(cfg *runs.Config) {
		lapsed = fakes.NewLapsed(cfg.Store)
		cfg.Store, cfg.Member, cfg.MemberWait = lapsed, lapsed, patience
	})
	ctx := bounded(t)
	type started struct {
		res runs.StartResult
		err error
	}
	answered := make(chan started, 1)
	go func() {
		res, err := n.manager.Start(ctx, runs.StartRequest{DeploymentID: "count", Wait: patience})
		answered <- started{res, err}
	}()
	select {
	case <-lapsed.Waiting(): // the start waits for the node to rejoin
	case <-ctx.Done():
		t.Fatal("the start did not wait for the node to rejoin")
	}
	is.Equal(lapsed.Refused(), 1) // its create was refused once
	runsNow, _, err := n.store.ListRuns(ctx, store.RunQuery{})
	is.NoErr(err)
	is.Equal(len(runsNow), 0) // and wrote nothing
	lapsed.Rejoin()
	got := <-answered
	is.NoErr(got.err)                                // the start is answered
	is.Equal(got.res.Run.Status, store.RunCompleted) // with its run, which ran once created
	stored, err := n.store.GetRun(ctx, got.res.Run.ID)
	is.NoErr(err)
	is.Equal(stored.Status, store.RunCompleted)
	is.Equal(lapsed.Refused(), 1) // the second try was not refused
}

// A node that does not rejoin within the wait answers runs.ErrNotMember:
// nothing was created, and the client may retry.
func TestAStartOnANodeThatDoesNotRejoinIsRefusedAsRetryable(t *testing.T) {
	is := is.New(t)
	var lapsed *fakes.Lapsed
	n := newNodeTuned(t, func(cfg *runs.Config) {
		lapsed = fakes.NewLapsed(cfg.Store)
		cfg.Store, cfg.Member, cfg.MemberWait = lapsed, lapsed, time.Millisecond
	})
	ctx := bounded(t)
	_, err := n.manager.Start(ctx, runs.StartRequest{DeploymentID: "count", Wait: patience})
	is.True(errors.Is(err, runs.ErrNotMember)) // refused, as retryable
	is.Equal(lapsed.Refused(), 1)              // after one try: the wait ended first
	list, _, err := n.store.ListRuns(ctx, store.RunQuery{})
	is.NoErr(err)
	is.Equal(len(list), 0) // nothing created
}
