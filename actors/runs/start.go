package runs

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"sync"
	"sync/atomic"
	"time"

	"github.com/anthdm/hollywood/actor"

	"github.com/mcpflow/mcpflow/actors/guard"
	"github.com/mcpflow/mcpflow/actors/reply"
	"github.com/mcpflow/mcpflow/actors/run"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/workflow"
)

// storeTimeout bounds each store write a run makes.
const storeTimeout = 10 * time.Second

// StartRequest asks for a run of a deployment.
type StartRequest struct {
	DeploymentID string
	Input        workflow.Object
	// StartedBy names the caller the run is recorded as started by.
	StartedBy string
	// ClientSampling says that the caller is an MCP client that declared
	// sampling (see store.Run.ClientSampling).
	ClientSampling bool
	// Wait is how long Start waits, once the run is committed, for it to
	// stop (finish or pause); 0 answers at once with it running.
	Wait time.Duration
	// IdempotencyKey, when set, makes the start idempotent: while a run of
	// the deployment started with the key holds it (Config.IdempotencyWindow
	// from its creation, across nodes and restarts), Start answers with
	// that run, as committed, Deduplicated, and starts none. The key held
	// by a run of another deployment, or started with another input, is
	// refused (InvalidParams).
	IdempotencyKey string
}

// StartResult is a started run, or the deployment that cannot run.
type StartResult struct {
	// Run is the run as it stands when Start answers.
	Run store.Run
	// Unrunnable, when set, is the deployment prepared with an error
	// diagnostic: no run started.
	Unrunnable *Prepared
	// Deduplicated says that Run is the run an earlier start with the
	// request's idempotency key started: this one started none.
	Deduplicated bool
}

// Start starts a run of deployment req.DeploymentID and answers once its
// first record is committed and, up to req.Wait, it has stopped; a run
// still executing is answered as it stands and goes on.
func (m *Manager) Start(ctx context.Context, req StartRequest) (StartResult, error) {
	input := orEmpty(req.Input)
	var once *idempotent // the start's key, looked up first (idempotency.go)
	if req.IdempotencyKey != "" {
		var err error
		if once, err = newIdempotent(req, input); err != nil {
			return StartResult{}, err
		}
		if r, found, err := m.firstRun(ctx, once); err != nil || found {
			return StartResult{Run: r, Deduplicated: found}, err
		}
	}
	pr, err := m.Prepare(ctx, req.DeploymentID)
	if err != nil {
		return StartResult{}, err
	}
	rec, unrunnable, err := m.newRunOf(pr, input)
	if err != nil {
		return StartResult{}, err
	}
	if unrunnable {
		return StartResult{Unrunnable: pr}, nil
	}
	rec.StartedBy, rec.ClientSampling = req.StartedBy, req.ClientSampling
	if once != nil {
		rec.Idempotency = m.claim(once, rec)
	}
	r, err := m.asMember(ctx, rec.ID, func() (store.Run, error) { return m.execute(ctx, rec, pr.setup, nil, nil, req.Wait) })
	if once != nil && errors.Is(err, store.ErrKeyTaken) {
		return m.lostClaim(ctx, once)
	}
	return StartResult{Run: r}, err
}

// newRunOf checks that prepared deployment pr can run on input and
// builds the record of a run of it; unrunnable says that pr has an error
// diagnostic, and nothing is built.
func (m *Manager) newRunOf(pr *Prepared, input workflow.Object) (rec store.Run, unrunnable bool, err error) {
	if _, failed := FirstError(pr.Diagnostics); failed {
		return store.Run{}, true, nil
	}
	input = orEmpty(input)
	if err := cmp.Or(pr.inputErr, pr.input.Validate(input)); err != nil {
		return store.Run{}, false, invalidParams("invalid params: workflow input does not match the input schema: %v", err)
	}
	if pr.setupErr != nil {
		return store.Run{}, false, pr.setupErr
	}
	rec, err = m.newRun(pr.Deployment, pr.Artifact, input, pr.stored)
	return rec, false, err
}

// RunRequest asks for a run under a setup the caller resolved (Setup):
// a saved wrapper called directly, with or without a deployment.
type RunRequest struct {
	Deployment store.Deployment
	Artifact   store.Artifact
	Setup      *Setup
	Input      workflow.Object
	// Diagnostics are the deployment's, as the run record keeps them.
	Diagnostics []Diagnostic
	// Wait is as StartRequest's.
	Wait time.Duration
}

// Run starts a run as Start does, under req.Setup.
func (m *Manager) Run(ctx context.Context, req RunRequest) (store.Run, error) {
	stored, err := storedDiags(req.Diagnostics)
	if err != nil {
		return store.Run{}, err
	}
	rec, err := m.newRun(req.Deployment, req.Artifact, orEmpty(req.Input), stored)
	if err != nil {
		return store.Run{}, err
	}
	return m.asMember(ctx, rec.ID, func() (store.Run, error) { return m.execute(ctx, rec, req.Setup, nil, nil, req.Wait) })
}

// execute spawns the run actor of rec and answers once its first record
// is committed and, up to wait, it has stopped (finished or interrupted);
// a run still executing is answered as it stands and goes on.
//
// Nothing is acknowledged before the run's record is committed: the run
// answers Started once its first commit is done (or failed) and Stopped
// after it, both through the manager's router, in that order. A waiting
// start therefore waits for Stopped first: once that is in, so is Started,
// which is read without waiting, and the caller wakes once per run rather
// than once per answer.
func (m *Manager) execute(ctx context.Context, rec store.Run, setup *Setup, resume *run.Resume, replay *run.Replay, wait time.Duration) (store.Run, error) {
	started, done := reply.Expect[run.Started](m.cfg.Replies), reply.Expect[run.Stopped](m.cfg.Replies)
	defer started.Close()
	defer done.Close() // a run that outlives the wait answers nobody
	if err := m.spawnRun(rec, setup, resume, replay, nil, started.To(), done.To()); err != nil {
		return store.Run{}, err
	}
	if wait <= 0 {
		return m.acknowledged(ctx, rec, started)
	}
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	// A shutdown ends the wait too: the answer is the run as it stands.
	defer context.AfterFunc(m.life.stopping(), cancel)()
	final, waited := done.Wait(wctx)
	current, err := m.acknowledged(ctx, rec, started)
	switch {
	case err != nil:
		return store.Run{}, err
	case waited == nil:
		return final.Run, nil
	case ctx.Err() != nil:
		return store.Run{}, fmt.Errorf("run %s: %w", rec.ID, ctx.Err())
	}
	if stored, err := m.cfg.Store.GetRun(ctx, rec.ID); err == nil {
		current = stored
	}
	return current, nil
}

// acknowledged waits for the run's Started answer: the run as its first
// commit left it, or why that commit (or the resume) was refused.
func (m *Manager) acknowledged(ctx context.Context, rec store.Run, started *reply.Expected[run.Started]) (store.Run, error) {
	ack, err := started.Wait(ctx)
	if err != nil {
		return store.Run{}, fmt.Errorf("run %s: %w", rec.ID, err)
	}
	if err := ack.Error.Err(); errors.Is(err, workflow.ErrResume) {
		return store.Run{}, invalidParams("invalid params: %v", err)
	} else if errors.Is(err, store.ErrFull) {
		return store.Run{}, storeErr(err, fmt.Sprintf("workflow run %s not started", rec.ID))
	} else if errors.Is(err, store.ErrNotMember) || errors.Is(err, store.ErrKeyTaken) {
		return store.Run{}, fmt.Errorf("run %s: %w", rec.ID, err) // see asMember, Start
	} else if err != nil {
		return store.Run{}, failure(Upstream, "%v", err)
	}
	return ack.Run, nil
}

// spawnRun starts the actor of one incarnation of a run (its start, a
// fork's start with what it replayed, a resume, a recovery). Each incarnation is its own actor, so that a new
// one never waits for the last one's name; live maps the run id to the
// incarnation running now. The run answers started and done (either may
// be the zero Address). Once the manager stops accepting runs it spawns
// nothing and refuses with ErrShuttingDown.
func (m *Manager) spawnRun(rec store.Run, setup *Setup, resume *run.Resume, replay *run.Replay, lost map[string]string, started, done reply.Address) error {
	if !m.life.admit() {
		return ErrShuttingDown
	}
	engine := m.cfg.Engine
	incarnation := &liveRun{}
	m.live.Store(rec.ID, incarnation)
	var stopped sync.Once
	release := func() {
		// Counted out last: once every run is, none writes the store.
		defer stopped.Do(m.life.runs.Done)
		m.live.CompareAndDelete(rec.ID, incarnation)
	}
	pid := engine.Spawn(guard.Producer(run.New(run.Spec{
		Record: rec, Program: setup.program, Targets: setup.targets, Sources: setup.sources, Scopes: setup.scopes(rec), Strict: setup.strict, Options: setup.options,
		Resume: resume, Replay: replay, Deadline: setup.deadline(m.now()),
		Supervisor: m.cfg.Supervisor.PID(), Lines: m.cfg.Supervisor.Lines(), Store: m.cfg.Store,
		CallTimeout: m.cfg.CallTimeout, StoreTimeout: storeTimeout, Started: started, Done: done, Release: release, Metrics: m.cfg.Metrics,
		Live: m.cfg.Live, Lost: maps.Clone(lost), // the run's own: it deletes each call it answers
	}), func(p guard.Panic) { engine.Send(p.PID, p) }), runKind,
		actor.WithID(fmt.Sprintf("%s.%d", rec.ID, m.incarnations.Add(1))), actor.WithInboxSize(runInbox))
	incarnation.pid.Store(pid)
	return nil
}

// runKind is the actor kind of run actors; their id is the run id and
// an incarnation number.
const runKind = "run"

// runInbox is the initial size of a run actor's inbox: a run has a few
// messages waiting at a time (a commit done, its calls' results, a
// cancel), and hollywood's inbox grows when full. The default (1,024
// slots, 24 KiB) was most of what a run start allocated.
const runInbox = 16

// liveRun is the actor of a run's current incarnation; its pid is set
// once spawned.
type liveRun struct{ pid atomic.Pointer[actor.PID] }

// newRun builds the record of a run about to start; diags are its
// deployment's dependency diagnostics as the record keeps them.
func (m *Manager) newRun(d store.Deployment, a store.Artifact, input workflow.Object, diags []workflow.Object) (store.Run, error) {
	id, err := newRunID()
	if err != nil {
		return store.Run{}, err
	}
	now := m.now().UTC()
	return store.Run{
		ID: id, DeploymentID: d.ID, ArtifactID: a.ID, ArtifactVersion: a.Version,
		Status: store.RunRunning, ResumeReadiness: "not_applicable", Input: input, Deployment: d,
		Diagnostics: diags, CreatedAt: now, UpdatedAt: now,
	}, nil
}

func newRunID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("run id: %w", err)
	}
	return "run_" + hex.EncodeToString(b[:]), nil
}

// orEmpty is o, or an empty object for nil.
func orEmpty(o workflow.Object) workflow.Object {
	if o == nil {
		return workflow.Object{}
	}
	return o
}

// viaJSON sets out to in as its JSON decodes into out: a deep copy, or a
// conversion between JSON-shaped values.
func viaJSON(in, out any) error {
	data, err := json.Marshal(in)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, out)
}
