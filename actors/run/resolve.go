package run

import (
	"errors"
	"fmt"
	"strings"

	"github.com/mcpflow/mcpflow/actors/catalog"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/workflow"
)

// ErrNotBound means a plan names a capability that no binding resolves.
var ErrNotBound = errors.New("capability not bound")

// Resolve finds where each capability a program calls executes: platform
// built-ins in place; anything else on the connection its logical source is
// bound to (the longest bound prefix wins), or on the connection it names
// directly.
func Resolve(p workflow.Program, bindings []store.Binding, isConnection func(string) bool) (map[string]Target, error) {
	targets := map[string]Target{}
	for _, name := range p.Capabilities() {
		if fn, ok := workflow.Builtin(name); ok {
			targets[name] = Target{Builtin: fn}
			continue
		}
		if name == workflow.ReadResource {
			targets[name] = Target{Resource: true}
			continue
		}
		t, err := resolveTool(name, bindings, isConnection)
		if err != nil {
			return nil, err
		}
		targets[name] = t
	}
	return targets, nil
}

func resolveTool(name string, bindings []store.Binding, isConnection func(string) bool) (Target, error) {
	best := -1
	for i, b := range bindings {
		if strings.HasPrefix(name, b.LogicalSource+".") && (best < 0 || len(b.LogicalSource) > len(bindings[best].LogicalSource)) {
			best = i
		}
	}
	if best >= 0 {
		b := bindings[best]
		return Target{Connection: b.ConcreteSource, Tool: strings.TrimPrefix(name, b.LogicalSource+"."), Task: b.Task}, nil
	}
	if conn, tool, ok := catalog.SplitName(name, isConnection); ok {
		return Target{Connection: conn, Tool: tool}, nil
	}
	return Target{}, fmt.Errorf("%w: %q", ErrNotBound, name)
}
