package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/mcpflow/mcpflow/actors/workflow"
	p "github.com/mcpflow/mcpflow/api/protocol"
)

// The flag words of draft authoring. Everything that writes reads as an
// assignment, what is written on the left: --in TARGET=PATH fills a step's
// input field TARGET from PATH, --out STATE=SOURCE stores the step's output
// field SOURCE at the state path STATE, --route OUTCOME=STEP sends an
// outcome to a step.

// cutPair splits "key=value" of flag at its first "=" (or, with last, its
// last one); neither side may be empty.
func cutPair(flag, s string, last bool) (string, string, error) {
	i := strings.Index(s, "=")
	if last {
		i = strings.LastIndex(s, "=")
	}
	if i <= 0 || i == len(s)-1 {
		return "", "", fmt.Errorf("--%s %q: want KEY=VALUE", flag, s)
	}
	return strings.TrimSpace(s[:i]), strings.TrimSpace(s[i+1:]), nil
}

// pairMap is the KEY=VALUE flags of flag as a map; a key given twice is
// an error. It is nil when there are none.
func pairMap(flag string, values []string) (map[string]string, error) {
	if len(values) == 0 {
		return nil, nil
	}
	out := make(map[string]string, len(values))
	for _, v := range values {
		k, val, err := cutPair(flag, v, false)
		if err != nil {
			return nil, err
		}
		if _, dup := out[k]; dup {
			return nil, fmt.Errorf("--%s: %s given twice", flag, k)
		}
		out[k] = val
	}
	return out, nil
}

// literal is s as a JSON value: s itself when it is JSON (a number, true,
// null, "quoted", an object or list), else the string s.
func literal(s string) json.RawMessage {
	if json.Valid([]byte(s)) {
		return json.RawMessage(s)
	}
	data, _ := json.Marshal(s) // a string always encodes
	return data
}

// sortedKeys are m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// inputFlags build an input binding list (a step's input, an interrupt's
// request, the workflow's output): --in TARGET=PATH, then --value
// TARGET=JSON, then --expr TARGET=EXPRESSION, each in the order given.
type inputFlags struct {
	in, value, expr []string
}

// add adds the flags, named with prefix ("" or "request-").
func (b *inputFlags) add(f *pflag.FlagSet, prefix, what string) {
	f.StringArrayVar(&b.in, prefix+"in", nil, "TARGET=PATH: fill "+what+" field TARGET from a graph path (input.x, state.x, context.x); repeat for more")
	f.StringArrayVar(&b.value, prefix+"value", nil, "TARGET=VALUE: fill "+what+" field TARGET with a literal (JSON, else a string); repeat for more")
	f.StringArrayVar(&b.expr, prefix+"expr", nil, "TARGET=EXPRESSION: fill "+what+" field TARGET from a composite expression (JSON); repeat for more")
}

// given reports whether any binding was given.
func (b *inputFlags) given() bool { return len(b.in)+len(b.value)+len(b.expr) > 0 }

// bindings are the bindings given, named for errors by prefix.
func (b *inputFlags) bindings(prefix string) ([]workflow.InputBinding, error) {
	out := []workflow.InputBinding{}
	for _, s := range b.in {
		target, path, err := cutPair(prefix+"in", s, false)
		if err != nil {
			return nil, err
		}
		out = append(out, workflow.PathBinding(target, path))
	}
	for _, s := range b.value {
		target, v, err := cutPair(prefix+"value", s, false)
		if err != nil {
			return nil, err
		}
		out = append(out, workflow.InputBinding{Target: workflow.LocalOf(target), Value: literal(v)})
	}
	for _, s := range b.expr {
		target, v, err := cutPair(prefix+"expr", s, false)
		if err != nil {
			return nil, err
		}
		var e workflow.Expression
		if err := json.Unmarshal([]byte(v), &e); err != nil {
			return nil, fmt.Errorf("--%sexpr %s: %w", prefix, target, err)
		}
		out = append(out, workflow.InputBinding{Target: workflow.LocalOf(target), Expression: &e})
	}
	return out, nil
}

// pathMap is the --in bindings as a legacy map, graph path → target; the
// map has no room for --value or --expr.
func (b *inputFlags) pathMap() (map[string]string, error) {
	if len(b.value)+len(b.expr) > 0 {
		return nil, errors.New("--merge takes --in bindings only")
	}
	m := make(map[string]string, len(b.in))
	for _, s := range b.in {
		target, path, err := cutPair("in", s, false)
		if err != nil {
			return nil, err
		}
		if _, dup := m[path]; dup {
			return nil, fmt.Errorf("--in: %s read twice: with --merge each path fills one target", path)
		}
		m[path] = target
	}
	return m, nil
}

// apiBindings are bindings as the API's params carry them, the language's
// JSON; it passes on the error of the call that made them.
func apiBindings[T workflow.InputBinding | workflow.OutputBinding](in []T, err error) ([]json.RawMessage, error) {
	if err != nil {
		return nil, err
	}
	out := make([]json.RawMessage, len(in))
	for i, b := range in {
		if out[i], err = json.Marshal(b); err != nil {
			return nil, fmt.Errorf("binding %d: %w", i, err)
		}
	}
	return out, nil
}

// outputBindings are --out STATE=SOURCE flags as output bindings.
func outputBindings(flag string, values []string) ([]workflow.OutputBinding, error) {
	out := []workflow.OutputBinding{}
	for _, s := range values {
		target, source, err := cutPair(flag, s, false)
		if err != nil {
			return nil, err
		}
		out = append(out, workflow.OutputTo(source, target))
	}
	return out, nil
}

// comparisons are the operators of a condition's short form, the longer
// first so that ">=" is not read as ">".
var comparisons = []struct{ word, op string }{
	{"==", workflow.OpEq}, {"!=", workflow.OpNe}, {">=", workflow.OpGe}, {"<=", workflow.OpLe}, {">", workflow.OpGt}, {"<", workflow.OpLt},
}

// parseCondition reads a condition: JSON ({"op": …}), or the short forms
// "exists PATH", "!exists PATH" and "PATH OP OPERAND" with OP one of
// == != > >= < <=. The right operand is a graph path when it starts with
// input., state. or context., else a literal (JSON, else a string).
func parseCondition(s string) (json.RawMessage, error) {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "{") {
		obj, err := decodeObject([]byte(s))
		if err != nil {
			return nil, fmt.Errorf("condition: %w", err)
		}
		return json.Marshal(obj)
	}
	var c workflow.Condition
	if rest, ok := strings.CutPrefix(s, "!exists "); ok {
		c = workflow.Not(workflow.Exists(strings.TrimSpace(rest)))
	} else if rest, ok := strings.CutPrefix(s, "exists "); ok {
		c = workflow.Exists(strings.TrimSpace(rest))
	} else {
		found := false
		for _, cmp := range comparisons {
			left, right, ok := strings.Cut(s, " "+cmp.word+" ")
			if !ok {
				continue
			}
			left, right = strings.TrimSpace(left), strings.TrimSpace(right)
			if left == "" || right == "" {
				break
			}
			c = workflow.Compare(cmp.op, workflow.PathOperand(left), operand(right))
			found = true
			break
		}
		if !found {
			return nil, fmt.Errorf("condition %q: want JSON, \"exists PATH\", \"!exists PATH\" or \"PATH OP VALUE\" (OP: == != > >= < <=, spaced)", s)
		}
	}
	return json.Marshal(c)
}

// operand is the right side of a short condition.
func operand(s string) *workflow.Operand {
	for _, root := range []string{"input.", "state.", "context."} {
		if strings.HasPrefix(s, root) {
			return workflow.PathOperand(s)
		}
	}
	return &workflow.Operand{Value: literal(s)}
}

// routeSource reads --after STEP[:OUTCOME].
func routeSource(s string) *p.RouteSource {
	if s == "" {
		return nil
	}
	step, outcome, _ := strings.Cut(s, ":")
	return &p.RouteSource{StepID: step, Outcome: outcome}
}

// itemError reads --item-error: fail, skip or collect:STATEPATH.
func itemError(s string) (any, error) {
	switch {
	case s == "fail" || s == "skip":
		return s, nil
	case strings.HasPrefix(s, "collect:") && len(s) > len("collect:"):
		return p.Object{"action": "collect", "collect_to": strings.TrimPrefix(s, "collect:")}, nil
	}
	return nil, fmt.Errorf("--item-error %q: want fail, skip or collect:STATEPATH", s)
}

// workflowRef reads --workflow ARTIFACT@VERSION, or a NAME.
func workflowRef(s string) (p.Object, error) {
	if s == "" {
		return nil, errors.New("--workflow is required: ARTIFACT@VERSION, or a NAME")
	}
	id, version, ok := strings.Cut(s, "@")
	if !ok {
		return p.Object{"name": s}, nil
	}
	v, err := strconv.Atoi(version)
	if id == "" || err != nil || v < 1 {
		return nil, fmt.Errorf("--workflow %q: want ARTIFACT@VERSION, the version a number from 1", s)
	}
	return p.Object{"artifact_id": id, "version": v}, nil
}

// optionalIntFlag is an int flag that is nil unless given, so that 0
// given is told from none.
type optionalIntFlag struct{ value *int }

func (o *optionalIntFlag) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil {
		return errors.New("not a whole number")
	}
	o.value = &n
	return nil
}

func (o *optionalIntFlag) String() string {
	if o.value == nil {
		return ""
	}
	return strconv.Itoa(*o.value)
}

func (o *optionalIntFlag) Type() string { return "int" }

// objectFlag reads an optional JSON object flag (inline, @FILE or @-):
// nil when it was not given.
func objectFlag(flag, arg string, stdin io.Reader) (p.Object, error) {
	if arg == "" {
		return nil, nil
	}
	obj, err := readJSONArg(arg, stdin)
	if err != nil {
		return nil, fmt.Errorf("--%s: %w", flag, err)
	}
	return obj, nil
}
