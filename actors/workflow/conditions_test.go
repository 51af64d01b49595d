package workflow_test

import (
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/workflow"
)

// conditionInput is what every condition case reads.
var conditionInput = workflow.Object{
	"n": 5.0, "m": 7.0, "s": "pear", "t": "apple", "null": nil, "yes": true,
	"obj": workflow.Object{"a": []any{1.0, "x"}}, "list": []any{1.0, 2.0},
}

func TestConditionOperators(t *testing.T) {
	const (
		T = "yes"
		F = "no"
	)
	for _, tc := range []struct {
		name, cond string
		want       string // yes, no, or the run's error
	}{
		{"exists present", `{"op":"exists","path":"input.n"}`, T},
		{"exists null counts as present", `{"op":"exists","path":"input.null"}`, T},
		{"exists missing", `{"op":"exists","path":"input.nope"}`, F},
		{"exists nested", `{"op":"exists","path":"input.obj.a"}`, T},
		{"exists below a non-object", `{"op":"exists","path":"input.n.x"}`, F},
		{"exists structural path", `{"op":"exists","path":{"root":"input","parts":["obj","a"]}}`, T},
		{"exists context", `{"op":"exists","path":"context.prior_outcome"}`, T}, // null at the first step
		{"exists unset state", `{"op":"exists","path":"state.flag"}`, F},

		{"not true", `{"op":"not","arg":{"op":"exists","path":"input.nope"}}`, T},
		{"not false", `{"op":"not","arg":{"op":"exists","path":"input.n"}}`, F},
		{"not of an error fails", `{"op":"not","arg":{"op":"gt","left":{"path":"input.s"},"right":{"value":1}}}`, `step "d": gt: cannot order string and number`},

		{"and all true", `{"op":"and","args":[{"op":"exists","path":"input.n"},{"op":"exists","path":"input.s"}]}`, T},
		{"and one false", `{"op":"and","args":[{"op":"exists","path":"input.n"},{"op":"exists","path":"input.nope"}]}`, F},
		{"and stops at the first false", `{"op":"and","args":[{"op":"exists","path":"input.nope"},{"op":"gt","left":{"path":"input.nope"},"right":{"value":1}}]}`, F},
		{"and single arg", `{"op":"and","args":[{"op":"exists","path":"input.n"}]}`, T},
		{"or one true", `{"op":"or","args":[{"op":"exists","path":"input.nope"},{"op":"exists","path":"input.n"}]}`, T},
		{"or all false", `{"op":"or","args":[{"op":"exists","path":"input.nope"},{"op":"exists","path":"input.gone"}]}`, F},
		{"or stops at the first true", `{"op":"or","args":[{"op":"exists","path":"input.n"},{"op":"gt","left":{"path":"input.nope"},"right":{"value":1}}]}`, T},
		{"or reaches an error", `{"op":"or","args":[{"op":"exists","path":"input.nope"},{"op":"lt","left":{"path":"input.nope"},"right":{"value":1}}]}`, `step "d": condition operand input.nope has no value`},

		{"eq numbers", `{"op":"eq","left":{"path":"input.n"},"right":{"value":5}}`, T},
		{"eq numbers differ", `{"op":"eq","left":{"path":"input.n"},"right":{"value":5.5}}`, F},
		{"eq strings", `{"op":"eq","left":{"path":"input.s"},"right":{"value":"pear"}}`, T},
		{"eq objects deep", `{"op":"eq","left":{"path":"input.obj"},"right":{"value":{"a":[1,"x"]}}}`, T},
		{"eq arrays order matters", `{"op":"eq","left":{"path":"input.list"},"right":{"value":[2,1]}}`, F},
		{"eq null", `{"op":"eq","left":{"path":"input.null"},"right":{"value":null}}`, T},
		{"eq booleans", `{"op":"eq","left":{"path":"input.yes"},"right":{"value":true}}`, T},
		{"eq mixed types are unequal", `{"op":"eq","left":{"path":"input.n"},"right":{"value":"5"}}`, F},
		{"eq two paths", `{"op":"eq","left":{"path":"input.n"},"right":{"path":"input.m"}}`, F},
		{"eq missing operand fails", `{"op":"eq","left":{"path":"input.nope"},"right":{"value":null}}`, `step "d": condition operand input.nope has no value`},
		{"ne", `{"op":"ne","left":{"path":"input.s"},"right":{"value":"fig"}}`, T},
		{"ne equal", `{"op":"ne","left":{"path":"input.s"},"right":{"value":"pear"}}`, F},
		{"ne mixed types", `{"op":"ne","left":{"path":"input.null"},"right":{"value":0}}`, T},
		{"ne missing operand fails", `{"op":"ne","left":{"value":1},"right":{"path":"state.flag"}}`, `step "d": condition operand state.flag has no value`},

		{"gt numbers", `{"op":"gt","left":{"path":"input.m"},"right":{"path":"input.n"}}`, T},
		{"gt equal numbers", `{"op":"gt","left":{"path":"input.n"},"right":{"value":5}}`, F},
		{"gt strings", `{"op":"gt","left":{"path":"input.s"},"right":{"path":"input.t"}}`, T},
		{"ge equal numbers", `{"op":"ge","left":{"path":"input.n"},"right":{"value":5}}`, T},
		{"ge smaller", `{"op":"ge","left":{"path":"input.n"},"right":{"value":6}}`, F},
		{"ge strings", `{"op":"ge","left":{"path":"input.t"},"right":{"value":"apple"}}`, T},
		{"lt numbers", `{"op":"lt","left":{"path":"input.n"},"right":{"value":5.01}}`, T},
		{"lt strings", `{"op":"lt","left":{"path":"input.s"},"right":{"path":"input.t"}}`, F},
		{"le equal strings", `{"op":"le","left":{"path":"input.s"},"right":{"value":"pear"}}`, T},
		{"le larger", `{"op":"le","left":{"path":"input.m"},"right":{"value":-1}}`, F},
		{"gt mixed types fail", `{"op":"gt","left":{"path":"input.n"},"right":{"path":"input.s"}}`, `step "d": gt: cannot order number and string`},
		{"ge null fails", `{"op":"ge","left":{"path":"input.null"},"right":{"value":0}}`, `step "d": ge: cannot order null and number`},
		{"lt booleans fail", `{"op":"lt","left":{"path":"input.yes"},"right":{"value":false}}`, `step "d": lt: cannot order boolean and boolean`},
		{"le objects fail", `{"op":"le","left":{"path":"input.obj"},"right":{"path":"input.obj"}}`, `step "d": le: cannot order object and object`},
		{"gt missing operand fails", `{"op":"gt","left":{"path":"input.nope"},"right":{"value":1}}`, `step "d": condition operand input.nope has no value`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			e, trace := runDraft(t, `{"name":"w","start":"d","outcomes":["yes","no"],
				"state_schema":{"type":"object","properties":{"flag":{}}},
				"steps":{"d":{"when":{"if":`+tc.cond+`,"then":"y","otherwise":"n"}},
				  "y":{"end":{"outcome":"yes"}},"n":{"end":{"outcome":"no"}}}}`, conditionInput, noCalls(t))
			if tc.want != T && tc.want != F {
				errHas(t, e, tc.want)
				is.Equal(len(trace), 0) // a failed condition records nothing
				return
			}
			is.Equal(e.Status(), workflow.StatusCompleted)
			is.Equal(e.Outcome(), tc.want)
			is.Equal(trace[0].Output, workflow.Object{"predicate": tc.want == T})
		})
	}
}

func TestConditionsReadStateWrittenEarlier(t *testing.T) {
	is := is.New(t)
	e, trace := runDraft(t, `{"name":"w","start":"set","outcomes":["ok","big"],
		"state_schema":{"type":"object","properties":{"n":{"type":"number"}}},
		"steps":{"set":{"use":"wf.std.constant","input":[{"target":"value","value":12}],"output":[{"source":"value","target":"state.n"}]},
		  "d":{"when":{"if":{"op":"and","args":[
		    {"op":"ge","left":{"path":"state.n"},"right":{"value":10}},
		    {"op":"eq","left":{"path":"context.prior_outcome"},"right":{"value":"ok"}},
		    {"op":"eq","left":{"path":"context.activated_incoming_edge"},"right":{"value":"set"}}]},"then":"big"}},
		  "big":{"end":{"outcome":"big"}}},
		"routes":{"set":{"ok":"d"}}}`, nil, noCalls(t))
	is.Equal(e.Outcome(), "big")
	is.Equal(hops(trace), []string{"root set ok->d", "root d true->big", "root big big->__end__"})
}

func TestConditionBuilders(t *testing.T) {
	is := is.New(t)
	c := workflow.And(
		workflow.Exists("input.a"),
		workflow.Not(workflow.Or(workflow.Compare(workflow.OpGt, workflow.PathOperand("input.a"), workflow.ValueOperand(3)))),
	)
	p := planOf(t, `{"name":"w","start":"d","steps":{"d":{"when":{"if":{"op":"exists","path":"input.a"},"then":"__end__"}}}}`)
	p.Nodes[0].Check = &c
	is.Equal(workflow.CheckPlan(p), nil)
	for _, tc := range []struct {
		a    float64
		want bool
	}{{1, true}, {4, false}} {
		e := start(t, workflow.Program{Root: p}, workflow.Object{"a": tc.a})
		trace := drive(t, e, noCalls(t))
		is.Equal(trace[0].Output["predicate"], tc.want)
	}
}
