package workflow

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Expression limits: a composite input is at most this deep and this big.
const (
	MaxExpressionDepth = 64
	MaxExpressionNodes = 1024
)

// InputBinding fills one node-local target of a step's input from exactly
// one of: a graph path ("input.x", "state.y", "context.loop_item"), a
// literal JSON value (null included), or a composite expression.
type InputBinding struct {
	Target     LocalPath       `json:"target"`
	Path       *GraphPath      `json:"path,omitempty"`
	Value      json.RawMessage `json:"value,omitempty"`
	Expression *Expression     `json:"expression,omitempty"`
}

// PathBinding and ValueBinding build input bindings in code.
func PathBinding(target, path string) InputBinding {
	p := GraphOf(path)
	return InputBinding{Target: LocalOf(target), Path: &p}
}

func ValueBinding(target string, value any) InputBinding {
	raw, err := json.Marshal(value)
	if err != nil {
		panic(fmt.Sprintf("value binding %s: %v", target, err))
	}
	return InputBinding{Target: LocalOf(target), Value: raw}
}

// UnmarshalJSON decodes strictly: unknown keys are errors.
func (b *InputBinding) UnmarshalJSON(data []byte) error {
	type plain InputBinding
	var p plain
	if err := strictDecode(data, &p); err != nil {
		return fmt.Errorf("input binding: %w", err)
	}
	*b = InputBinding(p)
	return nil
}

// kinds counts how many of path, value and expression are set.
func (b InputBinding) kinds() int {
	n := 0
	for _, set := range []bool{b.Path != nil, b.Value != nil, b.Expression != nil} {
		if set {
			n++
		}
	}
	return n
}

// OutputBinding copies a node-local output path into a state path.
type OutputBinding struct {
	Source LocalPath `json:"source"`
	Target StatePath `json:"target"`
}

// OutputTo builds an output binding in code.
func OutputTo(source, target string) OutputBinding {
	return OutputBinding{Source: LocalOf(source), Target: StateOf(target)}
}

func (b *OutputBinding) UnmarshalJSON(data []byte) error {
	type plain OutputBinding
	var p plain
	if err := strictDecode(data, &p); err != nil {
		return fmt.Errorf("output binding: %w", err)
	}
	*b = OutputBinding(p)
	return nil
}

// Expression kinds.
const (
	ExprLiteral = "literal"
	ExprPath    = "path"
	ExprArray   = "array"
	ExprObject  = "object"
)

// Expression composes an input value: a literal, a graph path, or an
// array or object of expressions.
type Expression struct {
	Kind   string                `json:"kind"`
	Value  json.RawMessage       `json:"value,omitempty"`
	Path   *GraphPath            `json:"path,omitempty"`
	Items  []Expression          `json:"items,omitempty"`
	Fields map[string]Expression `json:"fields,omitempty"`
}

func (x *Expression) UnmarshalJSON(data []byte) error {
	type plain Expression
	var p plain
	if err := strictDecode(data, &p); err != nil {
		return fmt.Errorf("expression: %w", err)
	}
	*x = Expression(p)
	return nil
}

// check validates an expression's shape and size; nodes counts every
// expression seen so far.
func (x Expression) check(depth int, nodes *int) error {
	*nodes++
	if depth > MaxExpressionDepth {
		return fmt.Errorf("expression is deeper than %d", MaxExpressionDepth)
	}
	if *nodes > MaxExpressionNodes {
		return fmt.Errorf("expression has more than %d nodes", MaxExpressionNodes)
	}
	switch x.Kind {
	case ExprLiteral:
		if x.Value == nil {
			return fmt.Errorf("a literal expression needs a value")
		}
	case ExprPath:
		if x.Path == nil {
			return fmt.Errorf("a path expression needs a path")
		}
		return x.Path.Err()
	case ExprArray:
		for _, item := range x.Items {
			if err := item.check(depth+1, nodes); err != nil {
				return err
			}
		}
	case ExprObject:
		for _, k := range SortedKeys(x.Fields) {
			if err := x.Fields[k].check(depth+1, nodes); err != nil {
				return err
			}
		}
	default:
		return fmt.Errorf("unknown expression kind %q", x.Kind)
	}
	return nil
}

// paths lists the graph paths an expression reads.
func (x Expression) paths() []GraphPath {
	switch x.Kind {
	case ExprPath:
		if x.Path != nil {
			return []GraphPath{*x.Path}
		}
	case ExprArray:
		var out []GraphPath
		for _, item := range x.Items {
			out = append(out, item.paths()...)
		}
		return out
	case ExprObject:
		var out []GraphPath
		for _, k := range SortedKeys(x.Fields) {
			out = append(out, x.Fields[k].paths()...)
		}
		return out
	}
	return nil
}

// sourcePaths lists the graph paths an input binding reads.
func (b InputBinding) sourcePaths() []GraphPath {
	switch {
	case b.Path != nil:
		return []GraphPath{*b.Path}
	case b.Expression != nil:
		return b.Expression.paths()
	}
	return nil
}

// strictDecode decodes data into v, refusing unknown keys.
func strictDecode(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}
