// Package runs owns the running of workflow runs on a node: the run
// Manager spawns the actor of each run's incarnation (its start, a resume,
// a recovery after a stop), cancels a run here or, through the node's run
// desk, on the node that runs it, recovers the runs a stop cut off, and
// drains the live ones at shutdown. It keeps the deployments prepared to
// start runs, with the artifact versions and programs they were resolved
// from, and calls a node spec directly for capabilities.call
// (CallNodeSpec: the session call a run's step makes, owned by no run).
// It checks a deployment's dependencies against the live catalogs
// (Dependencies) and, asked to, probes the upstreams they bind
// (LiveCheck). It knows nothing of the API: a handler decodes its params, calls
// the Manager with plain values (store records, workflow objects) and
// projects what it returns; its failures are the typed errors of
// errors.go, which the API maps to its codes.
package runs

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/anthdm/hollywood/actor"

	"github.com/mcpflow/mcpflow/actors/audit"
	"github.com/mcpflow/mcpflow/actors/catalog"
	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/metrics"
	"github.com/mcpflow/mcpflow/actors/reply"
	"github.com/mcpflow/mcpflow/actors/run"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/supervisor"
)

// Config is what a Manager runs runs with.
type Config struct {
	Engine     *actor.Engine
	Supervisor *supervisor.Handle
	// Replies delivers the answers the Manager waits for (run starts and
	// ends, cancels).
	Replies *reply.Router
	// Store is where runs commit, and where deployments and artifacts are
	// read from. Live event subscribers see the commits only when it is
	// their store's decorator.
	Store store.Store
	// Audit appends the admin events of direct calls and reads (their
	// start and end) off the caller's path; nil appends them on it.
	Audit *audit.Appender
	// Catalogs is the live view of every connection's latest snapshot,
	// Connections that of the effective MCP sources.
	Catalogs    *catalog.Registry
	Connections *config.View
	// CallTimeout bounds a tool call whose step declares no timeout.
	CallTimeout time.Duration
	// MaxSteps is each run's step budget (workflow.DefaultMaxSteps when
	// 0), and RunDeadline how long a run may take overall (none when 0).
	MaxSteps    int
	RunDeadline time.Duration
	// StepCeiling is the most steps any run takes
	// (server.limits.max_steps; config.DefaultMaxSteps when 0): a
	// deployment saved with a larger limits.max_steps before the ceiling
	// was is held to it, and Dependencies warns of it.
	StepCeiling int
	// MaxOutputBytes bounds the output of a run's built-in steps
	// (server.limits.max_result_bytes; workflow.DefaultMaxOutputBytes
	// when 0).
	MaxOutputBytes int64
	// Metrics counts runs and times their steps; nil records nothing.
	Metrics *metrics.Metrics
	// Live bounds what runs store of their calls' progress and logs
	// (server.limits.step_progress_interval_ms and max_step_logs); the
	// zero value keeps run's defaults.
	Live run.LiveLimits
	// Nodes are the other nodes of the cluster, whose desks a cancel asks
	// about a run running elsewhere; nil on a node alone.
	Nodes Nodes
	// Member is the node's cluster membership: a start or a resume that
	// the store refused because it had lapsed (store.ErrNotMember) waits
	// for the node to rejoin, up to MemberWait (defaultMemberWait when
	// 0), and is tried once more. nil on a node alone.
	Member     Member
	MemberWait time.Duration
	// IdempotencyWindow is how long the idempotency key of a start holds
	// its run (StartRequest.IdempotencyKey;
	// config.DefaultIdempotencyWindow when 0).
	IdempotencyWindow time.Duration
	// Now is the clock; nil is time.Now.
	Now func() time.Time
}

// Manager runs the runs of one node. Its methods are safe for concurrent
// use.
type Manager struct {
	cfg Config
	// resuming holds the ids of runs being resumed, one resume at a time.
	resuming sync.Map
	// live maps the id of each run whose actor is running to it.
	live         sync.Map
	incarnations atomic.Uint64
	// life admits run actors until the manager stops (see Drain).
	life lifecycle
	// prepared keeps deployments ready to start runs, and artifacts the
	// artifact versions they were read from.
	prepared  preparedDeployments
	artifacts artifactCache
}

// New is a Manager of cfg; it spawns nothing until a run starts.
func New(cfg Config) *Manager { return &Manager{cfg: cfg} }

func (m *Manager) now() time.Time {
	if m.cfg.Now != nil {
		return m.cfg.Now()
	}
	return time.Now()
}

// isConnection reports whether id names an effective connection.
func (m *Manager) isConnection(id string) bool {
	_, ok := m.cfg.Connections.Get(id)
	return ok
}

// releaseScope closes the sessions of scope (a deployment's, a run's),
// without waiting.
func (m *Manager) releaseScope(scope string) {
	if m.cfg.Supervisor != nil {
		m.cfg.Supervisor.ReleaseScope(scope)
	}
}
