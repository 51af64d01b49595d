package catalog

import "strings"

// Outcomes every MCP tool capability declares: a result with isError set
// routes "error", any other result "ok".
var ToolOutcomes = []string{"ok", "error"}

// The schemas of a tool that declares none: any object as input, and its
// result projected as {"content": [...]}. Every such capability shares
// them (a catalog's schemas are read, never changed): many MCP servers
// declare no output schema, and a copy per tool of every source cost about
// 1 KB each.
var (
	defaultToolInput  = Object{"type": "object"}
	defaultToolOutput = Object{"type": "object", "properties": Object{"content": Object{"type": "array"}}}
)

// Capability is one executable node a workflow step can use.
type Capability struct {
	Name         string   // qualified: "<source_id>.<local_name>"
	SourceID     string   // connection id or platform source id
	LocalName    string   // tool name within the source
	Description  string   // may be empty
	Outcomes     []string // declared outcomes
	InputSchema  Object
	OutputSchema Object
	// Platform capabilities are built in and need no deployment binding.
	Platform bool
	// SafeToRepeat is set when calling the capability again after a call
	// whose outcome is unknown does no harm: a pure built-in, or a tool
	// annotated readOnlyHint or idempotentHint.
	SafeToRepeat bool
	// Hints are the tool's annotations, MCP's defaults filled in.
	Hints Hints
	// TaskSupport is the tool's execution.taskSupport (Tool.TaskSupport);
	// "" for a built-in.
	TaskSupport string
}

// Hints are what a capability's tool says of its effects, as MCP's tool
// annotations do. A tool that says nothing is assumed to be neither read
// only nor idempotent, and to be destructive and open world, as MCP
// assumes.
type Hints struct {
	ReadOnly, Idempotent, Destructive, OpenWorld bool
}

// PureHints are the hints of a built-in that reads nothing outside the
// run and changes nothing: read only, idempotent, closed world.
var PureHints = Hints{ReadOnly: true, Idempotent: true}

// Capabilities turns a snapshot's tools into capabilities named
// "<connection_id>.<tool>".
func (s Snapshot) Capabilities() []Capability {
	out := make([]Capability, 0, len(s.Tools))
	for _, t := range s.Tools {
		out = append(out, t.Capability(s.ConnectionID))
	}
	return out
}

// Capability is the tool as a workflow capability of connection connID.
func (t Tool) Capability(connID string) Capability {
	in := t.InputSchema
	if in == nil {
		in = defaultToolInput
	}
	out := t.OutputSchema
	if out == nil {
		out = defaultToolOutput
	}
	return Capability{
		Name:         connID + "." + t.Name,
		SourceID:     connID,
		LocalName:    t.Name,
		Description:  t.Description,
		Outcomes:     append([]string(nil), ToolOutcomes...),
		InputSchema:  in,
		OutputSchema: out,
		SafeToRepeat: t.ReadOnly || t.Idempotent,
		Hints:        t.hints(),
		TaskSupport:  t.TaskSupport,
	}
}

// hints fills in MCP's defaults: destructive unless read only or said
// otherwise, open world unless said otherwise.
func (t Tool) hints() Hints {
	h := Hints{ReadOnly: t.ReadOnly, Idempotent: t.Idempotent, Destructive: !t.ReadOnly, OpenWorld: true}
	if t.Destructive != nil && !t.ReadOnly {
		h.Destructive = *t.Destructive
	}
	if t.OpenWorld != nil {
		h.OpenWorld = *t.OpenWorld
	}
	return h
}

// SplitName splits a qualified capability name at the source whose id is
// the longest prefix accepted by isSource. Connection ids contain a dot, so
// a plain split on the first or last dot is not enough.
func SplitName(name string, isSource func(string) bool) (source, local string, ok bool) {
	for i := strings.LastIndex(name, "."); i > 0; i = strings.LastIndex(name[:i], ".") {
		if isSource(name[:i]) {
			return name[:i], name[i+1:], true
		}
	}
	return "", "", false
}

// Properties lists the top-level property names of an object schema.
func Properties(schema Object) []string {
	props, _ := schema["properties"].(map[string]any)
	names := make([]string, 0, len(props))
	for name := range props {
		names = append(names, name)
	}
	return names
}

// Required lists the required property names of an object schema.
func Required(schema Object) []string {
	switch raw := schema["required"].(type) {
	case []string:
		return append([]string(nil), raw...)
	case []any:
		names := make([]string, 0, len(raw))
		for _, r := range raw {
			if s, ok := r.(string); ok {
				names = append(names, s)
			}
		}
		return names
	}
	return nil
}
