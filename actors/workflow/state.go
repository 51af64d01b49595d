package workflow

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcpflow/mcpflow/actors/workflow/std"
)

// ReducerKeyword is the state schema extension keyword that names the
// reducer of a property: "wf.std.append", or {"ref": {"source",
// "capability_key"}, "config": {...}}.
const ReducerKeyword = "reducer"

// reducerRef is a resolved reducer with its config.
type reducerRef struct {
	reducer std.Reducer
	config  Object
}

// reducerAt finds the reducer that owns exactly the state path parts:
// the "reducer" keyword of the property schema at that path. A path whose
// schema declares none is replaced.
func reducerAt(stateSchema Object, parts []string) (reducerRef, error) {
	schema := stateSchema
	for _, p := range parts {
		props, _ := schema["properties"].(map[string]any)
		next, ok := props[p].(map[string]any)
		if !ok {
			schema = nil
			break
		}
		schema = next
	}
	replace, _ := std.LookupReducer(std.StdSource + ".replace")
	if schema == nil || schema[ReducerKeyword] == nil {
		return reducerRef{reducer: replace}, nil
	}
	name, config, err := parseReducer(schema[ReducerKeyword])
	if err != nil {
		return reducerRef{}, fmt.Errorf("state.%s: %w", strings.Join(parts, "."), err)
	}
	r, ok := std.LookupReducer(name)
	if !ok {
		return reducerRef{}, fmt.Errorf("state.%s: unknown reducer %q", strings.Join(parts, "."), name)
	}
	return reducerRef{reducer: r, config: config}, nil
}

// parseReducer reads the two forms of the reducer keyword.
func parseReducer(v any) (name string, config Object, err error) {
	switch r := v.(type) {
	case string:
		return r, nil, nil
	case map[string]any:
		ref, _ := r["ref"].(map[string]any)
		source, _ := ref["source"].(string)
		key, _ := ref["capability_key"].(string)
		if source == "" || key == "" {
			return "", nil, fmt.Errorf("reducer {ref, config} needs ref.source and ref.capability_key")
		}
		config, _ = r["config"].(map[string]any)
		return source + "." + key, config, nil
	}
	return "", nil, fmt.Errorf("reducer must be a name or {ref, config}, not %s", jsonType(v))
}

// apply writes value at parts of state through the path's reducer and
// returns the value stored.
func apply(state, stateSchema Object, parts []string, value any) (any, error) {
	r, err := reducerAt(stateSchema, parts)
	if err != nil {
		return nil, err
	}
	current, present := lookup(any(state), parts)
	next, err := r.reducer.Apply(current, present, value, r.config)
	if err != nil {
		return nil, fmt.Errorf("state.%s: %s: %w", strings.Join(parts, "."), r.reducer.Name, err)
	}
	return next, assign(state, parts, next)
}

// buffered returns the frame that buffers f's writes: f or its nearest
// ancestor in the same scope running a concurrent foreach item; nil when
// writes go straight to the scope's state.
func (e *Execution) buffered(f *Frame) *Frame {
	for ; f != nil && f.Parent != ""; f = e.snap.Frames[f.Parent] {
		if f.Item != nil && f.Item.Buffered {
			return f
		}
	}
	return nil
}

// stateView is the state frame f reads: its scope's state, with the
// writes f's loop items have buffered applied on a copy.
func (e *Execution) stateView(f *Frame) Object {
	scope := e.snap.Scopes[f.Scope]
	var chain []*Frame
	for g := f; g != nil && g.Parent != ""; g = e.snap.Frames[g.Parent] {
		if len(g.Overlay) > 0 {
			chain = append(chain, g)
		}
	}
	if len(chain) == 0 {
		return scope.State
	}
	view := deepCopy(scope.State).(map[string]any)
	schema := e.plans[scope.Plan].plan.StateSchema
	for i := len(chain) - 1; i >= 0; i-- {
		for _, w := range chain[i].Overlay {
			// A buffered write was checked when it was made.
			_, _ = apply(view, schema, w.Path, deepCopy(w.Value))
		}
	}
	return view
}

// write commits one output value into the state of frame f's scope, or
// into the overlay of its concurrent item, and records the change.
func (e *Execution) write(f *Frame, target StatePath, value any, changes Object) error {
	scope := e.snap.Scopes[f.Scope]
	schema := e.plans[scope.Plan].plan.StateSchema
	if b := e.buffered(f); b != nil {
		// Check the write against the reducer now, on a scratch copy.
		if _, err := apply(deepCopy(e.stateView(f)).(map[string]any), schema, target.Parts, value); err != nil {
			return err
		}
		b.Overlay = append(b.Overlay, Write{Path: target.Parts, Value: value})
		changes[target.String()] = value
		return nil
	}
	stored, err := apply(scope.State, schema, target.Parts, value)
	if err != nil {
		return err
	}
	changes[target.String()] = stored
	return e.checkState(scope, target.Parts[0])
}

// checkState validates the state property a commit touched against its
// schema in the state schema.
func (e *Execution) checkState(scope *Scope, top string) error {
	schema := e.plans[scope.Plan].plan.StateSchema
	props, _ := schema["properties"].(map[string]any)
	sub, _ := props[top].(map[string]any)
	v, ok := scope.State[top]
	if !ok || len(sub) == 0 {
		return nil
	}
	return e.validate(sub, v, "state."+top)
}

// readScope reads a graph path against a scope's input and a state view
// (the scope's state when nil); context paths read ctx.
func readScope(scope *Scope, ctx Object, p GraphPath) (any, bool) {
	switch p.Root {
	case RootInput:
		return lookup(any(scope.Input), p.Parts)
	case RootState:
		return lookup(any(scope.State), p.Parts)
	case RootContext:
		return lookup(any(ctx), p.Parts)
	}
	return nil, false
}

// reader returns the resolver of graph paths in frame f.
func (e *Execution) reader(f *Frame) resolver {
	scope := e.snap.Scopes[f.Scope]
	view := &Scope{Input: scope.Input, State: e.stateView(f)}
	ctx := e.contextOf(f)
	return func(p GraphPath) (any, bool) { return readScope(view, ctx, p) }
}

// contextOf is the context frame f reads: its own, with the loop aliases
// of the items it runs inside (the innermost wins).
func (e *Execution) contextOf(f *Frame) Object {
	parentLineage := ""
	if f.Parent != "" {
		parentLineage = e.snap.Frames[f.Parent].Lineage
	}
	ctx := f.context(parentLineage)
	for g := e.snap.Frames[f.Parent]; g != nil && g.Parent != ""; g = e.snap.Frames[g.Parent] {
		if it := g.Item; it != nil && it.As != "" {
			if _, shadowed := ctx[it.As]; !shadowed {
				ctx[it.As] = it.Value
			}
		}
	}
	return ctx
}

// bindInput evaluates one input binding into dst.
func bindInput(dst Object, b InputBinding, read resolver) error {
	if err := b.Target.Err(); err != nil {
		return err
	}
	var v any
	switch {
	case b.Path != nil:
		// An absent source leaves its target out (omitted is not null):
		// an optional input the caller did not give stays out of the
		// call, and schemas catch what is required.
		found := false
		if v, found = read(*b.Path); !found {
			return nil
		}
	case b.Expression != nil:
		var err error
		if v, err = evalExpression(*b.Expression, read); err != nil {
			return fmt.Errorf("input %s: %w", b.Target, err)
		}
	default:
		if err := json.Unmarshal(b.Value, &v); err != nil {
			return fmt.Errorf("value for %s: %w", b.Target, err)
		}
	}
	return assign(dst, b.Target.Parts, deepCopy(v))
}

// resolveInput builds a payload from bindings.
func resolveInput(bindings []InputBinding, read resolver) (Object, error) {
	in := Object{}
	for _, b := range bindings {
		if err := bindInput(in, b, read); err != nil {
			return nil, err
		}
	}
	return in, nil
}

// evalExpression resolves a composite input expression.
func evalExpression(x Expression, read resolver) (any, error) {
	switch x.Kind {
	case ExprLiteral:
		var v any
		err := json.Unmarshal(x.Value, &v)
		return v, err
	case ExprPath:
		v, ok := read(*x.Path)
		if !ok {
			return nil, fmt.Errorf("path %s has no value", x.Path)
		}
		return v, nil
	case ExprArray:
		out := make([]any, len(x.Items))
		for i, item := range x.Items {
			v, err := evalExpression(item, read)
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	case ExprObject:
		out := make(Object, len(x.Fields))
		for k, field := range x.Fields {
			v, err := evalExpression(field, read)
			if err != nil {
				return nil, err
			}
			out[k] = v
		}
		return out, nil
	}
	return nil, fmt.Errorf("unknown expression kind %q", x.Kind)
}

// commitOutput applies output bindings: each reads a node-local path of
// output and writes it to a state path. The commit is all or nothing: a
// missing source, a reducer error or a state schema violation leaves the
// state as it was.
func (e *Execution) commitOutput(f *Frame, bindings []OutputBinding, output Object, changes Object) error {
	values := make([]any, len(bindings))
	tops := make([]string, 0, len(bindings))
	for i, b := range bindings {
		if err := b.Source.Err(); err != nil {
			return err
		}
		v, found := lookup(any(output), b.Source.Parts)
		if !found {
			return fmt.Errorf("output has no field %s for %s", b.Source, b.Target)
		}
		if err := b.Target.Err(); err != nil {
			return err
		}
		values[i] = deepCopy(v)
		tops = append(tops, b.Target.Parts[0])
	}
	undo := e.savepoint(f, tops)
	for i, b := range bindings {
		if err := e.write(f, b.Target, values[i], changes); err != nil {
			undo()
			return err
		}
	}
	return nil
}

// savepoint saves what writes from frame f to the top-level state fields
// tops may change, and returns the func that puts it back: the fields of
// the scope's state, or the writes buffered in f's concurrent item.
func (e *Execution) savepoint(f *Frame, tops []string) (undo func()) {
	if b := e.buffered(f); b != nil {
		n := len(b.Overlay)
		return func() { b.Overlay = b.Overlay[:n] }
	}
	state := e.snap.Scopes[f.Scope].State
	saved := make(map[string]any, len(tops))
	for _, top := range tops {
		if v, ok := state[top]; ok {
			saved[top] = deepCopy(v)
		}
	}
	return func() {
		for _, top := range tops {
			if v, ok := saved[top]; ok {
				state[top] = v
			} else {
				delete(state, top)
			}
		}
	}
}

// deepCopy copies a decoded JSON value, so that state never aliases a
// payload that is handed out or kept elsewhere.
func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, y := range x {
			m[k] = deepCopy(y)
		}
		return m
	case []any:
		s := make([]any, len(x))
		for i, y := range x {
			s[i] = deepCopy(y)
		}
		return s
	}
	return v
}
