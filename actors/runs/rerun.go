package runs

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mcpflow/mcpflow/actors/run"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/workflow"
)

// RerunRequest asks for a new run of the deployment of run RunID, on the
// same input.
type RerunRequest struct {
	RunID string
	// ArtifactVersion is the version of the run's artifact the new run
	// runs: 0 for the run's own, else that one or a newer one.
	ArtifactVersion int
	// StartedBy and Wait are as StartRequest's.
	StartedBy string
	Wait      time.Duration
}

// Rerun starts a new run of the deployment run req.RunID ran, as it
// stands now, on the parent's input and artifact version (or the newer
// version asked for), and answers as Start does. The new run names its
// parent.
func (m *Manager) Rerun(ctx context.Context, req RerunRequest) (StartResult, error) {
	parent, err := m.parent(ctx, req.RunID)
	if err != nil {
		return StartResult{}, err
	}
	version := cmp.Or(req.ArtifactVersion, parent.ArtifactVersion)
	if version < parent.ArtifactVersion {
		return StartResult{}, invalidParams("invalid params: params.artifact_version: version %d is older than version %d of artifact %q, which run %q ran: "+
			"a rerun runs the same version or a newer one", version, parent.ArtifactVersion, parent.ArtifactID, parent.ID)
	}
	return m.startAfter(ctx, parent, version, req.StartedBy, req.Wait, nil)
}

// ForkRequest asks for a new run that replays run RunID up to step
// FromNode and executes from there.
type ForkRequest struct {
	RunID    string
	FromNode string
	// StartedBy and Wait are as StartRequest's.
	StartedBy string
	Wait      time.Duration
}

// Fork starts a new run of the deployment run req.RunID ran, on the
// parent's input and artifact version, that replays the parent's
// recorded results of every step it executed before it first reached
// step req.FromNode, without calling anything (workflow.Replay), and
// executes from req.FromNode on; it answers as Start does. The new run
// names its parent and the step it forked from. A step the parent never
// reached on its main line (workflow.ForkPoints), a foreach body's
// included, is refused with the steps that are valid.
func (m *Manager) Fork(ctx context.Context, req ForkRequest) (StartResult, error) {
	parent, err := m.parent(ctx, req.RunID)
	if err != nil {
		return StartResult{}, err
	}
	recorded, err := m.cfg.Store.ReadTrace(ctx, parent.ID, 0, 0)
	if err != nil {
		return StartResult{}, storeErr(err, fmt.Sprintf("trace of workflow run %q", parent.ID))
	}
	points := workflow.ForkPoints(recorded, parent.Checkpoint)
	if !slices.Contains(points, req.FromNode) {
		valid := "[" + strings.Join(points, ", ") + "]"
		if workflow.InForeachBody(recorded, req.FromNode) {
			return StartResult{}, invalidParams("invalid params: params.from_node: step %q is in a foreach body of run %q; "+
				"a fork starts from a step of the workflow's main line that the run reached: one of %s", req.FromNode, parent.ID, valid)
		}
		return StartResult{}, invalidParams("invalid params: params.from_node: run %q never reached step %q on its workflow's main line; "+
			"a fork starts from a step it reached: one of %s", parent.ID, req.FromNode, valid)
	}
	fork := func(rec *store.Run, setup *Setup) (*run.Replay, error) {
		exec, replayed, err := workflow.Replay(setup.program, rec.Input, setup.options, recorded, req.FromNode)
		if err != nil {
			return nil, invalid("fork of run %q: %v", parent.ID, err)
		}
		snap := exec.Snapshot()
		rec.Checkpoint, rec.ForkedFromNode = &snap, req.FromNode
		return &run.Replay{Trace: replayed}, nil
	}
	return m.startAfter(ctx, parent, parent.ArtifactVersion, req.StartedBy, req.Wait, fork)
}

// parent reads the run a rerun or a fork starts after.
func (m *Manager) parent(ctx context.Context, id string) (store.Run, error) {
	r, err := m.cfg.Store.GetRun(ctx, id)
	if err != nil {
		return store.Run{}, storeErr(err, fmt.Sprintf("workflow run %q", id))
	}
	if r.DeploymentID == "" {
		return store.Run{}, invalid("workflow run %q ran no deployment (a capability called directly): it cannot be run again", id)
	}
	return r, nil
}

// startAfter starts a new run of parent's deployment as it stands now,
// on artifact version version of parent's artifact and parent's input,
// that names parent; replay, when set, changes the new record (a fork
// replays its parent into it) and says what the run replayed.
func (m *Manager) startAfter(ctx context.Context, parent store.Run, version int, startedBy string, wait time.Duration,
	replay func(*store.Run, *Setup) (*run.Replay, error)) (StartResult, error) {
	pr, err := m.prepareAt(ctx, parent, version)
	if err != nil {
		return StartResult{}, err
	}
	rec, unrunnable, err := m.newRunOf(pr, parent.Input)
	if err != nil {
		return StartResult{}, err
	}
	if unrunnable {
		return StartResult{Unrunnable: pr}, nil
	}
	rec.StartedBy, rec.ParentRunID = startedBy, parent.ID
	var replayed *run.Replay
	if replay != nil {
		if replayed, err = replay(&rec, pr.setup); err != nil {
			return StartResult{}, err
		}
	}
	r, err := m.asMember(ctx, rec.ID, func() (store.Run, error) { return m.execute(ctx, rec, pr.setup, nil, replayed, wait) })
	return StartResult{Run: r}, err
}

// prepareAt is parent's deployment prepared to run version version of
// parent's artifact: as Prepare has it when the deployment pins that
// version, else resolved now with that version pinned. A deployment that
// now pins another artifact is refused.
func (m *Manager) prepareAt(ctx context.Context, parent store.Run, version int) (*Prepared, error) {
	d, err := m.cfg.Store.GetDeployment(ctx, parent.DeploymentID)
	if err != nil {
		return nil, storeErr(err, fmt.Sprintf("deployment %q of workflow run %q", parent.DeploymentID, parent.ID))
	}
	if d.ArtifactID != parent.ArtifactID {
		return nil, invalid("deployment %q now runs artifact %q, not %q, which run %q ran: a new run of a run runs the same artifact",
			d.ID, d.ArtifactID, parent.ArtifactID, parent.ID)
	}
	if version == d.ArtifactVersion {
		return m.Prepare(ctx, d.ID)
	}
	a, err := m.Artifact(ctx, d.ArtifactID, version)
	if err != nil {
		return nil, storeErr(err, fmt.Sprintf("artifact %q version %d", d.ArtifactID, version))
	}
	d.ArtifactVersion = version
	return m.resolve(ctx, d, a)
}
