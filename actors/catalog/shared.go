package catalog

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
)

// Sources of one server offer the same catalog: a thousand sources of one
// MCP server, each with its own credentials, list the same tools with the
// same schemas. The registry keeps one decoded copy of such a catalog,
// found by the hash of its content, for every connection that lists it:
// a 28-tool catalog's decoded schemas are about 85 KB.

// content is the decoded catalog (tools, resources, prompts) that one or
// more connections' snapshots share, with its tools as capabilities of no
// connection yet (see Capability.of) and their index by name. It is never
// modified once built.
type content struct {
	key       string // the hash of the catalog's JSON; "" when it has none
	tools     []Tool
	resources []Resource
	prompts   []Prompt
	templates []ResourceTemplate
	caps      []Capability   // in tools' order, Name and SourceID unset
	byTool    map[string]int // tool name -> index in tools and caps
	// users counts the connections of the registry's current version
	// whose snapshot holds this content; guarded by the registry's mu.
	users int
}

func newContent(s Snapshot, key string) *content {
	caps := make([]Capability, len(s.Tools))
	byTool := make(map[string]int, len(s.Tools))
	for i, t := range s.Tools {
		caps[i] = t.Capability("")
		caps[i].Name, caps[i].SourceID = "", ""
		byTool[t.Name] = i
	}
	return &content{key: key, tools: s.Tools, resources: s.Resources, prompts: s.Prompts, templates: s.ResourceTemplates, caps: caps, byTool: byTool}
}

// of is a capability of content, as connection connID's: named
// "<connID>.<tool>". Its schemas and outcomes are the content's, shared.
func (c Capability) of(connID string) Capability {
	c.Name, c.SourceID = connID+"."+c.LocalName, connID
	return c
}

// ContentKey fingerprints what a snapshot offers, apart from whose it is
// and when it was listed: "sha256:<hex>" of the JSON of its tools,
// resources and prompts (map keys sorted, as encoding/json writes them;
// an empty output schema distinct from none). Two snapshots with the same
// key offer the same catalog.
func ContentKey(s Snapshot) (string, error) {
	tools := make([]keyedTool, len(s.Tools))
	for i, t := range s.Tools {
		tools[i] = keyedTool{Tool: t, OutputSchema: t.OutputSchema}
	}
	data, err := json.Marshal(struct {
		Tools     []keyedTool `json:"tools"`
		Resources []Resource  `json:"resources"`
		Prompts   []Prompt    `json:"prompts"`
		// omitted when empty: a catalog without templates keeps the key
		// it had before they were listed.
		Templates []ResourceTemplate `json:"resource_templates,omitempty"`
	}{tools, s.Resources, s.Prompts, s.ResourceTemplates})
	if err != nil {
		return "", fmt.Errorf("catalog of %q: %w", s.ConnectionID, err)
	}
	sum := sha256.Sum256(data)
	return fmt.Sprintf("sha256:%x", sum), nil
}

// keyedTool is a tool as its content key reads it: an empty output schema
// is not the absent one (a capability gets the default output schema only
// for an absent one), which the tool's own JSON does not tell apart.
type keyedTool struct {
	Tool
	OutputSchema Object `json:"output_schema"`
}

// sharedContent returns the content of s to hold in the registry: the one
// already held for the same key, or s's own, now shared under key, and
// counts the connection as one of its users. With no key (the catalog
// could not be encoded, which a decoded one always can) s keeps its own.
// The caller holds r.mu.
func (r *Registry) sharedContent(s Snapshot, key string) *content {
	if key == "" {
		return newContent(s, "")
	}
	c, ok := r.shared[key]
	if !ok {
		c = newContent(s, key)
		r.shared[key] = c
	}
	c.users++
	return c
}

// release forgets c once no connection of the current version holds it:
// readers of older versions keep their copy, and the next snapshot of the
// same content starts a new one. The caller holds r.mu.
func (r *Registry) release(c *content) {
	if c == nil || c.key == "" {
		return
	}
	if c.users--; c.users == 0 {
		delete(r.shared, c.key)
	}
}
