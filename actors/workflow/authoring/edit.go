package authoring

import (
	"maps"
	"slices"

	"github.com/mcpflow/mcpflow/actors/catalog"
	"github.com/mcpflow/mcpflow/actors/workflow"
)

// Params are the params of one operation. Check refuses what is wrong
// with them by themselves, whatever the document; a caller may run it
// before it reads the document (the API does, before the revision check).
// The operation checks them too.
type Params interface {
	Check() error
}

// An Op is one operation: it answers the document p makes of doc, or
// refuses the edit. It changes nothing it is given.
type Op[P Params] func(doc workflow.Object, p P, find workflow.Lookup) (workflow.Object, error)

// edit refuses the edit with refused, the params' own refusal, when there
// is one; otherwise it runs change on a copy of doc and answers the copy.
func edit(doc workflow.Object, refused error, change func(next workflow.Object) error) (workflow.Object, error) {
	if refused != nil {
		return nil, refused
	}
	next, err := workflow.ObjectOf(doc)
	if err != nil {
		return nil, err
	}
	if err := change(next); err != nil {
		return nil, err
	}
	return next, nil
}

// capabilityOf finds the capability a use step names.
func capabilityOf(find workflow.Lookup, name string) (catalog.Capability, error) {
	if c, ok := find(name); ok {
		return c, nil
	}
	return catalog.Capability{}, notFound("unknown workflow capability %q", name)
}

// keysInOrder returns m's keys, sorted.
func keysInOrder[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}
