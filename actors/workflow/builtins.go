package workflow

import (
	"slices"
	"strings"

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
	return std.Runner(name)
}

// Builtins lists the platform capabilities sorted by name: the wf.std and
// wf.recipes node specs, and wf.source.read_resource.
func Builtins() []catalog.Capability {
	caps := append(std.Specs(), readResource)
	slices.SortFunc(caps, func(a, b catalog.Capability) int { return strings.Compare(a.Name, b.Name) })
	return caps
}

// BuiltinCapability returns the contract of one platform capability, as
// Builtins lists it, without listing the others.
func BuiltinCapability(name string) (catalog.Capability, bool) {
	if name == ReadResource {
		return readResource, true
	}
	spec, ok := std.Lookup(name)
	return spec.Capability, ok
}

// ReadResource is the platform capability that reads an MCP resource
// through the session of the source its input names. It is a call (the
// run actor performs it), not an in-process built-in.
const ReadResource = "wf.source.read_resource"

// Resource read limits: max_chars defaults to 4,000 and is at most 20,000.
const (
	DefaultResourceChars = 4000
	MaxResourceChars     = 20000
)

var readResource = catalog.Capability{
	Name: ReadResource, SourceID: "wf.source", LocalName: "read_resource",
	Description: "Read an MCP resource of a bound source and return its first text content, truncated to max_chars.",
	Outcomes:    []string{OutcomeOK},
	InputSchema: catalog.Object{"type": "object", "required": []any{"ref"}, "properties": catalog.Object{
		"ref": catalog.Object{"type": "object", "required": []any{"logical_source", "uri"}, "properties": catalog.Object{
			"kind":           catalog.Object{"const": "source_resource_ref"},
			"logical_source": catalog.Object{"type": "string", "minLength": 1},
			"uri":            catalog.Object{"type": "string", "minLength": 1},
			"mime_type":      catalog.Object{"type": []any{"string", "null"}},
			"name":           catalog.Object{"type": []any{"string", "null"}},
		}},
		"max_chars": catalog.Object{"type": "integer", "minimum": 1, "maximum": MaxResourceChars},
	}},
	OutputSchema: catalog.Object{"type": "object", "properties": catalog.Object{
		"source_id": catalog.Object{"type": "string"}, "uri": catalog.Object{"type": "string"},
		"mime_type": catalog.Object{"type": []any{"string", "null"}}, "text": catalog.Object{"type": "string"},
		"content_count": catalog.Object{"type": "integer"}, "truncated": catalog.Object{"type": "boolean"},
	}},
	Platform:     true,
	SafeToRepeat: true, // a read
	Hints:        catalog.Hints{ReadOnly: true, Idempotent: true, OpenWorld: true},
}
