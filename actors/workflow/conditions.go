package workflow

import (
	"encoding/json"
	"fmt"
	"reflect"
)

// Condition operators.
const (
	OpExists = "exists"
	OpNot    = "not"
	OpAnd    = "and"
	OpOr     = "or"
	OpEq     = "eq"
	OpNe     = "ne"
	OpGt     = "gt"
	OpGe     = "ge"
	OpLt     = "lt"
	OpLe     = "le"
)

// Condition is a boolean expression over graph paths, discriminated by Op:
// exists{path}, not{arg}, and|or{args}, and eq|ne|gt|ge|lt|le{left, right}.
type Condition struct {
	Op    string      `json:"op"`
	Path  *GraphPath  `json:"path,omitempty"`
	Arg   *Condition  `json:"arg,omitempty"`
	Args  []Condition `json:"args,omitempty"`
	Left  *Operand    `json:"left,omitempty"`
	Right *Operand    `json:"right,omitempty"`
}

// Operand is one side of a comparison: a graph path or a literal value.
type Operand struct {
	Path  *GraphPath      `json:"path,omitempty"`
	Value json.RawMessage `json:"value,omitempty"`
}

// Exists, Not, And, Or and Compare build conditions in code.
func Exists(path string) Condition {
	p := GraphOf(path)
	return Condition{Op: OpExists, Path: &p}
}

func Not(c Condition) Condition        { return Condition{Op: OpNot, Arg: &c} }
func And(args ...Condition) Condition  { return Condition{Op: OpAnd, Args: args} }
func Or(args ...Condition) Condition   { return Condition{Op: OpOr, Args: args} }
func PathOperand(path string) *Operand { p := GraphOf(path); return &Operand{Path: &p} }
func ValueOperand(v any) *Operand {
	raw, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("condition operand: %v", err))
	}
	return &Operand{Value: raw}
}
func Compare(op string, left, right *Operand) Condition {
	return Condition{Op: op, Left: left, Right: right}
}

// resolver reads a graph path in the current frame.
type resolver func(GraphPath) (any, bool)

// check validates the condition's shape. It returns the diagnostic code
// and message of the first problem, or "" when it is well formed.
func (c Condition) check() (code, message string) {
	switch c.Op {
	case OpExists:
		if c.Path == nil {
			return "invalid_condition_path", "exists needs a path"
		}
		if err := c.Path.Err(); err != nil {
			return "invalid_condition_path", err.Error()
		}
	case OpNot:
		if c.Arg == nil {
			return "empty_condition_args", "not needs an arg"
		}
		return c.Arg.check()
	case OpAnd, OpOr:
		if len(c.Args) == 0 {
			return "empty_condition_args", c.Op + " needs at least one arg"
		}
		for _, a := range c.Args {
			if code, msg := a.check(); code != "" {
				return code, msg
			}
		}
	case OpEq, OpNe, OpGt, OpGe, OpLt, OpLe:
		for _, o := range []*Operand{c.Left, c.Right} {
			switch {
			case o == nil || (o.Path == nil) == (o.Value == nil):
				return "invalid_condition_path", c.Op + " needs a left and a right operand, each a path or a value"
			case o.Path != nil && o.Path.Err() != nil:
				return "invalid_condition_path", o.Path.Err().Error()
			}
		}
	default:
		return "draft_invalid", fmt.Sprintf("unknown condition operator %q", c.Op)
	}
	return "", ""
}

// paths lists the graph paths the condition reads.
func (c Condition) paths() []GraphPath {
	var out []GraphPath
	if c.Path != nil {
		out = append(out, *c.Path)
	}
	if c.Arg != nil {
		out = append(out, c.Arg.paths()...)
	}
	for _, a := range c.Args {
		out = append(out, a.paths()...)
	}
	for _, o := range []*Operand{c.Left, c.Right} {
		if o != nil && o.Path != nil {
			out = append(out, *o.Path)
		}
	}
	return out
}

// eval evaluates the condition. A path that resolves to nothing makes
// exists false; a comparison with a missing operand, or an ordering of
// values that are not both numbers or both strings, is an error.
func (c Condition) eval(read resolver) (bool, error) {
	switch c.Op {
	case OpExists:
		_, ok := read(*c.Path)
		return ok, nil
	case OpNot:
		v, err := c.Arg.eval(read)
		return !v, err
	case OpAnd, OpOr:
		for _, a := range c.Args {
			v, err := a.eval(read)
			if err != nil {
				return false, err
			}
			if v == (c.Op == OpOr) {
				return v, nil
			}
		}
		return c.Op == OpAnd, nil
	}
	left, err := c.Left.value(read)
	if err != nil {
		return false, err
	}
	right, err := c.Right.value(read)
	if err != nil {
		return false, err
	}
	switch c.Op {
	case OpEq:
		return jsonEqual(left, right), nil
	case OpNe:
		return !jsonEqual(left, right), nil
	}
	cmp, err := order(left, right)
	if err != nil {
		return false, fmt.Errorf("%s: %w", c.Op, err)
	}
	switch c.Op {
	case OpGt:
		return cmp > 0, nil
	case OpGe:
		return cmp >= 0, nil
	case OpLt:
		return cmp < 0, nil
	default:
		return cmp <= 0, nil
	}
}

func (o *Operand) value(read resolver) (any, error) {
	if o.Path != nil {
		v, ok := read(*o.Path)
		if !ok {
			return nil, fmt.Errorf("condition operand %s has no value", o.Path)
		}
		return v, nil
	}
	var v any
	if err := json.Unmarshal(o.Value, &v); err != nil {
		return nil, fmt.Errorf("condition operand: %w", err)
	}
	return v, nil
}

// order compares two numbers or two strings.
func order(a, b any) (int, error) {
	switch x := a.(type) {
	case float64:
		if y, ok := b.(float64); ok {
			switch {
			case x < y:
				return -1, nil
			case x > y:
				return 1, nil
			}
			return 0, nil
		}
	case string:
		if y, ok := b.(string); ok {
			switch {
			case x < y:
				return -1, nil
			case x > y:
				return 1, nil
			}
			return 0, nil
		}
	}
	return 0, fmt.Errorf("cannot order %s and %s: both must be numbers or both strings", jsonType(a), jsonType(b))
}

// jsonEqual compares two decoded JSON values.
func jsonEqual(a, b any) bool { return reflect.DeepEqual(a, b) }
