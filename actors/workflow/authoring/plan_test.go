package authoring_test

import (
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/workflow"
	"github.com/mcpflow/mcpflow/actors/workflow/authoring"
)

func TestDecodePlanIsStrict(t *testing.T) {
	is := is.New(t)
	raw := func() workflow.Object {
		return workflow.Object{"name": "p", "input_schema": nil, "state_schema": nil, "output_schema": nil,
			"start": "a", "nodes": []any{}, "edges": []any{}}
	}
	plan, err := authoring.DecodePlan(raw())
	is.NoErr(err)
	is.Equal(plan.Outcomes, []string{workflow.OutcomeOK}) // the default
	for name, change := range map[string]func(workflow.Object){
		"a missing key":          func(p workflow.Object) { delete(p, "edges") },
		"a null that may not be": func(p workflow.Object) { p["start"] = nil },
		"an unknown key":         func(p workflow.Object) { p["extra"] = 1 },
		"a key of another type":  func(p workflow.Object) { p["nodes"] = "none" },
	} {
		t.Run(name, func(t *testing.T) {
			p := raw()
			change(p)
			_, err := authoring.DecodePlan(p)
			is.New(t).Equal(kindOf(err), authoring.Malformed)
		})
	}
}

func TestThroughBindingsResolvesLogicalNamesLongestFirst(t *testing.T) {
	is := is.New(t)
	lookup := authoring.ThroughBindings(find, map[string]string{"web": "nowhere", "web.v2": "up"})
	c, ok := lookup("web.v2.fetch")
	is.True(ok)
	is.Equal(c.Name, "up.fetch") // the longest logical name wins
	_, ok = lookup("web.fetch")
	is.True(!ok) // bound to a source that has no such tool
	c, ok = lookup("up.ping")
	is.True(ok) // live names resolve as they are
	is.Equal(c.Name, "up.ping")
}
