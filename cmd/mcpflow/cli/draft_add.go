package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	p "github.com/mcpflow/mcpflow/api/protocol"
)

// stepFlags are the flags of `draft add <kind>`; each kind adds the ones
// it takes.
type stepFlags struct {
	after    string   // --after STEP[:OUTCOME]
	routes   []string // --route OUTCOME=TARGET
	in       inputFlags
	out      []string // --out STATE=SOURCE
	desc     string
	retry    optionalIntFlag
	timeout  int
	cond     string // when --if
	then     string
	other    string // when --otherwise, choose and match --default
	clauses  []string
	value    string // match --value
	cases    []string
	over, as string
	mode     string
	maxAct   int
	maxOut   int
	itemErr  string
	outcome  string   // end
	kind     string   // interrupt
	resume   []string // interrupt --resume STATE=SOURCE
	outcomes []string // interrupt, subgraph
	schema1  string   // request_schema, subgraph input_schema
	schema2  string   // resume_schema, subgraph output_schema
	workflow string
	stdin    io.Reader
}

// stepKind is one of the nine kinds `draft add` offers.
type stepKind struct {
	name, short, long, example string
	// capability: the kind takes a CAPABILITY argument (use).
	capability bool
	// routed: the kind's outcomes are routed (it takes --route).
	routed bool
	flags  func(f *pflag.FlagSet, s *stepFlags)
	// payload is the kind's payload, the value of its kind key.
	payload func(s *stepFlags) (any, error)
}

func (s *stepFlags) addIfThen(f *pflag.FlagSet) {
	f.StringVar(&s.cond, "if", "", `the condition: "PATH OP VALUE" (OP: == != > >= < <=), "exists PATH", "!exists PATH", or JSON (required)`)
	f.StringVar(&s.then, "then", "", "the step to go to when it holds (required)")
	f.StringVar(&s.other, "otherwise", "", "the step to go to when it does not (default __end__)")
}

// stepKinds are the nine step kinds of the language (docs/language.md §8).
var stepKinds = []stepKind{
	{
		name: "use", short: "Add a step that calls a capability (workflow.draft_workspaces.add_step_from_capability)",
		long: `Add a use step that calls CAPABILITY. Its input comes from --in, --value
and --expr, its output goes to the state by --out (the state schema
follows); --route routes its outcomes (all or none), --after routes an
earlier step's outcome to it.`,
		example: `  mcpflow draft add use triage say demo.default.echo --in message=context.tag \
    --out state.echoes=message --route ok=each --route error=each`,
		capability: true, routed: true,
		flags: func(f *pflag.FlagSet, s *stepFlags) {
			s.in.add(f, "", "the step's input")
			addOutFlag(f, &s.out, "the step's output")
			f.StringVar(&s.desc, "desc", "", "what the step is for")
			f.Var(&s.retry, "retry", "further attempts when the call fails (default none)")
			f.IntVar(&s.timeout, "timeout-seconds", 0, "deadline of each call (default the server's)")
		},
	},
	{
		name: "when", short: "Add a step that goes one of two ways on a condition",
		example: `  mcpflow draft add when triage check --if 'input.urgent == true' --then ask --otherwise __end__`,
		flags:   func(f *pflag.FlagSet, s *stepFlags) { s.addIfThen(f) },
		payload: func(s *stepFlags) (any, error) {
			if s.cond == "" || s.then == "" {
				return nil, errors.New("--if and --then are required")
			}
			c, err := parseCondition(s.cond)
			if err != nil {
				return nil, fmt.Errorf("--if: %w", err)
			}
			return p.Object{"if": c, "then": s.then, "otherwise": firstSet(s.other, "__end__")}, nil
		},
	},
	{
		name: "choose", short: "Add a step that goes to the first clause that holds",
		example: `  mcpflow draft add choose triage how --clause 'exists input.email => by_email' \
    --clause 'exists input.phone => by_phone' --default by_hand`,
		flags: func(f *pflag.FlagSet, s *stepFlags) {
			f.StringArrayVar(&s.clauses, "clause", nil, "'CONDITION => STEP', in order; the condition as for when --if (required, repeat for more)")
			f.StringVar(&s.other, "default", "", "the step when no clause holds (default __end__)")
		},
		payload: func(s *stepFlags) (any, error) {
			if len(s.clauses) == 0 {
				return nil, errors.New("give at least one --clause 'CONDITION => STEP'")
			}
			clauses := make([]any, 0, len(s.clauses))
			for _, cl := range s.clauses {
				cond, target, err := cutArrow(cl)
				if err != nil {
					return nil, err
				}
				c, err := parseCondition(cond)
				if err != nil {
					return nil, fmt.Errorf("--clause: %w", err)
				}
				clauses = append(clauses, p.Object{"if": c, "then": target})
			}
			return p.Object{"clauses": clauses, "default": firstSet(s.other, "__end__")}, nil
		},
	},
	{
		name: "match", short: "Add a step that goes by the value at a path",
		example: `  mcpflow draft add match triage kind --value input.kind --case bug=fix --case feature=plan --default other`,
		flags: func(f *pflag.FlagSet, s *stepFlags) {
			f.StringVar(&s.value, "value", "", "the graph path whose value is matched (required)")
			f.StringArrayVar(&s.cases, "case", nil, "VALUE=STEP: go to STEP when the value equals VALUE (JSON, else a string); repeat for more")
			f.StringVar(&s.other, "default", "", "the step when no case matches (default __end__)")
		},
		payload: func(s *stepFlags) (any, error) {
			if s.value == "" || len(s.cases) == 0 {
				return nil, errors.New("--value and at least one --case VALUE=STEP are required")
			}
			cases := make([]any, 0, len(s.cases))
			for _, cs := range s.cases {
				v, target, err := cutPair("case", cs, true)
				if err != nil {
					return nil, err
				}
				cases = append(cases, p.Object{"equals": literal(v), "then": target})
			}
			return p.Object{"value": s.value, "cases": cases, "default": firstSet(s.other, "__end__")}, nil
		},
	},
	{
		name: "foreach", short: "Add a step that runs its body once per item of a list",
		long: `Add a foreach step over the list at --over. Its outcome loop goes to the
body, which routes back to the foreach step to end each item; done goes
on when every item is through (completed_with_errors too, with
--item-error skip or collect). Inside the body context.<as> is the item.`,
		example: `  mcpflow draft add foreach triage each --over input.tags --as tag --route loop=say --route done=check`,
		routed:  true,
		flags: func(f *pflag.FlagSet, s *stepFlags) {
			f.StringVar(&s.over, "over", "", "the graph path of the list (required)")
			f.StringVar(&s.as, "as", "", "the item's name in the body: context.<as> (required)")
			f.StringVar(&s.mode, "mode", "", "serial (default) or concurrent")
			f.IntVar(&s.maxAct, "max-active", 0, "concurrent: items running at once (default 4)")
			f.IntVar(&s.maxOut, "max-outstanding", 0, "concurrent: items admitted and not yet finished (default 20)")
			f.StringVar(&s.itemErr, "item-error", "", "when an item fails: fail (default), skip, or collect:STATEPATH")
		},
		payload: func(s *stepFlags) (any, error) {
			if s.over == "" || s.as == "" {
				return nil, errors.New("--over and --as are required")
			}
			fe := p.Object{"over": s.over, "as": s.as}
			if s.mode != "" {
				fe["mode"] = s.mode
			}
			if s.maxAct != 0 || s.maxOut != 0 {
				conc := p.Object{}
				if s.maxAct != 0 {
					conc["max_active"] = s.maxAct
				}
				if s.maxOut != 0 {
					conc["max_outstanding"] = s.maxOut
				}
				fe["concurrent"] = conc
			}
			if s.itemErr != "" {
				ie, err := itemError(s.itemErr)
				if err != nil {
					return nil, err
				}
				fe["item_error"] = ie
			}
			return fe, nil
		},
	},
	{
		name: "join", short: "Add a step where branches meet; it routes done",
		example: `  mcpflow draft add join triage meet --route done=__end__`,
		routed:  true,
		flags:   func(*pflag.FlagSet, *stepFlags) {},
		payload: func(*stepFlags) (any, error) { return p.Object{}, nil },
	},
	{
		name: "end", short: "Add a step that ends the workflow with an outcome",
		example: `  mcpflow draft add end triage no --outcome rejected`,
		flags: func(f *pflag.FlagSet, s *stepFlags) {
			f.StringVar(&s.outcome, "outcome", "", "the workflow's outcome, one of its outcomes (default ok)")
		},
		payload: func(s *stepFlags) (any, error) { return p.Object{"outcome": firstSet(s.outcome, "ok")}, nil },
	},
	{
		name: "interrupt", short: "Add a step that waits for an answer (mcpflow runs resume)",
		long: `Add an interrupt step: the run waits, with the request built by
--request-in, --request-value and --request-expr, until it is resumed
with a payload (checked against --resume-schema) and one of --outcomes
(default submitted); --resume stores the payload's fields in the state.`,
		example: `  mcpflow draft add interrupt triage ask --kind approval --request-value 'message=Ship it?' \
    --resume state.approved=approved --resume-schema '{"type":"object","properties":{"approved":{"type":"boolean"}}}' \
    --route submitted=__end__`,
		routed: true,
		flags: func(f *pflag.FlagSet, s *stepFlags) {
			f.StringVar(&s.kind, "kind", "", "what is asked, e.g. approval (required)")
			s.in.add(f, "request-", "the request's")
			f.StringArrayVar(&s.resume, "resume", nil, "STATE=SOURCE: store the resume payload's field SOURCE at the state path STATE; repeat for more")
			f.StringVar(&s.schema1, "request-schema", "", "the request's JSON Schema: a JSON object, @FILE or @-")
			f.StringVar(&s.schema2, "resume-schema", "", "the resume payload's JSON Schema: a JSON object, @FILE or @-")
			f.StringSliceVar(&s.outcomes, "outcomes", nil, "the outcomes it may be resumed with (default submitted)")
		},
		payload: func(s *stepFlags) (any, error) {
			if s.kind == "" {
				return nil, errors.New("--kind is required")
			}
			request, err := s.in.bindings("request-")
			if err != nil {
				return nil, err
			}
			resume, err := outputBindings("resume", s.resume)
			if err != nil {
				return nil, err
			}
			it := p.Object{"kind": s.kind, "request": request, "resume": resume}
			return it, s.schemasAndOutcomes(it, "request_schema", "resume_schema")
		},
	},
	{
		name: "subgraph", short: "Add a step that runs a saved workflow as a child",
		example: `  mcpflow draft add subgraph digest sum --workflow summarize_note@3 --in text=input.notes \
    --out state.digest=summary --route ok=__end__`,
		routed: true,
		flags: func(f *pflag.FlagSet, s *stepFlags) {
			f.StringVar(&s.workflow, "workflow", "", "the child: ARTIFACT@VERSION, or a NAME (required)")
			s.in.add(f, "", "the child's input")
			addOutFlag(f, &s.out, "the child's output")
			f.StringVar(&s.schema1, "input-schema", "", "the child input's JSON Schema, checked before it runs")
			f.StringVar(&s.schema2, "output-schema", "", "the child output's JSON Schema, checked when it ends")
			f.StringSliceVar(&s.outcomes, "outcomes", nil, "the child's outcomes, routed (default ok)")
			f.StringVar(&s.desc, "desc", "", "what the step is for")
		},
		payload: func(s *stepFlags) (any, error) {
			ref, err := workflowRef(s.workflow)
			if err != nil {
				return nil, err
			}
			input, err := s.in.bindings("")
			if err != nil {
				return nil, err
			}
			output, err := outputBindings("out", s.out)
			if err != nil {
				return nil, err
			}
			sg := p.Object{"workflow": ref, "input": input, "output": output}
			if s.desc != "" {
				sg["desc"] = s.desc
			}
			return sg, s.schemasAndOutcomes(sg, "input_schema", "output_schema")
		},
	},
}

// schemasAndOutcomes puts the two schema flags (as the keys named) and
// --outcomes into payload.
func (s *stepFlags) schemasAndOutcomes(payload p.Object, key1, key2 string) error {
	for _, sc := range []struct{ key, arg string }{{key1, s.schema1}, {key2, s.schema2}} {
		obj, err := objectFlag(flagName(sc.key), sc.arg, s.stdin)
		if err != nil {
			return err
		}
		if obj != nil {
			payload[sc.key] = obj
		}
	}
	if len(s.outcomes) > 0 {
		payload["outcomes"] = s.outcomes
	}
	return nil
}

// flagName is the flag of a payload key: request_schema → request-schema.
func flagName(key string) string {
	b := []byte(key)
	for i, c := range b {
		if c == '_' {
			b[i] = '-'
		}
	}
	return string(b)
}

// cutArrow splits a choose clause "CONDITION => STEP" at its last "=>".
func cutArrow(s string) (string, string, error) {
	if i := strings.LastIndex(s, "=>"); i > 0 {
		cond, target := strings.TrimSpace(s[:i]), strings.TrimSpace(s[i+2:])
		if cond != "" && target != "" {
			return cond, target, nil
		}
	}
	return "", "", fmt.Errorf("--clause %q: want 'CONDITION => STEP'", s)
}

// params are the params of adding the step kind k as args names it:
// WORKSPACE STEP, and CAPABILITY for use.
func (s *stepFlags) params(k stepKind, args []string) (any, error) {
	routes, err := pairMap("route", s.routes)
	if err != nil {
		return nil, err
	}
	after := routeSource(s.after)
	if k.capability {
		inputs, err := apiBindings(s.in.bindings(""))
		if err != nil {
			return nil, err
		}
		params := p.AddStepFromCapabilityParams{WorkspaceID: args[0], StepID: args[1], CapabilityName: args[2],
			Routes: routes, Desc: optional(s.desc), TimeoutSeconds: optionalInt(s.timeout)}
		if s.in.given() {
			params.InputBindings = inputs
		}
		params.Retry = s.retry.value
		if after != nil {
			params.RouteFromStep, params.RouteFromOutcome = &after.StepID, optional(after.Outcome)
		}
		for _, o := range s.out {
			target, source, err := cutPair("out", o, false)
			if err != nil {
				return nil, err
			}
			if params.BindOutputs == nil {
				params.BindOutputs = map[string]string{}
			}
			params.BindOutputs[source] = target
		}
		return params, nil
	}
	payload, err := k.payload(s)
	if err != nil {
		return nil, err
	}
	step, err := json.Marshal(p.Object{k.name: payload})
	if err != nil {
		return nil, fmt.Errorf("encode step: %w", err)
	}
	return p.AddStepParams{WorkspaceID: args[0], StepID: args[1], Step: step, Incoming: after, Routes: routes}, nil
}

func newDraftAddCommand(r *remote) *cobra.Command {
	subs := make([]*cobra.Command, 0, len(stepKinds))
	for _, k := range stepKinds {
		subs = append(subs, newDraftAddKindCommand(r, k))
	}
	cmd := newGroup("add", "Add a step of one of the nine kinds", subs...)
	cmd.Long = `Add a step of one of the nine kinds: use, when, choose, match, foreach,
join, end, interrupt, subgraph (docs/language.md). The first step added
becomes the start. --after STEP[:OUTCOME] routes an earlier step's outcome
(ok by default) to the new one; --route OUTCOME=TARGET routes the new
step's own outcomes (when, choose and match name their targets instead).`
	cmd.Example = `  mcpflow draft add foreach triage each --over input.tags --as tag --route done=__end__
  mcpflow draft add use triage say demo.default.echo --in message=context.tag --route ok=each --route error=each`
	return cmd
}

func newDraftAddKindCommand(r *remote, k stepKind) *cobra.Command {
	cmd, s := newStepCommand(k)
	method := p.MethodWorkspaceAddStep
	if k.capability {
		method = p.MethodWorkspaceAddStepFromCapability
	}
	return editing(r, cmd, method, func(cmd *cobra.Command, args []string) (any, error) {
		s.stdin = cmd.InOrStdin()
		return s.params(k, args)
	})
}

// newStepCommand is the command that adds a step of kind k, without its
// run, and the flags it fills.
func newStepCommand(k stepKind) (*cobra.Command, *stepFlags) {
	s := &stepFlags{}
	use, args := k.name+" WORKSPACE STEP", cobra.ExactArgs(2)
	if k.capability {
		use, args = k.name+" WORKSPACE STEP CAPABILITY", cobra.ExactArgs(3)
	}
	cmd := &cobra.Command{Use: use, Short: k.short, Long: k.long, Example: k.example, Args: args}
	f := cmd.Flags()
	f.StringVar(&s.after, "after", "", "STEP[:OUTCOME]: route that outcome (default ok) of an earlier step to this one")
	if k.routed {
		f.StringArrayVar(&s.routes, "route", nil, "OUTCOME=TARGET: route an outcome of this step to a step or __end__; repeat for more")
	}
	k.flags(f, s)
	return cmd, s
}
