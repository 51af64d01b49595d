package workflow

import (
	"errors"
	"fmt"
	"sort"

	"github.com/mcpflow/mcpflow/actors/catalog"
)

// PlatformSource is the id of the built-in standard library source.
const PlatformSource = "wf.std"

// RuntimeError is the built-in that fails a run with a message.
const RuntimeError = PlatformSource + ".runtime_error"

// BuiltinFunc executes a platform capability in-process.
type BuiltinFunc func(input Object) (outcome string, output Object, err error)

type builtin struct {
	capability catalog.Capability
	run        BuiltinFunc
}

var builtins = map[string]builtin{
	RuntimeError: {
		capability: platformCapability("runtime_error", "Fail the run with a message.",
			catalog.Object{"type": "object", "properties": catalog.Object{"message": catalog.Object{"type": "string"}, "details": catalog.Object{}}, "required": []any{"message"}},
			catalog.Object{"type": "object", "properties": catalog.Object{}}),
		run: func(in Object) (string, Object, error) {
			msg, _ := in["message"].(string)
			if msg == "" {
				msg = "runtime error"
			}
			if details, ok := in["details"]; ok && details != nil {
				msg = fmt.Sprintf("%s: %v", msg, details)
			}
			return "", nil, errors.New(msg)
		},
	},
	PlatformSource + ".constant": {
		capability: platformCapability("constant", "Return the value it is given.",
			catalog.Object{"type": "object", "properties": catalog.Object{"value": catalog.Object{}}, "required": []any{"value"}},
			catalog.Object{"type": "object", "properties": catalog.Object{"value": catalog.Object{}}}),
		run: func(in Object) (string, Object, error) {
			return OutcomeOK, Object{"value": in["value"]}, nil
		},
	},
}

func platformCapability(local, description string, in, out catalog.Object) catalog.Capability {
	return catalog.Capability{
		Name: PlatformSource + "." + local, SourceID: PlatformSource, LocalName: local,
		Description: description, Outcomes: []string{OutcomeOK},
		InputSchema: in, OutputSchema: out, Platform: true,
	}
}

// Builtin returns the in-process implementation of a platform capability.
func Builtin(name string) (BuiltinFunc, bool) {
	b, ok := builtins[name]
	return b.run, ok
}

// Builtins lists the platform capabilities sorted by name.
func Builtins() []catalog.Capability {
	out := make([]catalog.Capability, 0, len(builtins))
	for _, b := range builtins {
		out = append(out, b.capability)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
