package std

import (
	"fmt"
	"sort"

	"github.com/mcpflow/mcpflow/actors/catalog"
)

// Object is a JSON object.
type Object = map[string]any

// Platform source ids.
const (
	// StdSource owns the standard node specs and reducers.
	StdSource = "wf.std"
	// RecipesSource owns specs composed from standard ones.
	RecipesSource = "wf.recipes"
)

// OutcomeOK is the outcome of every spec that does not route.
const OutcomeOK = "ok"

// RuntimeError is the spec that fails the run with "message[: details]".
const RuntimeError = StdSource + ".runtime_error"

// Func runs one node spec in-process. A returned error fails the step (the
// run).
type Func func(input Object) (outcome string, output Object, err error)

// Spec is one platform node spec: its catalog capability and its body.
type Spec struct {
	Capability catalog.Capability
	Run        Func
}

// IsSource reports whether id is a platform source owned by this package.
func IsSource(id string) bool {
	return id == StdSource || id == RecipesSource
}

// Lookup returns the spec with the qualified name, e.g. "wf.std.constant".
func Lookup(name string) (Spec, bool) {
	s, ok := registry[name]
	if !ok {
		return Spec{}, false
	}
	return Spec{Capability: copyCapability(s.Capability), Run: s.Run}, true
}

// Runner returns the body of a node spec, without copying its contract:
// what an execution needs on every inline step.
func Runner(name string) (Func, bool) {
	s, ok := registry[name]
	return s.Run, ok
}

// Specs lists the capabilities of all node specs sorted by name.
func Specs() []catalog.Capability {
	out := make([]catalog.Capability, 0, len(registry))
	for _, s := range registry {
		out = append(out, copyCapability(s.Capability))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// registry holds every node spec by qualified name.
var registry = buildRegistry(valueSpecs(), objectSpecs(), collectionSpecs(), recipeSpecs())

func buildRegistry(groups ...[]Spec) map[string]Spec {
	out := map[string]Spec{}
	for _, group := range groups {
		for _, s := range group {
			if _, dup := out[s.Capability.Name]; dup {
				panic(fmt.Sprintf("std: node spec %s declared twice", s.Capability.Name))
			}
			out[s.Capability.Name] = s
		}
	}
	return out
}

// newSpec declares a platform node spec of source.
func newSpec(source, local, description string, outcomes []string, in, out Object, run Func) Spec {
	return Spec{
		Capability: catalog.Capability{
			Name:         source + "." + local,
			SourceID:     source,
			LocalName:    local,
			Description:  description,
			Outcomes:     outcomes,
			InputSchema:  in,
			OutputSchema: out,
			Platform:     true,
			SafeToRepeat: true, // pure: no side effects
			Hints:        catalog.PureHints,
		},
		Run: run,
	}
}

// stdSpec declares a wf.std spec whose only outcome is "ok".
func stdSpec(local, description string, in, out Object, run Func) Spec {
	return newSpec(StdSource, local, description, []string{OutcomeOK}, in, out, run)
}

// ok wraps a body that always routes "ok".
func ok(body func(Object) (Object, error)) Func {
	return func(in Object) (string, Object, error) {
		out, err := body(in)
		if err != nil {
			return "", nil, err
		}
		return OutcomeOK, out, nil
	}
}

func copyCapability(c catalog.Capability) catalog.Capability {
	c.Outcomes = append([]string(nil), c.Outcomes...)
	c.InputSchema = copyObject(c.InputSchema)
	c.OutputSchema = copyObject(c.OutputSchema)
	return c
}
