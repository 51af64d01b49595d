package records

import (
	"context"
	"sort"

	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/workflow"
)

// DeploymentsUsing lists, sorted, the deployments that pin artifact
// id@version: directly, or as a subgraph anywhere under the artifact they
// pin (a run of theirs would load it).
func DeploymentsUsing(ctx context.Context, st store.Store, id string, version int) ([]string, error) {
	ds, err := st.ListDeployments(ctx)
	if err != nil {
		return nil, &StoreError{What: "deployments", Err: err}
	}
	target := workflow.WorkflowRef{ArtifactID: &id, Version: &version}.Key()
	tree := subgraphIndex{st: st, uses: map[string]bool{}}
	out := []string{}
	for _, d := range ds {
		if d.ArtifactID == id && d.ArtifactVersion == version || tree.reaches(ctx, d.ArtifactID, d.ArtifactVersion, target) {
			out = append(out, d.ID)
		}
	}
	sort.Strings(out)
	return out, nil
}

// subgraphIndex answers whether an artifact's subgraph tree reaches a
// target, loading each artifact once. A child that cannot be loaded
// reaches nothing.
type subgraphIndex struct {
	st store.Store
	// uses maps "id@version" to whether its tree reaches the target;
	// an entry under evaluation is false, which also ends a cycle.
	uses map[string]bool
}

func (x subgraphIndex) reaches(ctx context.Context, id string, version int, target string) bool {
	key := workflow.WorkflowRef{ArtifactID: &id, Version: &version}.Key()
	if found, done := x.uses[key]; done {
		return found
	}
	x.uses[key] = false
	a, err := x.st.GetArtifact(ctx, id, version)
	if err != nil {
		return false
	}
	for _, ref := range a.Plan.Subgraphs() {
		if ref.ArtifactID == nil || ref.Version == nil {
			continue
		}
		if ref.Key() == target || x.reaches(ctx, *ref.ArtifactID, *ref.Version, target) {
			x.uses[key] = true
			return true
		}
	}
	return false
}
