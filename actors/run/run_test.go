package run_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/anthdm/hollywood/actor"
	"github.com/matryer/is"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/guard"
	"github.com/mcpflow/mcpflow/actors/metrics"
	"github.com/mcpflow/mcpflow/actors/reply"
	"github.com/mcpflow/mcpflow/actors/reply/replytest"
	"github.com/mcpflow/mcpflow/actors/run"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/supervisor"
	"github.com/mcpflow/mcpflow/actors/workflow"
	"github.com/mcpflow/mcpflow/fakes"
)

// patience bounds every wait that only a broken actor would reach.
const patience = 5 * time.Second

func wait(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	t.Cleanup(cancel)
	return ctx
}

// newRouter spawns a router for the answers runs give the test, stopped
// with it.
func newRouter(tb testing.TB, e *actor.Engine) *reply.Router {
	tb.Helper()
	return replytest.Router(tb, e, "test")
}

// world is an engine with a supervisor over an in-memory fake upstream
// ("fake.one") and an in-memory store.
type world struct {
	engine *actor.Engine
	sup    *supervisor.Handle
	store  *store.Memory
	rec    *fakes.Recording
	mem    *fakes.InMemory
	writes *progressLog
	// callTimeout bounds each call (2 s when 0).
	callTimeout time.Duration
	// runs, when set, is the store runs commit to instead of writes.
	runs store.Runs
	// metrics are what every run of the world records.
	metrics *metrics.Metrics
	// replies delivers the runs' answers to the tests.
	replies *reply.Router
}

// progressLog is the run store, noting every record it is given.
type progressLog struct {
	*store.Memory
	mu      sync.Mutex
	records []store.Run
}

func (l *progressLog) RecordProgress(ctx context.Context, r store.Run, entries []workflow.TraceEntry) error {
	l.mu.Lock()
	l.records = append(l.records, r)
	l.mu.Unlock()
	return l.Memory.RecordProgress(ctx, r, entries)
}

// SubmitCommit writes in place, as the memory store does, through
// RecordProgress above (the embedded store's would bypass it).
func (l *progressLog) SubmitCommit(ctx context.Context, c store.Commit, done func(store.CommitOutcome)) {
	done(store.CommitInPlace(ctx, l, c))
}

func (l *progressLog) written() []store.Run {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]store.Run(nil), l.records...)
}

func newWorld(t *testing.T) *world {
	t.Helper()
	return newWorldServing(t, nil)
}

// newWorldServing is newWorld whose upstreams newServer builds (nil:
// fakes.NewServer).
func newWorldServing(t *testing.T, newServer func() *mcp.Server) *world {
	t.Helper()
	return newWorldOf(t, newServer, nil, "")
}

// newWorldSpeaking is newWorldServing whose sessions ask for MCP
// version.
func newWorldSpeaking(t *testing.T, newServer func() *mcp.Server, version string) *world {
	t.Helper()
	return newWorldOf(t, newServer, nil, version)
}

// newWorldAnswering is newWorldServing whose connection answers its
// server as client says (nil: the defaults).
func newWorldAnswering(t *testing.T, newServer func() *mcp.Server, client *config.Client) *world {
	t.Helper()
	return newWorldOf(t, newServer, client, "")
}

// newWorldOf is newWorldServing whose connection answers its server as
// client says (nil: the defaults) and whose sessions ask for MCP version
// (the supervisor's default when "").
func newWorldOf(t *testing.T, newServer func() *mcp.Server, client *config.Client, version string) *world {
	t.Helper()
	return newWorldTuned(t, newServer, client, version, nil)
}

// newWorldTuned is newWorldOf whose supervisor's options tune edits
// (nil: none).
func newWorldTuned(t *testing.T, newServer func() *mcp.Server, client *config.Client, version string, tune func(*supervisor.Options)) *world {
	t.Helper()
	is := is.New(t)
	is.Helper()
	e, err := actor.NewEngine(actor.NewEngineConfig())
	is.NoErr(err) // new engine
	mem := fakes.NewInMemory(newServer)
	w := &world{engine: e, store: store.NewMemory(), rec: fakes.NewRecording(mem), mem: mem, metrics: metrics.New()}
	w.writes = &progressLog{Memory: w.store}
	w.replies = newRouter(t, e)
	opts := supervisor.DefaultOptions()
	opts.Session.ConnectTimeout, opts.Session.CallTimeout, opts.Session.CloseTimeout = 2*time.Second, 2*time.Second, time.Second
	opts.Session.ProtocolVersion = cmp.Or(version, opts.Session.ProtocolVersion)
	if tune != nil {
		tune(&opts)
	}
	conns := []config.Connection{{Kind: "mcp", ID: "fake.one", Transport: config.Transport{Kind: "inmemory"}, Client: client}}
	w.sup = supervisor.Spawn(e, conns, w.rec, w.store, opts)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), patience)
		defer cancel()
		is.NoErr(w.sup.Stop(ctx)) // stop supervisor
	})
	return w
}

// plan scaffolds and compiles the one-step workflow of a fake.one tool.
func (w *world) plan(t *testing.T, tool string) workflow.Plan {
	t.Helper()
	is := is.New(t)
	is.Helper()
	snap, err := w.sup.RefreshCatalog(wait(t), "fake.one")
	is.NoErr(err) // refresh catalog
	for _, c := range snap.Capabilities() {
		if c.Name == "fake.one."+tool {
			draft, _ := workflow.Scaffold(c, workflow.ScaffoldOptions{})
			plan, err := workflow.Compile(draft)
			is.NoErr(err) // compile the scaffolded draft
			return plan
		}
	}
	t.Logf("no capability fake.one.%s in %v", tool, snap.Tools)
	is.Fail() // the tool is in fake.one's catalog
	return workflow.Plan{}
}

// start spawns a run actor of plan, as the service does, and returns its
// start acknowledgement and its final record.
func (w *world) start(t *testing.T, id string, plan workflow.Plan, input workflow.Object) (run.Started, store.Run) {
	t.Helper()
	return w.startWith(t, id, plan, input, workflow.Options{})
}

// startWith is start with execution options.
func (w *world) startWith(t *testing.T, id string, plan workflow.Plan, input workflow.Object, opts workflow.Options) (run.Started, store.Run) {
	t.Helper()
	l := w.launch(t, id, plan, input, opts, time.Time{})
	return l.ack, l.stopped(t)
}

// launched is a run actor a test spawned, acknowledged.
type launched struct {
	pid  *actor.PID
	ack  run.Started
	done *reply.Expected[run.Stopped]
	// patience bounds the wait for done.
	patience time.Duration
}

// stopped waits for the run to stop or pause, and returns its record.
func (l launched) stopped(t *testing.T) store.Run {
	t.Helper()
	is := is.New(t)
	is.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), l.patience)
	defer cancel()
	stopped, err := l.done.Wait(ctx)
	if err != nil {
		t.Logf("run %s not done: %v", l.ack.Run.ID, err)
	}
	is.NoErr(err) // the run finished
	return stopped.Run
}

// launch spawns a run actor of plan, as the service does, and waits for
// its start acknowledgement.
func (w *world) launch(t *testing.T, id string, plan workflow.Plan, input workflow.Object, opts workflow.Options, deadline time.Time) launched {
	t.Helper()
	now := time.Now().UTC()
	return w.launchRecord(t, store.Run{
		ID: id, DeploymentID: "dep-1", ArtifactID: "art-1", ArtifactVersion: 1,
		Status: store.RunRunning, ResumeReadiness: "not_applicable", Input: input,
		CreatedAt: now, UpdatedAt: now,
	}, plan, opts, deadline, nil, nil)
}

// launchRecord is launch of the run rec (a new one, or one recovered
// from its checkpoint, resumed with resume when not nil), whose calls
// lost are lost (run.Spec.Lost).
func (w *world) launchRecord(t *testing.T, rec store.Run, plan workflow.Plan, opts workflow.Options, deadline time.Time, lost map[string]string, resume *run.Resume) launched {
	t.Helper()
	is := is.New(t)
	is.Helper()
	id := rec.ID
	targets, err := run.Resolve(workflow.Program{Root: plan}, nil, func(c string) bool { return c == "fake.one" })
	is.NoErr(err) // resolve the plan's targets
	started, done := reply.Expect[run.Started](w.replies), reply.Expect[run.Stopped](w.replies)
	engine := w.engine
	var runs store.Runs = w.writes
	if w.runs != nil {
		runs = w.runs
	}
	pid := w.engine.Spawn(guard.Producer(run.New(run.Spec{
		Record:  rec,
		Program: workflow.Program{Root: plan}, Targets: targets, Options: opts, Deadline: deadline, Lost: lost, Resume: resume,
		Supervisor: w.sup.PID(), Lines: w.sup.Lines(), Store: runs,
		CallTimeout: cmp.Or(w.callTimeout, 2*time.Second), StoreTimeout: 2 * time.Second,
		Started: started.To(), Done: done.To(), Metrics: w.metrics,
	}), func(p guard.Panic) { engine.Send(p.PID, p) }), "run", actor.WithID(incarnation(id)))
	ack, err := started.Wait(wait(t))
	if err != nil {
		t.Logf("run %s not acknowledged: %v", id, err)
	}
	is.NoErr(err) // the run acknowledged its start
	return launched{pid: pid, ack: ack, done: done, patience: patience + w.callTimeout}
}

// spawnRun spawns a run actor of plan for record rec, resumed with
// resume when not nil, as the service does, and returns its start
// acknowledgement and its final record.
func (w *world) spawnRun(t *testing.T, rec store.Run, plan workflow.Plan, opts workflow.Options, resume *run.Resume) (run.Started, store.Run) {
	t.Helper()
	l := w.launchRecord(t, rec, plan, opts, time.Time{}, nil, resume)
	return l.ack, l.stopped(t)
}

func TestRunCompletesAndStoresItsRecordWithTheTrace(t *testing.T) {
	is := is.New(t)
	w := newWorld(t)
	plan := w.plan(t, "echo")

	ack, final := w.start(t, "run-ok", plan, workflow.Object{"message": "hi"})
	is.NoErr(ack.Error.Err()) // acknowledged once committed
	is.Equal(ack.Run.ID, "run-ok")
	is.Equal(final.Status, store.RunCompleted)
	is.Equal(*final.Outcome, workflow.OutcomeOK)
	is.Equal(final.Error, nil)
	is.Equal(final.Output, workflow.Object{"message": "hi"})

	stored, err := w.store.GetRun(wait(t), "run-ok")
	is.NoErr(err)
	is.Equal(stored.Status, store.RunCompleted)
	is.Equal(stored.Output, workflow.Object{"message": "hi"})
	is.Equal(stored.TraceCount, 1)
	is.Equal(stored.CurrentStep, "") // finished
	trace, err := w.store.ReadTrace(wait(t), "run-ok", 0, 0)
	is.NoErr(err)
	is.Equal(len(trace), 1)
	is.Equal(trace[0].NodeID, workflow.CallStep)
	is.Equal(trace[0].Outcome, workflow.OutcomeOK)
	is.Equal(trace[0].NextNodeID, workflow.End)
	is.Equal(trace[0].ResolvedInput, workflow.Object{"message": "hi"})
	is.Equal(trace[0].Output, workflow.Object{"message": "hi"})

	calls := w.rec.ToolCalls()
	is.Equal(len(calls), 1)
	is.Equal(calls[0].Name, "echo") // the tool ran upstream, on fake.one
	is.Equal(calls[0].Connection, "fake.one")
}

// A running record names the step in flight, which crash recovery reports;
// a step that routed to the end is committed with the final record.
func TestEveryStoredRunningRecordNamesARealStep(t *testing.T) {
	is := is.New(t)
	w := newWorld(t)
	w.start(t, "run-ok", w.plan(t, "echo"), workflow.Object{"message": "hi"})
	w.start(t, "run-fail", w.plan(t, "fail"), workflow.Object{})

	steps := map[string]bool{workflow.CallStep: true, workflow.ErrorStep: true}
	for _, r := range w.writes.written() {
		if r.Status == store.RunRunning {
			is.True(steps[r.CurrentStep]) // not "" nor the end marker
		} else {
			is.Equal(r.CurrentStep, "") // finished
		}
	}
}

func TestToolErrorRoutedToRuntimeErrorFailsTheRun(t *testing.T) {
	is := is.New(t)
	w := newWorld(t)
	plan := w.plan(t, "fail")
	is.True(len(plan.Capabilities()) == 2) // the tool and wf.std.runtime_error

	ack, final := w.start(t, "run-fail", plan, workflow.Object{})
	is.NoErr(ack.Error.Err())
	is.Equal(final.Status, store.RunFailed)
	is.Equal(*final.Error, `step "tool_error": fail failed: fake failure`) // the tool's own words
	is.Equal(final.Outcome, nil)
	is.Equal(final.Output, nil)

	stored, err := w.store.GetRun(wait(t), "run-fail")
	is.NoErr(err)
	is.Equal(stored.Status, store.RunFailed)
	is.Equal(*stored.Error, `step "tool_error": fail failed: fake failure`)
	trace, err := w.store.ReadTrace(wait(t), "run-fail", 0, 0)
	is.NoErr(err)
	is.Equal(len(trace), stored.TraceCount)
	is.Equal(trace[0].NodeID, workflow.CallStep)
	is.Equal(trace[0].Outcome, workflow.OutcomeError) // the tool error was routed
	is.Equal(trace[0].NextNodeID, workflow.ErrorStep)
	is.Equal(trace[0].Error, "fake failure") // and its reason is the step's error
}

func TestCallThatCannotBeMadeFailsTheRun(t *testing.T) {
	is := is.New(t)
	w := newWorld(t)
	plan := w.plan(t, "echo")
	// Aim the step at a connection the supervisor does not know.
	targets := map[string]run.Target{"fake.one.echo": {Connection: "fake.gone", Tool: "echo"}}

	done := reply.Expect[run.Stopped](w.replies)
	now := time.Now().UTC()
	w.engine.Spawn(run.New(run.Spec{
		Record:  store.Run{ID: "run-gone", Status: store.RunRunning, Input: workflow.Object{"message": "hi"}, CreatedAt: now, UpdatedAt: now},
		Program: workflow.Program{Root: plan}, Targets: targets,
		Supervisor: w.sup.PID(), Lines: w.sup.Lines(), Store: w.store,
		CallTimeout: 2 * time.Second, StoreTimeout: 2 * time.Second, Done: done.To(),
	}), "run", actor.WithID("run-gone"))
	ctx, cancel := context.WithTimeout(context.Background(), patience+w.callTimeout)
	defer cancel()
	stopped, err := done.Wait(ctx)
	final := stopped.Run
	is.NoErr(err)
	is.Equal(final.Status, store.RunFailed)
	is.True(final.Error != nil) // names the failed step
	stored, err := w.store.GetRun(wait(t), "run-gone")
	is.NoErr(err)
	is.Equal(stored.Status, store.RunFailed)
	is.Equal(len(w.rec.ToolCalls()), 0)
}

func TestRunOfAnInvalidPlanFailsAtOnce(t *testing.T) {
	is := is.New(t)
	w := newWorld(t)
	ack, final := w.start(t, "run-invalid", workflow.Plan{Name: "broken", Start: "missing"}, nil)
	is.NoErr(ack.Error.Err()) // the failed run is still recorded
	is.Equal(final.Status, store.RunFailed)
	stored, err := w.store.GetRun(wait(t), "run-invalid")
	is.NoErr(err)
	is.Equal(stored.Status, store.RunFailed)
}

// spawned numbers the run actors a test spawns.
var spawned atomic.Int64

// incarnation is a fresh actor id for run id, as the service gives each
// run actor: a finished actor may still be registered under its id for a
// moment after its last reply, and hollywood drops a spawn whose id is
// taken.
func incarnation(id string) string { return fmt.Sprintf("%s#%d", id, spawned.Add(1)) }

func TestDuplicateRunIDIsNotAcknowledged(t *testing.T) {
	is := is.New(t)
	w := newWorld(t)
	plan := w.plan(t, "echo")
	_, first := w.start(t, "run-dup", plan, workflow.Object{"message": "hi"})
	is.Equal(first.Status, store.RunCompleted)

	ack, final := w.start(t, "run-dup", plan, workflow.Object{"message": "again"})
	is.True(errors.Is(ack.Error.Err(), store.ErrExists)) // creation failed, and says so
	is.Equal(final.Status, store.RunFailed)
	stored, err := w.store.GetRun(wait(t), "run-dup")
	is.NoErr(err)
	is.Equal(stored.Status, store.RunCompleted) // the first run's record is untouched
}

// spawnPlan spawns a run actor of plan with targets and returns its final
// record.
func (w *world) spawnPlan(t *testing.T, id string, plan workflow.Plan, targets map[string]run.Target, input workflow.Object, deadline time.Time) store.Run {
	t.Helper()
	return w.spawnPlanWith(t, id, plan, targets, input, deadline, workflow.Options{})
}

// spawnPlanWith is spawnPlan with execution options.
func (w *world) spawnPlanWith(t *testing.T, id string, plan workflow.Plan, targets map[string]run.Target, input workflow.Object, deadline time.Time, opts workflow.Options) store.Run {
	t.Helper()
	is := is.New(t)
	is.Helper()
	done := reply.Expect[run.Stopped](w.replies)
	now := time.Now().UTC()
	w.engine.Spawn(run.New(run.Spec{
		Record:  store.Run{ID: id, Status: store.RunRunning, Input: input, CreatedAt: now, UpdatedAt: now},
		Program: workflow.Program{Root: plan}, Targets: targets, Deadline: deadline, Options: opts,
		Supervisor: w.sup.PID(), Lines: w.sup.Lines(), Store: w.store,
		CallTimeout: 2 * time.Second, StoreTimeout: 2 * time.Second, Done: done.To(),
	}), "run", actor.WithID(id))
	ctx, cancel := context.WithTimeout(context.Background(), patience+w.callTimeout)
	defer cancel()
	stopped, err := done.Wait(ctx)
	final := stopped.Run
	is.NoErr(err) // the run ends
	return final
}

func TestABuiltinCallWhoseOutputPassesTheBoundFailsAsTooLargeWithoutARetry(t *testing.T) {
	is := is.New(t)
	w := newWorld(t)
	plan := w.plan(t, "echo")
	two := 2
	plan.Nodes[0].Retry = &two
	// The step is called as a built-in (as one in flight at a crash is
	// after recovery) whose output is larger than the bound.
	big := func(workflow.Object) (string, workflow.Object, error) {
		return workflow.OutcomeOK, workflow.Object{"message": strings.Repeat("x", 2000)}, nil
	}
	targets := map[string]run.Target{"fake.one.echo": {Builtin: big}}
	final := w.spawnPlanWith(t, "run-big", plan, targets, workflow.Object{"message": "hi"}, time.Time{}, workflow.Options{MaxOutputBytes: 1024})
	is.Equal(final.Status, store.RunFailed)
	is.Equal(*final.Error, `step "call": result_too_large: the output of fake.one.echo is larger than 1024 bytes (server.limits.max_result_bytes); have the workflow pass on less, or raise the limit`) // once, not retried
}

func TestAFailingStepIsRetriedAsOftenAsItSays(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		is := is.New(t)
		w := newWorld(t)
		plan := w.plan(t, "echo")
		two := 2
		plan.Nodes[0].Retry = &two
		// The step's connection does not exist: every attempt fails.
		targets := map[string]run.Target{"fake.one.echo": {Connection: "fake.gone", Tool: "echo"}}
		final := w.spawnPlan(t, "run-retry", plan, targets, workflow.Object{"message": "hi"}, time.Time{})
		is.Equal(final.Status, store.RunFailed)
		is.True(strings.Contains(*final.Error, "after 3 attempts")) // the first attempt and two retries
	})
}

func TestTheRunDeadlineStopsARunAndItsCallUpstream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		is := is.New(t)
		w := newWorld(t)
		plan := w.plan(t, "sleep")
		targets, err := run.Resolve(workflow.Program{Root: plan}, nil, func(c string) bool { return c == "fake.one" })
		is.NoErr(err)
		began := time.Now()
		final := w.spawnPlan(t, "run-late", plan, targets, workflow.Object{"ms": 60_000}, began.Add(100*time.Millisecond))
		is.Equal(time.Since(began), 100*time.Millisecond) // stopped at its deadline to the tick (the bubble's clock)
		is.Equal(final.Status, store.RunFailed)
		is.True(strings.HasPrefix(*final.Error, "run deadline "))
		is.True(strings.HasSuffix(*final.Error, `passed, while step "call" was running`)) // it says where the run stopped
		stored, err := w.store.GetRun(wait(t), "run-late")
		is.NoErr(err)
		is.Equal(stored.Status, store.RunFailed) // committed
	})
}

func TestAStepThatOverrunsItsTimeoutFailsSayingSo(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		is := is.New(t)
		w := newWorld(t)
		plan := w.plan(t, "sleep")
		one := 1
		plan.Nodes[0].TimeoutSeconds = &one
		began := time.Now()
		_, final := w.start(t, "run-timeout", plan, workflow.Object{"ms": 60_000})
		is.Equal(final.Status, store.RunFailed)
		t.Log(*final.Error)
		is.True(strings.Contains(*final.Error, "no answer within 1s (the step's timeout)")) // the error says it was the timeout
		is.Equal(time.Since(began), time.Second)                                            // at the timeout to the tick (the bubble's clock)
	})
}
