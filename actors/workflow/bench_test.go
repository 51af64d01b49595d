package workflow_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/mcpflow/mcpflow/actors/catalog"
	"github.com/mcpflow/mcpflow/actors/workflow"
	"github.com/mcpflow/mcpflow/actors/workflow/schema"
)

// benchSteps is the length of the step chains; actors/run's
// BenchmarkStepTool runs chains of the same length through the actors.
const benchSteps = 50

// benchTick is a tool capability the benchmark answers in process, shaped
// like the fake server's counter: {} → {count}.
var benchTick = catalog.Tool{
	Name:         "tick",
	InputSchema:  catalog.Object{"type": "object"},
	OutputSchema: catalog.Object{"type": "object", "properties": catalog.Object{"count": catalog.Object{"type": "integer"}}},
}.Capability("bench.one")

// benchLookup finds benchTick and the platform node specs in a map built
// once, as the service's lookup does: the schemas it returns are the same
// maps on every call.
var benchLookup = func() workflow.Lookup {
	byName := map[string]catalog.Capability{benchTick.Name: benchTick}
	for _, c := range workflow.Builtins() {
		byName[c.Name] = c
	}
	return func(name string) (catalog.Capability, bool) {
		c, ok := byName[name]
		return c, ok
	}
}()

// BenchmarkStepStd measures the engine's cost per wf.std step: a chain of
// wf.std.constant steps, each writing its value into state, run inline by
// NewExecution and one Advance. "checked" enforces every schema as the
// service's run actors do; "unchecked" skips them. Each op is one whole
// run (NewExecution included); ns/step divides it by the chain length.
func BenchmarkStepStd(b *testing.B) {
	for _, n := range []int{benchSteps, 500} {
		plan := benchChain(b, n, "wf.std.constant", func(i int) string {
			return fmt.Sprintf(`[{"target":"value","value":%d}]`, i)
		}, "value")
		checked := workflow.Options{Capability: benchLookup, Validate: schema.Default.Validate}
		b.Run(fmt.Sprintf("checked/steps=%d", n), func(b *testing.B) { benchInline(b, plan, n, checked) })
		b.Run(fmt.Sprintf("unchecked/steps=%d", n), func(b *testing.B) { benchInline(b, plan, n, workflow.Options{}) })
	}
}

// BenchmarkStepCall measures the engine alone on a tool step: the same
// chain of tool calls as actors/run's BenchmarkStepTool, each Call
// answered in process at once (Advance, Complete, Advance…), with every
// schema checked. Against BenchmarkStepTool it separates the engine from
// the actors, the store and the MCP round trip.
func BenchmarkStepCall(b *testing.B) {
	plan := benchChain(b, benchSteps, benchTick.Name, func(int) string { return `[]` }, "count")
	opts := workflow.Options{Capability: benchLookup, Validate: schema.Default.Validate}
	b.Run(fmt.Sprintf("steps=%d", benchSteps), func(b *testing.B) {
		prog := workflow.Program{Root: plan}
		b.ReportAllocs()
		for b.Loop() {
			e, err := workflow.NewExecution(prog, nil, opts)
			if err != nil {
				b.Fatal(err)
			}
			calls := 0
			for p := e.Advance(); len(p.Calls) > 0; p = e.Advance() {
				for _, c := range p.Calls {
					calls++
					if err := e.Complete(c.ID, workflow.Result{Outcome: workflow.OutcomeOK, Output: workflow.Object{"count": float64(calls)}}); err != nil {
						b.Fatal(err)
					}
				}
			}
			if e.Status() != workflow.StatusCompleted || calls != benchSteps {
				b.Fatalf("run %s after %d calls: %s", e.Status(), calls, e.Err())
			}
		}
		reportPerStep(b, benchSteps)
	})
}

func benchInline(b *testing.B, plan workflow.Plan, n int, opts workflow.Options) {
	prog := workflow.Program{Root: plan}
	b.ReportAllocs()
	for b.Loop() {
		e, err := workflow.NewExecution(prog, nil, opts)
		if err != nil {
			b.Fatal(err)
		}
		if p := e.Advance(); len(p.Calls) != 0 || e.Status() != workflow.StatusCompleted || e.Steps() != n {
			b.Fatalf("run %s after %d steps, %d calls: %s", e.Status(), e.Steps(), len(p.Calls), e.Err())
		}
	}
	reportPerStep(b, n)
}

// reportPerStep reports the time of one op divided by its steps.
func reportPerStep(b *testing.B, steps int) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*steps), "ns/step")
}

// benchChain compiles a workflow of n steps s0 → s1 → … → end, each using
// capability with the input bindings input(i) and writing its output field
// out into state.v.
func benchChain(b *testing.B, n int, capability string, input func(i int) string, out string) workflow.Plan {
	b.Helper()
	var steps, routes []string
	for i := range n {
		next := workflow.End
		if i+1 < n {
			next = fmt.Sprintf("s%d", i+1)
		}
		steps = append(steps, fmt.Sprintf(`"s%d":{"use":%q,"input":%s,"output":[{"source":%q,"target":"state.v"}]}`, i, capability, input(i), out))
		route := fmt.Sprintf(`"s%d":{"ok":%q}`, i, next)
		if c, _ := benchLookup(capability); slices.Contains(c.Outcomes, workflow.OutcomeError) {
			route = fmt.Sprintf(`"s%d":{"ok":%q,"error":%q}`, i, next, workflow.End)
		}
		routes = append(routes, route)
	}
	doc := fmt.Sprintf(`{"name":"chain","start":"s0",
		"state_schema":{"type":"object","properties":{"v":{}}},
		"output_schema":{"type":"object","properties":{"v":{}}},
		"steps":{%s},"routes":{%s}}`, strings.Join(steps, ","), strings.Join(routes, ","))
	var obj workflow.Object
	if err := json.Unmarshal([]byte(doc), &obj); err != nil {
		b.Fatal(err)
	}
	d, diags := workflow.ParseDraft(obj)
	for _, dg := range append(diags, workflow.ValidateDraft(d, benchLookup)...) {
		if dg.IsError() {
			b.Fatalf("draft: %s at %s: %s", dg.Code, dg.Path, dg.Message)
		}
	}
	plan, err := workflow.Compile(d)
	if err != nil {
		b.Fatal(err)
	}
	return plan
}
