package run_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anthdm/hollywood/actor"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflow/mcpflow/actors/catalog"
	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/guard"
	"github.com/mcpflow/mcpflow/actors/reply"
	"github.com/mcpflow/mcpflow/actors/run"
	"github.com/mcpflow/mcpflow/actors/session"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/store/sqlite"
	"github.com/mcpflow/mcpflow/actors/store/sqlite/sqlitetest"
	"github.com/mcpflow/mcpflow/actors/supervisor"
	"github.com/mcpflow/mcpflow/actors/workflow"
	"github.com/mcpflow/mcpflow/actors/workflow/schema"
	"github.com/mcpflow/mcpflow/fakes"
)

// benchSteps is the length of the tool step chain; actors/workflow's
// BenchmarkStepStd and BenchmarkStepCall run chains of the same length.
const benchSteps = 50

// BenchmarkStepTool measures one tool step against the in-memory fake
// server's counter tool, in one run so that the ratios are comparable:
//
//   - direct: go-sdk CallTool on an open in-memory session (the floor);
//   - actors/store=memory: a chain of benchSteps counter steps run by a
//     run actor, through the supervisor and the session actor, committing
//     each step to the in-memory store (no fsync), with every schema
//     checked as the service does;
//   - actors/store=noop: the same with a runs store that keeps nothing,
//     isolating the engine and the actors from the store's copies.
//
// ns/step is the figure to compare: actors/ns/step ÷ direct/ns/step is
// the engine, actor and store overhead of a tool step.
func BenchmarkStepTool(b *testing.B) {
	b.Run("direct", func(b *testing.B) {
		transport, err := fakes.NewInMemory(nil).NewTransport(config.Connection{ID: "fake.one"})
		if err != nil {
			b.Fatal(err)
		}
		client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "0"}, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
		cs, err := client.Connect(b.Context(), transport, &mcp.ClientSessionOptions{ProtocolVersion: session.DefaultOptions().ProtocolVersion})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = cs.Close() })
		ctx := context.Background()
		b.ReportAllocs()
		for b.Loop() {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "counter", Arguments: map[string]any{}})
			if err != nil || res.IsError {
				b.Fatalf("counter: %v %v", err, res)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/step")
	})
	for _, st := range []struct {
		name  string
		store func() store.Runs
	}{
		{"memory", func() store.Runs { return store.NewMemory() }},
		{"noop", func() store.Runs { return noopRuns{} }},
	} {
		b.Run(fmt.Sprintf("actors/store=%s/steps=%d", st.name, benchSteps), func(b *testing.B) {
			w := newBenchWorld(b, st.store())
			var steps, routes []string
			for i := range benchSteps {
				next := workflow.End
				if i+1 < benchSteps {
					next = fmt.Sprintf("s%d", i+1)
				}
				steps = append(steps, fmt.Sprintf(`"s%d":{"use":"fake.one.counter","input":[],"output":[{"source":"count","target":"state.v"}]}`, i))
				routes = append(routes, fmt.Sprintf(`"s%d":{"ok":%q,"error":"boom"}`, i, next))
			}
			prog := w.program(b, fmt.Sprintf(`{"name":"chain","start":"s0",
				"state_schema":{"type":"object","properties":{"v":{}}},
				"output_schema":{"type":"object","properties":{"v":{}}},
				"steps":{%s,%s},"routes":{%s,"boom":{"ok":"__end__"}}}`,
				strings.Join(steps, ","), boomStep, strings.Join(routes, ",")))
			b.ReportAllocs()
			for b.Loop() {
				w.run(b, prog, nil, benchSteps)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchSteps), "ns/step")
		})
	}
}

// BenchmarkOneStepRun measures a warm one-step run, the issue 22 path
// without the API: a run actor created and committed (its call in
// flight), the counter call through the supervisor and the session actor,
// and the final commit, on the in-memory store and on SQLite at both sync
// levels. With direct (BenchmarkStepTool's floor) in the same run,
// ns/op ÷ direct is what a one-step run costs over the call itself.
func BenchmarkOneStepRun(b *testing.B) {
	for _, st := range []struct {
		name string
		open func(b *testing.B) store.Runs
	}{
		{"memory", func(*testing.B) store.Runs { return store.NewMemory() }},
		{"sqlite_sync=normal", func(b *testing.B) store.Runs { return sqlitetest.Open(b, sqlite.WithSync(sqlite.SyncNormal)) }},
		{"sqlite_sync=full", func(b *testing.B) store.Runs { return sqlitetest.Open(b, sqlite.WithSync(sqlite.SyncFull)) }},
	} {
		b.Run("actors/store="+st.name, func(b *testing.B) {
			w := newBenchWorld(b, st.open(b))
			prog := w.program(b, `{"name":"one","start":"s0",
				"state_schema":{"type":"object","properties":{"v":{}}},
				"output_schema":{"type":"object","properties":{"v":{}}},
				"steps":{"s0":{"use":"fake.one.counter","input":[],"output":[{"source":"count","target":"state.v"}]},`+boomStep+`},
				"routes":{"s0":{"ok":"__end__","error":"boom"},"boom":{"ok":"__end__"}}}`)
			b.ReportAllocs()
			for b.Loop() {
				w.run(b, prog, nil, 1)
			}
		})
	}
}

// BenchmarkForeach runs a 50-item foreach whose body calls the fake
// server's sleep tool for 2 ms (upstream latency, simulated), serially
// and concurrently with max_active 8, through the run actor, the
// supervisor and one session actor, on the in-memory store. ns/op is one
// whole run; serial ÷ concurrent is the speed-up.
func BenchmarkForeach(b *testing.B) {
	const items, sleepMS = 50, 2
	list := make([]any, items)
	for i := range list {
		list[i] = float64(i)
	}
	for _, mode := range []struct{ name, policy string }{
		{"serial", `"mode":"serial"`},
		{"concurrent_max_active=8", `"mode":"concurrent","concurrent":{"max_active":8}`},
	} {
		b.Run(fmt.Sprintf("mode=%s/items=%d/sleep=%dms", mode.name, items, sleepMS), func(b *testing.B) {
			w := newBenchWorld(b, store.NewMemory())
			prog := w.program(b, fmt.Sprintf(`{"name":"fan","start":"each",
				"input_schema":{"type":"object","properties":{"items":{"type":"array"}},"required":["items"]},
				"steps":{"each":{"foreach":{"over":"input.items","as":"x",%s}},
				  "wait":{"use":"fake.one.sleep","input":[{"target":"ms","value":%d}]},%s},
				"routes":{"each":{"loop":"wait","done":"__end__"},"wait":{"ok":"each","error":"boom"},"boom":{"ok":"each"}}}`,
				mode.policy, sleepMS, boomStep))
			input := workflow.Object{"items": list}
			// Each item traces its admission and its call; the loop its end.
			traced := 2*items + 1
			b.ReportAllocs()
			for b.Loop() {
				w.run(b, prog, input, traced)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "runs/s")
		})
	}
}

// boomStep fails the run: a tool error routes to it, so a benchmark never
// measures a run that went wrong.
const boomStep = `"boom":{"use":"wf.std.runtime_error","input":[{"target":"message","value":"tool error"}]}`

// benchWorld is an engine with a supervisor over an in-memory fake
// upstream ("fake.one") whose session is open, and the options the service
// runs with: every capability's schemas checked.
type benchWorld struct {
	engine  *actor.Engine
	sup     *supervisor.Handle
	replies *reply.Router
	runs    store.Runs
	lookup  workflow.Lookup
	opts    workflow.Options
}

func newBenchWorld(b *testing.B, runs store.Runs) *benchWorld {
	b.Helper()
	// The actors log each session they open: in the benchmark output such
	// lines split result lines and benchstat cannot parse them.
	logger := slog.Default()
	slog.SetDefault(slog.New(slog.DiscardHandler))
	b.Cleanup(func() { slog.SetDefault(logger) })
	e, err := actor.NewEngine(actor.NewEngineConfig())
	if err != nil {
		b.Fatal(err)
	}
	conns := []config.Connection{{Kind: "mcp", ID: "fake.one", Transport: config.Transport{Kind: "inmemory"}}}
	sup := supervisor.Spawn(e, conns, fakes.NewInMemory(nil), store.NewMemory(), supervisor.DefaultOptions())
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), patience)
		defer cancel()
		if err := sup.Stop(ctx); err != nil {
			b.Error(err)
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	snap, err := sup.RefreshCatalog(ctx, "fake.one") // opens the session
	if err != nil {
		b.Fatal(err)
	}
	byName := map[string]catalog.Capability{}
	for _, c := range append(snap.Capabilities(), workflow.Builtins()...) {
		byName[c.Name] = c
	}
	lookup := func(name string) (catalog.Capability, bool) {
		c, ok := byName[name]
		return c, ok
	}
	return &benchWorld{
		engine: e, sup: sup, replies: newRouter(b, e), runs: runs, lookup: lookup,
		opts: workflow.Options{Capability: lookup, Validate: schema.Default.Validate},
	}
}

// benchProgram is a compiled program with its resolved targets.
type benchProgram struct {
	prog    workflow.Program
	targets map[string]run.Target
}

// program validates and compiles a draft written as JSON, and resolves it
// against fake.one.
func (w *benchWorld) program(b *testing.B, doc string) benchProgram {
	b.Helper()
	var obj workflow.Object
	if err := json.Unmarshal([]byte(doc), &obj); err != nil {
		b.Fatalf("draft is not JSON: %v", err)
	}
	d, diags := workflow.ParseDraft(obj)
	for _, dg := range append(diags, workflow.ValidateDraft(d, w.lookup)...) {
		if dg.IsError() {
			b.Fatalf("draft: %s at %s: %s", dg.Code, dg.Path, dg.Message)
		}
	}
	plan, err := workflow.Compile(d)
	if err != nil {
		b.Fatal(err)
	}
	prog := workflow.Program{Root: plan}
	targets, err := run.Resolve(prog, nil, func(c string) bool { return c == "fake.one" })
	if err != nil {
		b.Fatal(err)
	}
	return benchProgram{prog: prog, targets: targets}
}

// benchRunID numbers the runs of every benchmark in this process.
var benchRunID atomic.Int64

// run spawns a run actor of p, as the service does, waits for its final
// record and checks that it completed having traced traced entries.
func (w *benchWorld) run(b *testing.B, p benchProgram, input workflow.Object, traced int) {
	id := fmt.Sprintf("bench-%d", benchRunID.Add(1))
	now := time.Now().UTC()
	done := reply.Expect[run.Stopped](w.replies)
	engine := w.engine
	w.engine.Spawn(guard.Producer(run.New(run.Spec{
		Record: store.Run{
			ID: id, DeploymentID: "dep-1", ArtifactID: "art-1", ArtifactVersion: 1,
			Status: store.RunRunning, ResumeReadiness: "not_applicable", Input: input,
			CreatedAt: now, UpdatedAt: now,
		},
		Program: p.prog, Targets: p.targets, Options: w.opts,
		Supervisor: w.sup.PID(), Lines: w.sup.Lines(), Store: w.runs,
		CallTimeout: patience, StoreTimeout: patience,
		Done: done.To(),
	}), func(p guard.Panic) { engine.Send(p.PID, p) }), "run", actor.WithID(id))
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	stopped, err := done.Wait(ctx)
	final := stopped.Run
	if err != nil {
		b.Fatalf("run %s: %v", id, err)
	}
	if final.Status != store.RunCompleted || final.TraceCount != traced {
		msg := ""
		if final.Error != nil {
			msg = *final.Error
		}
		b.Fatalf("run %s: %s with %d trace entries, want completed with %d: %s", id, final.Status, final.TraceCount, traced, msg)
	}
}

// noopRuns is a runs store that keeps nothing: every write succeeds at
// once.
type noopRuns struct{}

func (noopRuns) CreateRun(context.Context, store.Run, []workflow.TraceEntry) error { return nil }
func (noopRuns) RecordProgress(context.Context, store.Run, []workflow.TraceEntry) error {
	return nil
}
func (noopRuns) AppendRunEvents(context.Context, string, []store.RunEvent) error { return nil }

// SubmitCommit writes in place, as the memory store does.
func (n noopRuns) SubmitCommit(ctx context.Context, c store.Commit, done func(store.CommitOutcome)) {
	done(store.CommitInPlace(ctx, n, c))
}
func (noopRuns) GetRun(_ context.Context, id string) (store.Run, error) {
	return store.Run{}, fmt.Errorf("get run %q: %w", id, store.ErrNotFound)
}
func (noopRuns) ListRuns(context.Context, store.RunQuery) ([]store.Run, int, error) {
	return nil, 0, nil
}
func (noopRuns) ReadTrace(_ context.Context, id string, _, _ int) ([]workflow.TraceEntry, error) {
	return nil, fmt.Errorf("read trace of %q: %w", id, store.ErrNotFound)
}
func (noopRuns) RecoverRunning(context.Context, time.Time) ([]store.Run, error) { return nil, nil }
