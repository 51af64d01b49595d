package workflow

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// Draft is the authoring document of a workflow: named steps and the routes
// between their outcomes. It compiles to a Plan.
type Draft struct {
	Name         string                       `json:"name"`
	InputSchema  Object                       `json:"input_schema"`
	StateSchema  Object                       `json:"state_schema"`
	OutputSchema Object                       `json:"output_schema"`
	Outcomes     []string                     `json:"outcomes"`
	Output       []InputBinding               `json:"output"`
	Start        string                       `json:"start"`
	Steps        map[string]DraftStep         `json:"steps"`
	Routes       map[string]map[string]string `json:"routes"`
}

// Draft step kinds: the key that names a step's kind.
const (
	KindUse       = "use"
	KindForeach   = "foreach"
	KindInterrupt = "interrupt"
	KindJoin      = "join"
	KindEnd       = "end"
	KindWhen      = "when"
	KindChoose    = "choose"
	KindMatch     = "match"
	KindSubgraph  = "subgraph"
)

// StepKinds lists every draft step kind.
var StepKinds = []string{KindUse, KindForeach, KindInterrupt, KindJoin, KindEnd, KindWhen, KindChoose, KindMatch, KindSubgraph}

// DraftStep is one step of a draft. Exactly one kind key is set: Use (with
// Input, Output, Desc, Retry and TimeoutSeconds beside it), or one of the
// other kinds' payloads.
type DraftStep struct {
	Use            string          `json:"use,omitempty"`
	Input          []InputBinding  `json:"input,omitempty"`
	Output         []OutputBinding `json:"output,omitempty"`
	Desc           *string         `json:"desc,omitempty"`
	Retry          *int            `json:"retry,omitempty"`
	TimeoutSeconds *int            `json:"timeout_seconds,omitempty"`

	Foreach   *ForeachStep   `json:"foreach,omitempty"`
	Interrupt *InterruptStep `json:"interrupt,omitempty"`
	Join      *JoinStep      `json:"join,omitempty"`
	End       *EndStep       `json:"end,omitempty"`
	When      *WhenStep      `json:"when,omitempty"`
	Choose    *ChooseStep    `json:"choose,omitempty"`
	Match     *MatchStep     `json:"match,omitempty"`
	Subgraph  *SubgraphStep  `json:"subgraph,omitempty"`
}

// Kind names the step's kind, "" when none is set.
func (s DraftStep) Kind() string {
	switch {
	case s.Use != "":
		return KindUse
	case s.Foreach != nil:
		return KindForeach
	case s.Interrupt != nil:
		return KindInterrupt
	case s.Join != nil:
		return KindJoin
	case s.End != nil:
		return KindEnd
	case s.When != nil:
		return KindWhen
	case s.Choose != nil:
		return KindChoose
	case s.Match != nil:
		return KindMatch
	case s.Subgraph != nil:
		return KindSubgraph
	}
	return ""
}

// ForeachStep runs the step its "loop" outcome routes to once per item of
// Over; see Node for the plan form.
type ForeachStep struct {
	Over        GraphPath         `json:"over"`
	As          string            `json:"as"`
	Mode        string            `json:"mode,omitempty"`
	ItemError   *ItemErrorPolicy  `json:"item_error,omitempty"`
	OnItemError *string           `json:"on_item_error,omitempty"` // deprecated shorthand of item_error
	Concurrent  *ConcurrentPolicy `json:"concurrent,omitempty"`
}

// InterruptStep pauses the run until it is resumed with a payload.
type InterruptStep struct {
	Kind          string          `json:"kind"`
	Request       []InputBinding  `json:"request,omitempty"`
	Resume        []OutputBinding `json:"resume,omitempty"`
	RequestSchema Object          `json:"request_schema,omitempty"`
	ResumeSchema  Object          `json:"resume_schema,omitempty"`
	Outcomes      []string        `json:"outcomes,omitempty"`
}

// JoinStep continues with outcome "done".
type JoinStep struct{}

// EndStep finishes the workflow with an outcome ("ok" when empty).
type EndStep struct {
	Outcome string `json:"outcome,omitempty"`
}

// WhenStep goes to Then when If holds, else to Otherwise (End by default).
type WhenStep struct {
	If        Condition `json:"if"`
	Then      string    `json:"then"`
	Otherwise string    `json:"otherwise,omitempty"`
}

// ChooseStep goes to the Then of the first clause that holds, else to
// Default (End by default).
type ChooseStep struct {
	Clauses []ChooseClause `json:"clauses"`
	Default string         `json:"default,omitempty"`
}

// ChooseClause is one ordered clause of a choose step.
type ChooseClause struct {
	If   Condition `json:"if"`
	Then string    `json:"then"`
}

// MatchStep goes to the Then of the first case whose Equals equals the
// value at Value, else to Default (End by default).
type MatchStep struct {
	Value   GraphPath   `json:"value"`
	Cases   []MatchCase `json:"cases"`
	Default string      `json:"default,omitempty"`
}

// MatchCase is one ordered case of a match step.
type MatchCase struct {
	Equals json.RawMessage `json:"equals"`
	Then   string          `json:"then"`
}

// SubgraphStep runs a child workflow and routes on its outcome.
type SubgraphStep struct {
	Workflow     WorkflowRef     `json:"workflow"`
	Desc         *string         `json:"desc,omitempty"`
	Input        []InputBinding  `json:"input,omitempty"`
	Output       []OutputBinding `json:"output,omitempty"`
	InputSchema  Object          `json:"input_schema,omitempty"`
	OutputSchema Object          `json:"output_schema,omitempty"`
	Outcomes     []string        `json:"outcomes,omitempty"`
}

// ParseDraft decodes a draft document. Every problem becomes a diagnostic
// where it stands: a step with an unknown key, two kinds or none is
// reported (draft_invalid) and left out of the draft; nothing is dropped
// silently. Legacy use-step maps (in, with, out) become bindings.
func ParseDraft(doc Object) (Draft, []Diagnostic) {
	data, err := json.Marshal(doc)
	if err != nil {
		return Draft{}, []Diagnostic{diag("draft_invalid", "", fmt.Sprintf("draft is not JSON: %v", err))}
	}
	var top struct {
		Draft
		Steps map[string]json.RawMessage `json:"steps"`
	}
	if err := strictDecode(data, &top); err != nil {
		return Draft{}, []Diagnostic{diag("draft_invalid", "", fmt.Sprintf("draft is not a valid document: %v", err))}
	}
	d := top.Draft
	d.Steps = make(map[string]DraftStep, len(top.Steps))
	var diags []Diagnostic
	for _, id := range SortedKeys(top.Steps) {
		step, err := parseStep(top.Steps[id])
		if err != nil {
			diags = append(diags, stepDiag("draft_invalid", "steps."+id, id, err.Error()))
			continue
		}
		d.Steps[id] = step
	}
	if len(d.Outcomes) == 0 {
		d.Outcomes = []string{OutcomeOK}
	}
	return d, diags
}

// useKeys are the keys a use step may have beside "use".
var useKeys = map[string]bool{"use": true, "input": true, "output": true, "desc": true, "retry": true, "timeout_seconds": true, "in": true, "with": true, "out": true}

// parseStep decodes one step, telling exactly which key is wrong.
func parseStep(raw json.RawMessage) (DraftStep, error) {
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(raw, &keys); err != nil {
		return DraftStep{}, fmt.Errorf("a step is an object with one kind key (%s)", strings.Join(StepKinds, ", "))
	}
	var kinds []string
	for _, k := range StepKinds {
		if _, ok := keys[k]; ok {
			kinds = append(kinds, k)
		}
	}
	if len(kinds) != 1 {
		return DraftStep{}, fmt.Errorf("a step has exactly one kind key (%s); this one has %d", strings.Join(StepKinds, ", "), len(kinds))
	}
	kind := kinds[0]
	for _, k := range SortedKeys(keys) {
		if k != kind && !(kind == KindUse && useKeys[k]) {
			return DraftStep{}, fmt.Errorf("a %s step has no key %q", kind, k)
		}
	}
	var s DraftStep
	if kind == KindUse {
		if err := parseUse(keys, &s); err != nil {
			return DraftStep{}, err
		}
		return s, nil
	}
	payload := keys[kind]
	if string(payload) == "null" && (kind == KindJoin || kind == KindEnd) {
		payload = []byte("{}")
	}
	var target any
	switch kind {
	case KindForeach:
		s.Foreach = &ForeachStep{}
		target = s.Foreach
	case KindInterrupt:
		s.Interrupt = &InterruptStep{}
		target = s.Interrupt
	case KindJoin:
		s.Join = &JoinStep{}
		target = s.Join
	case KindEnd:
		s.End = &EndStep{}
		target = s.End
	case KindWhen:
		s.When = &WhenStep{}
		target = s.When
	case KindChoose:
		s.Choose = &ChooseStep{}
		target = s.Choose
	case KindMatch:
		s.Match = &MatchStep{}
		target = s.Match
	case KindSubgraph:
		s.Subgraph = &SubgraphStep{}
		target = s.Subgraph
	}
	if err := strictDecode(payload, target); err != nil {
		return DraftStep{}, fmt.Errorf("%s: %v", kind, err)
	}
	if f := s.Foreach; f != nil && f.OnItemError != nil {
		if f.ItemError == nil {
			f.ItemError = &ItemErrorPolicy{Action: *f.OnItemError}
		}
		f.OnItemError = nil
	}
	return s, nil
}

// parseUse decodes a use step, turning the legacy maps into bindings:
// "with" maps a node-local target to a literal value, "in" a graph path to
// a node-local target, and "out" a node-local source to a state path. A
// step uses either the legacy maps or canonical bindings, not both.
func parseUse(keys map[string]json.RawMessage, s *DraftStep) error {
	canonical := map[string]json.RawMessage{}
	for k, v := range keys {
		if k != "in" && k != "with" && k != "out" {
			canonical[k] = v
		}
	}
	data, err := json.Marshal(canonical)
	if err != nil {
		return err
	}
	if err := strictDecode(data, s); err != nil {
		return fmt.Errorf("use: %v", err)
	}
	if s.Use == "" {
		return fmt.Errorf("use: names no capability")
	}
	var in, out map[string]string
	var with map[string]json.RawMessage
	for key, dst := range map[string]any{"in": &in, "with": &with, "out": &out} {
		if raw, ok := keys[key]; ok {
			if err := json.Unmarshal(raw, dst); err != nil {
				return fmt.Errorf("legacy %q map: %v", key, err)
			}
		}
	}
	if (len(in)+len(with) > 0 && s.Input != nil) || (len(out) > 0 && s.Output != nil) {
		return fmt.Errorf("use: a step has either legacy in/with/out maps or input/output bindings, not both")
	}
	for _, target := range SortedKeys(with) {
		s.Input = append(s.Input, InputBinding{Target: LocalOf(target), Value: with[target]})
	}
	for _, source := range SortedKeys(in) {
		p, err := parsePath(source, graphPath)
		if err != nil {
			return fmt.Errorf("legacy \"in\" map, %s: %v", source, err)
		}
		gp := GraphPath{fieldOf(p, graphPath)}
		s.Input = append(s.Input, InputBinding{Target: LocalOf(in[source]), Path: &gp})
	}
	for _, source := range SortedKeys(out) {
		p, err := parsePath(out[source], statePath)
		if err != nil {
			return fmt.Errorf("legacy \"out\" map, %s: %v", source, err)
		}
		s.Output = append(s.Output, OutputBinding{Source: LocalOf(source), Target: StatePath{fieldOf(p, statePath)}})
	}
	return nil
}

// SortedKeys returns m's keys in order, as a non-nil list (JSON [] when
// m is empty).
func SortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
