// Package records owns the rules the authored records, artifacts and
// deployments, are saved by, below the API: a record's id; for an
// artifact, that the outcomes it declares cover every way its plan ends,
// that its node refs name logical sources, its requirements observed from
// the live catalog (or decoded strictly when given), that a version is
// immutable (saving the same content again is idempotent), and which
// deployments use a version, directly or through a subgraph (so that one
// in use is not deleted); for a deployment, the strict decode of its
// document and its bindings; for a draft workspace, that a new one's id
// is not taken (else the one there answers) and the revision
// compare-and-set of its edits (Revise). It imports no api/ package: its
// refusals are the typed errors of errors.go, which the API maps to its
// codes.
package records

import (
	"cmp"
	"fmt"
	"sort"
	"strings"

	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/workflow"
)

// The kinds of an artifact, and the default kind of a requirement.
const (
	KindWorkflow = "workflow"
	KindWrapper  = "wrapper"
	KindNodeSpec = "node_spec"
)

// CapabilityName is the capability name of an artifact version,
// "workflow.<id>.v<version>".
func CapabilityName(id string, version int) string {
	return fmt.Sprintf("workflow.%s.v%d", id, version)
}

// CheckOutcomes requires every outcome the plan can finish with to be
// declared, and the declared ones to be unique and non-blank.
func CheckOutcomes(plan workflow.Plan, declared []string) error {
	set := map[string]bool{}
	for _, o := range declared {
		if strings.TrimSpace(o) == "" || set[o] {
			return malformed("outcomes must be unique and non-blank")
		}
		set[o] = true
	}
	if len(set) == 0 {
		return malformed("outcomes must not be empty")
	}
	for _, e := range plan.Edges {
		// A route to the end finishes the workflow with outcome ok.
		if e.To == workflow.End && !set[workflow.OutcomeOK] {
			return refused("step %q finishes the workflow with outcome %q, which outcomes does not declare", e.From, workflow.OutcomeOK)
		}
	}
	for _, n := range plan.Nodes {
		if n.Type == workflow.NodeEnd && !set[cmp.Or(n.Outcome, workflow.OutcomeOK)] {
			return refused("end step %q finishes with outcome %q, which outcomes does not declare", n.ID, n.Outcome)
		}
	}
	return nil
}

// RewriteToLogical renames node refs "<concrete>.<tool>" to
// "<logical>.<tool>" for bindings {logical: concrete}; the longest
// concrete match wins.
func RewriteToLogical(plan *workflow.Plan, bindings map[string]string) {
	logicals := make([]string, 0, len(bindings))
	for logical := range bindings {
		logicals = append(logicals, logical)
	}
	sort.Strings(logicals) // ties between logical names bound to one connection: the first name wins
	for i, n := range plan.Nodes {
		best := ""
		for _, logical := range logicals {
			concrete := bindings[logical]
			if strings.HasPrefix(n.Node, concrete+".") && len(concrete) > len(bindings[best]) {
				best = logical
			}
		}
		if best != "" {
			plan.Nodes[i].Node = best + strings.TrimPrefix(n.Node, bindings[best])
		}
	}
}

// LogicalSources lists, sorted and once each, the sources the
// requirements name, but the platform's.
func LogicalSources(reqs []store.RequiredCapability) []string {
	set := map[string]bool{}
	for _, r := range reqs {
		if r.Ref.Source != workflow.PlatformSource {
			set[r.Ref.Source] = true
		}
	}
	out := make([]string, 0, len(set))
	for s := range set {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

// SuggestedBindings binds each of logical to the connection of the same
// id when enabled says it is an enabled connection: {logical: concrete},
// never nil.
func SuggestedBindings(logical []string, enabled func(id string) bool) map[string]string {
	suggested := map[string]string{}
	for _, src := range logical {
		if enabled(src) {
			suggested[src] = src
		}
	}
	return suggested
}
