package records

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/mcpflow/mcpflow/actors/catalog"
	"github.com/mcpflow/mcpflow/actors/jsonconv"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/workflow"
)

// capabilityKinds are the kinds a required capability may have.
var capabilityKinds = map[string]bool{"tool": true, "resource": true, "prompt": true, KindNodeSpec: true, "reducer": true, "workflow": true}

// Observed is what Requirements observes the live catalog through.
type Observed struct {
	// Find looks a capability up by its concrete name.
	Find workflow.Lookup
	// IsConnection reports whether an id names a configured connection.
	IsConnection func(id string) bool
	// Now is the clock the observation is stamped with.
	Now func() time.Time
}

// Requirements records what the plan depends on: explicit ones when
// given, else one node_spec requirement per non-platform capability, with
// the schemas and hashes observed in the live catalog.
func Requirements(plan workflow.Plan, bindings map[string]string, explicit map[string]workflow.Object, seen Observed) ([]store.RequiredCapability, error) {
	if explicit != nil {
		return explicitRequirements(explicit)
	}
	out := []store.RequiredCapability{}
	for _, name := range plan.Capabilities() {
		if _, ok := workflow.Builtin(name); ok {
			continue
		}
		source, local, ok := catalog.SplitName(name, func(src string) bool { return bindings[src] != "" || seen.IsConnection(src) })
		if !ok {
			i := strings.LastIndex(name, ".")
			source, local = name[:max(i, 0)], name[i+1:]
		}
		concrete := cmp.Or(bindings[source], source)
		req := store.RequiredCapability{Ref: store.CapabilityRef{Source: source, CapabilityKey: local}, Kind: KindNodeSpec}
		if c, ok := seen.Find(concrete + "." + local); ok {
			inHash, err := catalog.SchemaHash(c.InputSchema)
			if err != nil {
				return nil, err
			}
			outHash, err := catalog.SchemaHash(c.OutputSchema)
			if err != nil {
				return nil, err
			}
			now := seen.Now().UnixMilli()
			req.InputSchemaHash, req.InputSchemaSnapshot = &inHash, c.InputSchema
			req.OutputSchemaHash, req.OutputSchemaSnapshot = &outHash, c.OutputSchema
			req.ObservedConcreteSource, req.ObservedAtEpochMs = &concrete, &now
		}
		out = append(out, req)
	}
	return out, nil
}

// explicitRequirements decodes caller-given requirements keyed by name.
func explicitRequirements(explicit map[string]workflow.Object) ([]store.RequiredCapability, error) {
	keys := make([]string, 0, len(explicit))
	for k := range explicit {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]store.RequiredCapability, 0, len(keys))
	for _, k := range keys {
		var req store.RequiredCapability
		if err := jsonconv.Strict(explicit[k], &req); err != nil || req.Ref.Source == "" || req.Ref.CapabilityKey == "" {
			return nil, malformed("required_capabilities[%q] needs ref.source and ref.capability_key", k)
		}
		if req.Kind == "" {
			req.Kind = KindNodeSpec
		}
		out = append(out, req)
	}
	return out, nil
}

// ParseRequirements decodes a whole artifact's required capabilities,
// given as a list or as a map keyed by name (in name order); a capability
// required twice is refused.
func ParseRequirements(raw json.RawMessage) ([]store.RequiredCapability, error) {
	trimmed := bytes.TrimSpace(raw)
	var names []string
	var docs []workflow.Object
	switch {
	case len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")):
		return []store.RequiredCapability{}, nil
	case trimmed[0] == '{':
		var byName map[string]workflow.Object
		if err := json.Unmarshal(trimmed, &byName); err != nil {
			return nil, malformed("artifact required_capabilities: %v", err)
		}
		for name := range byName {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			docs = append(docs, byName[name])
		}
	default:
		if err := json.Unmarshal(trimmed, &docs); err != nil {
			return nil, malformed("artifact required_capabilities: %v", err)
		}
		for i := range docs {
			names = append(names, fmt.Sprint(i))
		}
	}
	out := make([]store.RequiredCapability, 0, len(docs))
	seen := map[store.CapabilityRef]bool{}
	for i, doc := range docs {
		var r store.RequiredCapability
		if err := jsonconv.Strict(doc, &r); err != nil {
			return nil, malformed("artifact required_capabilities[%s]: %v", names[i], err)
		}
		if r.Kind == "" {
			r.Kind = KindNodeSpec
		}
		switch {
		case r.Ref.Source == "" || r.Ref.CapabilityKey == "":
			return nil, malformed("artifact required_capabilities[%s] needs ref.source and ref.capability_key", names[i])
		case !capabilityKinds[r.Kind]:
			return nil, malformed("artifact required_capabilities[%s] has unknown kind %q", names[i], r.Kind)
		case seen[r.Ref]:
			return nil, malformed("capability %s.%s is required twice", r.Ref.Source, r.Ref.CapabilityKey)
		}
		seen[r.Ref] = true
		out = append(out, r)
	}
	return out, nil
}
