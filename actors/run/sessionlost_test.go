package run_test

import (
	"encoding/json"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/catalog"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/workflow"
)

// capabilities is the lookup of fake.one's listed catalog, which tells
// the run actor which tools are safe to repeat.
func (w *world) capabilities(t *testing.T) workflow.Lookup {
	t.Helper()
	snap, err := w.sup.RefreshCatalog(wait(t), "fake.one")
	is.New(t).NoErr(err)
	caps := map[string]catalog.Capability{}
	for _, c := range snap.Capabilities() {
		caps[c.Name] = c
	}
	return func(name string) (catalog.Capability, bool) {
		c, ok := caps[name]
		return c, ok
	}
}

func TestACallLostWithItsSessionFailsTheStepWithSessionLost(t *testing.T) {
	is := is.New(t)
	w := newWorld(t)
	plan := w.plan(t, "crash") // not safe to repeat: it dies mid-call
	_, final := w.startWith(t, "run-lost", plan, workflow.Object{}, workflow.Options{Capability: w.capabilities(t)})
	is.Equal(final.Status, store.RunFailed)
	is.True(strings.HasPrefix(*final.Error, `step "call": session_lost: connection "fake.one": session generation 1 ended during the call to crash`))
	is.Equal(len(w.rec.ToolCalls()), 1) // never sent again
}

func TestALostCallSafeToRepeatIsSentAgainOnTheNewSession(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		is := is.New(t)
		w := newWorld(t)
		plan := w.plan(t, "idle") // annotated idempotentHint
		lookup := w.capabilities(t)
		go func() {
			if w.rec.WaitForToolCalls(1, patience) {
				w.mem.KillAll() // the upstream dies under the first attempt
			}
		}()
		_, final := w.startWith(t, "run-safe", plan, workflow.Object{"ms": 300}, workflow.Options{Capability: lookup})
		is.Equal(final.Status, store.RunCompleted)
		trace, err := w.store.ReadTrace(wait(t), "run-safe", 0, 0)
		is.NoErr(err)
		is.Equal(trace[0].Attempts, 2)
		is.Equal(trace[0].Generation, int64(2)) // it ran on the second session
		is.Equal(len(w.rec.ToolCalls()), 2)
	})
}

func TestAWorkflowMayRouteSessionLost(t *testing.T) {
	is := is.New(t)
	w := newWorld(t)
	lookup := w.capabilities(t)
	var doc workflow.Object
	is.NoErr(json.Unmarshal([]byte(`{"name":"w","start":"call","outcomes":["ok","lost"],
		"steps":{"call":{"use":"fake.one.crash"},"gone":{"end":{"outcome":"lost"}}},
		"routes":{"call":{"ok":"__end__","error":"__end__","session_lost":"gone"}}}`), &doc))
	d, diags := workflow.ParseDraft(doc)
	is.Equal(diags, nil)
	is.Equal(workflow.Blocking(workflow.ValidateDraft(d, lookup)), nil) // error routed to the end: a warning
	plan, err := workflow.Compile(d)
	is.NoErr(err)

	began := time.Now()
	_, final := w.startWith(t, "run-routed", plan, workflow.Object{}, workflow.Options{Capability: lookup})
	is.True(time.Since(began) < 2*time.Second)
	is.Equal(final.Status, store.RunCompleted)
	is.Equal(*final.Outcome, "lost")
	trace, err := w.store.ReadTrace(wait(t), "run-routed", 0, 0)
	is.NoErr(err)
	is.Equal(trace[0].Outcome, workflow.OutcomeSessionLost)
	is.Equal(trace[0].Generation, int64(1))
	is.True(strings.HasPrefix(trace[0].Output["error"].(string), "session_lost: "))
}
