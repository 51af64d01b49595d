package contract

import (
	"encoding/json"
	"fmt"
	"slices"
)

// OpenRPCVersion is the OpenRPC version of the document OpenRPC builds.
const OpenRPCVersion = "1.3.2"

// ExtensionKey marks, in the OpenRPC document, a method mcpflow adds to the
// reference contract.
const ExtensionKey = "x-mcpflow-extension"

// NotificationsKey lists, in the OpenRPC document, the notifications the
// server pushes to subscriptions (OpenRPC has no place for them): each
// with its name, description and params schema.
const NotificationsKey = "x-mcpflow-notifications"

// Info describes the API in the OpenRPC document.
type Info struct {
	Title   string `json:"title"`
	Version string `json:"version"`
}

// OpenRPC builds the OpenRPC document of the methods served: each with its
// by-name params and result schema from the manifest, extensions marked
// with ExtensionKey, and the manifest's shared schemas as components. A
// served method the manifest does not describe is an error: every method
// the server answers is in its contract.
func OpenRPC(served []string, info Info) (map[string]any, error) {
	var raw struct {
		Operations    []map[string]any `json:"operations"`
		Notifications []map[string]any `json:"notifications"`
		Components    map[string]any   `json:"components"`
	}
	if err := json.Unmarshal(manifestJSON, &raw); err != nil {
		return nil, fmt.Errorf("openrpc: decode manifest: %w", err)
	}
	byName := make(map[string]map[string]any, len(raw.Operations))
	for _, op := range raw.Operations {
		name, _ := op["method"].(string)
		byName[name] = op
	}
	names := slices.Sorted(slices.Values(served))
	methods := make([]any, 0, len(names))
	for _, name := range names {
		op, ok := byName[name]
		if !ok {
			return nil, fmt.Errorf("openrpc: method %q is served but not in the contract", name)
		}
		m := map[string]any{
			"name":           name,
			"paramStructure": "by-name",
			"params":         op["params"],
			"result":         map[string]any{"name": "result", "schema": op["result"].(map[string]any)["schema"]},
		}
		if errs, ok := op["errors"]; ok {
			m["errors"] = errs
		}
		if d, ok := op["description"]; ok {
			m["description"] = d
		}
		if ext, _ := op["extension"].(bool); ext {
			m[ExtensionKey] = true
		}
		methods = append(methods, m)
	}
	notifications := make([]any, 0, len(raw.Notifications))
	for _, n := range raw.Notifications {
		notifications = append(notifications, map[string]any{
			"name": n["method"], "description": n["description"], "params": n["params"], ExtensionKey: true,
		})
	}
	return map[string]any{
		"openrpc":        OpenRPCVersion,
		"info":           info,
		"methods":        methods,
		NotificationsKey: notifications,
		"components":     raw.Components,
	}, nil
}
