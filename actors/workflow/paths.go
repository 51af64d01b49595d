package workflow

import (
	"fmt"
	"strings"
)

// Path roots a graph source path may start with.
const (
	RootInput   = "input"
	RootState   = "state"
	RootContext = "context"
)

// parseGraphPath splits "input.a.b" into its root and parts.
func parseGraphPath(p string) (root string, parts []string, err error) {
	segs := strings.Split(p, ".")
	switch segs[0] {
	case RootInput, RootState, RootContext:
	default:
		return "", nil, fmt.Errorf("path %q must start with input, state or context", p)
	}
	for _, s := range segs[1:] {
		if s == "" {
			return "", nil, fmt.Errorf("path %q has an empty segment", p)
		}
	}
	return segs[0], segs[1:], nil
}

// parseStatePath parses a writable state path; bare "state" is invalid.
func parseStatePath(p string) ([]string, error) {
	root, parts, err := parseGraphPath(p)
	if err != nil {
		return nil, err
	}
	if root != RootState || len(parts) == 0 {
		return nil, fmt.Errorf("target %q must be a field path under state, such as state.result", p)
	}
	return parts, nil
}

// parseLocalPath parses a node-local path: "field", "a.b", or "." for the
// whole payload.
func parseLocalPath(p string) ([]string, error) {
	if p == "." {
		return nil, nil
	}
	parts := strings.Split(p, ".")
	for _, s := range parts {
		if s == "" {
			return nil, fmt.Errorf("local path %q has an empty segment", p)
		}
	}
	return parts, nil
}

// lookup walks parts into v.
func lookup(v any, parts []string) (any, bool) {
	for _, p := range parts {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = m[p]; !ok {
			return nil, false
		}
	}
	return v, true
}

// assign sets parts in obj to v, creating intermediate objects. An empty
// parts list merges v (an object) into obj.
func assign(obj Object, parts []string, v any) error {
	if len(parts) == 0 {
		m, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("whole-payload target needs an object, got %T", v)
		}
		for k, x := range m {
			obj[k] = x
		}
		return nil
	}
	for _, p := range parts[:len(parts)-1] {
		next, ok := obj[p].(map[string]any)
		if !ok {
			next = Object{}
			obj[p] = next
		}
		obj = next
	}
	obj[parts[len(parts)-1]] = v
	return nil
}
