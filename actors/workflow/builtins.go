package workflow

import (
	"github.com/mcpflow/mcpflow/actors/catalog"
	"github.com/mcpflow/mcpflow/actors/workflow/std"
)

// PlatformSource is the id of the built-in standard library source.
const PlatformSource = std.StdSource

// RuntimeError is the built-in that fails a run with a message.
const RuntimeError = std.RuntimeError

// BuiltinFunc executes a platform capability in-process.
type BuiltinFunc = std.Func

// Builtin returns the in-process implementation of a platform node spec.
func Builtin(name string) (BuiltinFunc, bool) {
	s, ok := std.Lookup(name)
	return s.Run, ok
}

// Builtins lists the platform node specs sorted by name.
func Builtins() []catalog.Capability { return std.Specs() }
