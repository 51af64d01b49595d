// Package store owns durable records: draft workspaces, artifacts,
// deployments, runs with their checkpoints and traces, catalog snapshots,
// auth records, the source registry, signed webhooks, schedules and the admin event log. It defines one
// interface for all of them and its implementations, and the decorator
// (Observed) through which writers tell an Observer of what they commit to
// the event logs, and the stored form of a run's records that the durable
// implementations share (Values.Pack, EncodeRunEvent: each large value
// once per run); it knows nothing about actors, MCP sessions or JSON-RPC.
//
// The interface promises nothing that only one database gives: keys are
// compared as byte strings, numbers in JSON objects come back as float64,
// and every method is one transaction, so a second implementation (on
// PostgreSQL, say) can keep the same contract.
package store

import (
	"context"
	"errors"
	"regexp"
	"time"

	"github.com/mcpflow/mcpflow/actors/catalog"
	"github.com/mcpflow/mcpflow/actors/workflow"
)

// Sentinel errors. Implementations wrap them with context; callers test
// with errors.Is.
var (
	// ErrNotFound means the record does not exist.
	ErrNotFound = errors.New("not found")
	// ErrExists means a record with that key already exists.
	ErrExists = errors.New("already exists")
	// ErrConflict means a compare-and-set lost (stale revision) or an
	// immutable record would change.
	ErrConflict = errors.New("conflict")
	// ErrInvalid means a record cannot be stored as it is, such as an auth
	// record whose id is not a valid auth id.
	ErrInvalid = errors.New("invalid record")
	// ErrFenced means a run's commit was refused because the run is
	// running on another node: a node of a cluster whose runs a surviving
	// node claimed (RunClaimer) while it was paused or cut off. The run is
	// the survivor's now; the fenced node must stop executing it and must
	// not retry.
	ErrFenced = errors.New("the run is running on another node")
	// ErrNotMember means a store of a cluster node refused to give its
	// node new work (create a run, or take an interrupted run to run)
	// because the node's cluster membership has lapsed: it does not hold
	// its membership lease, which another node may have taken to claim
	// its runs. Nothing was written. It may succeed once the node has
	// rejoined the cluster.
	ErrNotMember = errors.New("this node's cluster membership has lapsed")
	// ErrFull means the store could not write for lack of disk space (or
	// it was opened read-only because its disk was full at start):
	// nothing of the write was committed, and reads still work. A write
	// may succeed again once space is freed.
	ErrFull = errors.New("the store's disk is full")
)

// Store is every record kind mcpflow keeps. Each method is atomic.
type Store interface {
	Workspaces
	Artifacts
	Deployments
	Runs
	IdempotencyKeys
	RunEventLog
	RunRetention
	Catalogs
	AuthRecords
	SourceRegistry
	Webhooks
	Schedules
	Events
	// Close releases the store.
	Close() error
}

// Workspace is a revisioned draft workspace. Draft is kept as authored (it
// may be invalid); Status and Diagnostics describe it.
type Workspace struct {
	ID          string                `json:"id"`
	Revision    int                   `json:"revision"`
	Title       *string               `json:"title"`
	Draft       workflow.Object       `json:"draft"`
	Status      string                `json:"status"` // valid | invalid
	Diagnostics []workflow.Diagnostic `json:"diagnostics"`
	CreatedAtMs int64                 `json:"created_at_epoch_ms"`
	UpdatedAtMs int64                 `json:"updated_at_epoch_ms"`
}

// Workspaces keeps draft workspaces with optimistic concurrency.
type Workspaces interface {
	// CreateWorkspace stores a new workspace; ErrExists if the id is taken.
	CreateWorkspace(ctx context.Context, w Workspace) error
	// GetWorkspace returns a workspace or ErrNotFound.
	GetWorkspace(ctx context.Context, id string) (Workspace, error)
	// UpdateWorkspace replaces the workspace if its stored revision is
	// expectedRevision (compare-and-set); otherwise ErrConflict.
	UpdateWorkspace(ctx context.Context, w Workspace, expectedRevision int) error
	// ListWorkspaces returns all workspaces sorted by id.
	ListWorkspaces(ctx context.Context) ([]Workspace, error)
	// DeleteWorkspace removes a workspace; false if it did not exist.
	DeleteWorkspace(ctx context.Context, id string) (bool, error)
}

// CapabilityRef names a capability by logical source and local key.
type CapabilityRef struct {
	Source        string `json:"source"`
	CapabilityKey string `json:"capability_key"`
}

// RequiredCapability is one dependency an artifact was saved with.
type RequiredCapability struct {
	Ref                    CapabilityRef   `json:"ref"`
	Kind                   string          `json:"kind"`
	InputSchemaHash        *string         `json:"input_schema_hash"`
	InputSchemaSnapshot    workflow.Object `json:"input_schema_snapshot"`
	OutputSchemaHash       *string         `json:"output_schema_hash"`
	OutputSchemaSnapshot   workflow.Object `json:"output_schema_snapshot"`
	ObservedConcreteSource *string         `json:"observed_concrete_source"`
	ObservedAtEpochMs      *int64          `json:"observed_at_epoch_ms"`
}

// Artifact is an immutable, versioned workflow. Its JSON form is the
// manifest's WorkflowArtifactPayload.
type Artifact struct {
	ID                        string               `json:"id"`
	Version                   int                  `json:"version"`
	Title                     string               `json:"title"`
	Kind                      string               `json:"kind"` // workflow | wrapper
	Description               *string              `json:"description"`
	InputSchema               workflow.Object      `json:"input_schema"`
	OutputSchema              workflow.Object      `json:"output_schema"`
	Outcomes                  []string             `json:"outcomes"`
	Plan                      workflow.Plan        `json:"plan"`
	RequiredCapabilities      []RequiredCapability `json:"required_capabilities"`
	WorkflowDependencies      map[string]int       `json:"workflow_dependencies"`
	CreatedFromCatalogVersion *string              `json:"created_from_catalog_version"`
}

// ArtifactQuery filters and pages artifacts.
type ArtifactQuery struct {
	Query  string // case-folded substring of id, title, description, kind
	Kind   string // "" for any
	Offset int
	Limit  int // <= 0 for no limit
}

// Artifacts keeps immutable artifacts.
type Artifacts interface {
	// SaveArtifact stores an artifact. Saving an existing id+version with
	// identical content is idempotent (created=false); with different
	// content it is ErrConflict.
	SaveArtifact(ctx context.Context, a Artifact) (created bool, err error)
	// GetArtifact returns one version or ErrNotFound.
	GetArtifact(ctx context.Context, id string, version int) (Artifact, error)
	// ListArtifacts returns one page sorted by (id, version) and the total
	// count after filtering.
	ListArtifacts(ctx context.Context, q ArtifactQuery) ([]Artifact, int, error)
	// DeleteArtifact removes one version; false if it did not exist.
	DeleteArtifact(ctx context.Context, id string, version int) (bool, error)
}

// Binding maps a logical source of an artifact to a concrete connection.
type Binding struct {
	LogicalSource  string `json:"logical_source"`
	ConcreteSource string `json:"concrete_source"`
	// Session is which upstream session the deployment's runs use on the
	// connection (an mcpflow extension): SessionShared ("" too), the one
	// every run of every deployment shares; SessionDeployment, one per
	// deployment; SessionRun, one per run, closed when the run ends.
	Session string `json:"session,omitempty"`
	// Task is when the connection's tools are called as MCP tasks (an
	// mcpflow extension): TaskAuto ("" too), a tool whose
	// execution.taskSupport is "required"; TaskAlways, also one whose
	// taskSupport is "optional".
	Task string `json:"task,omitempty"`
	// OnSessionReplaced is what a run does when the session its calls
	// went to on the connection is replaced (an mcpflow extension):
	// OnReplacedContinue ("" too) or OnReplacedFail.
	OnSessionReplaced string `json:"on_session_replaced,omitempty"`
}

// The task options of a binding.
const (
	TaskAuto   = "auto"
	TaskAlways = "always"
)

// Session scopes a binding may ask for.
const (
	SessionShared     = "shared"
	SessionDeployment = "deployment"
	SessionRun        = "run"
	// SessionClient is a pass-through run's only (gateway mode, an
	// exposed connection's per_client scope): the session of the
	// downstream MCP client session the call came from (Run.ClientSession),
	// closed when that one ends.
	SessionClient = "client"
)

// What a run does when a connection's session is replaced between two
// of its calls (Binding.OnSessionReplaced).
const (
	// OnReplacedContinue (the default, also ""): the run goes on, on the
	// new session; a session_replaced run event says so.
	OnReplacedContinue = "continue"
	// OnReplacedFail: the run's next call on the new session is not sent,
	// and the run fails, naming the connection and the generations.
	OnReplacedFail = "fail"
)

// Deployment binds one artifact version to concrete sources. Its JSON form
// is the manifest's WorkflowDeploymentPayload.
type Deployment struct {
	ID              string    `json:"id"`
	ArtifactID      string    `json:"artifact_id"`
	ArtifactVersion int       `json:"artifact_version"`
	Bindings        []Binding `json:"bindings"`
	DriftPolicy     string    `json:"drift_policy"` // block | warn | allow
	// Limits override the server's run limits for this deployment (an
	// mcpflow extension).
	Limits *RunLimits `json:"limits,omitempty"`
	// Retention overrides how long the server keeps the deployment's
	// finished runs (an mcpflow extension).
	Retention *Retention `json:"retention,omitempty"`
	// MCP says how the deployment is offered to MCP clients (an mcpflow
	// extension); nil offers it under its derived tool name.
	MCP *MCPExposure `json:"mcp,omitempty"`
}

// MCPExposure is how a deployment is offered as an MCP tool: under
// ToolName instead of the name derived from its id, or not at all.
type MCPExposure struct {
	ToolName string `json:"tool_name,omitempty"`
	Hidden   bool   `json:"hidden,omitempty"`
}

// RunLimits bound each run of a deployment: its step budget and its
// overall deadline. Nil fields keep the server's defaults.
type RunLimits struct {
	MaxSteps          *int `json:"max_steps,omitempty"`
	RunTimeoutSeconds *int `json:"run_timeout_seconds,omitempty"`
}

// Deployments keeps deployments; saving replaces.
type Deployments interface {
	SaveDeployment(ctx context.Context, d Deployment) error
	// GetDeployment returns a deployment or ErrNotFound.
	GetDeployment(ctx context.Context, id string) (Deployment, error)
	// ListDeployments returns all deployments sorted by id.
	ListDeployments(ctx context.Context) ([]Deployment, error)
	// DeleteDeployment removes a deployment; false if it did not exist.
	DeleteDeployment(ctx context.Context, id string) (bool, error)
}

// Run statuses as stored. "running" is only ever seen while the process
// that owns the run is alive; recovery at start turns it into
// "interrupted" or "failed".
const (
	RunRunning     = "running"
	RunCompleted   = "completed"
	RunFailed      = "failed"
	RunInterrupted = "interrupted"
	RunCancelled   = "cancelled"
)

// RunPassthrough is the Kind of a run that is one MCP client's call of an
// upstream tool exposed through the MCP face (gateway mode).
const RunPassthrough = "passthrough"

// Run is one execution of a deployment. Its checkpoint is CurrentStep with
// State: the step to run next and the workflow state that the steps before
// it committed. RecordProgress stores both with the trace entries that led
// to them, in one transaction.
type Run struct {
	ID              string         `json:"run_id"`
	DeploymentID    string         `json:"deployment_id"`
	ArtifactID      string         `json:"artifact_id"`
	ArtifactVersion int            `json:"artifact_version"`
	Status          string         `json:"status"`
	ResumeReadiness string         `json:"resume_readiness"`
	CurrentStep     string         `json:"current_step,omitempty"` // node executing or next; "" before the first step and once finished
	State           map[string]any `json:"state,omitempty"`        // workflow state after the last committed step; an empty state reads back as nil
	// Checkpoint is the execution's whole state after the last commit:
	// frames, scopes and the calls in flight. A run resumes from it.
	Checkpoint *workflow.Snapshot `json:"checkpoint,omitempty"`
	// Interrupt is the pause an interrupted run waits in.
	Interrupt   *workflow.Interrupt `json:"interrupt,omitempty"`
	Outcome     *string             `json:"outcome"`
	Error       *string             `json:"error"`
	Output      workflow.Object     `json:"output"`
	Diagnostics []workflow.Object   `json:"diagnostics"`
	Input       workflow.Object     `json:"input"`
	Deployment  Deployment          `json:"deployment"`
	TraceCount  int                 `json:"trace_count"`
	// StartedBy names who started the run: the token's name, or "local"
	// for a server without tokens; "" for runs started before it was kept.
	StartedBy string `json:"started_by,omitempty"`
	// ClientSampling says that the run was started by an MCP client that
	// declared sampling (through the MCP face): an upstream sampling
	// request of a source whose policy is client is forwarded to it.
	ClientSampling bool `json:"client_sampling,omitempty"`
	// ParentRunID names the run this one reran or forked (an mcpflow
	// extension; workflow.runs.rerun and workflow.runs.fork), and
	// ForkedFromNode the step a fork executed from, its earlier steps
	// replayed from the parent's trace; both "" for a run started anew.
	ParentRunID    string `json:"parent_run_id,omitempty"`
	ForkedFromNode string `json:"forked_from_node,omitempty"`
	// Kind is what the run is: "" for a run of a workflow, RunPassthrough
	// for an MCP client's call of an exposed upstream tool (gateway mode).
	Kind string `json:"kind,omitempty"`
	// ClientSession is, for a pass-through run of a connection exposed
	// per_client, the key of the downstream MCP client session it came
	// from (a digest of the caller and its session id): its calls go to
	// that client's own upstream session. "" otherwise.
	ClientSession string    `json:"client_session,omitempty"`
	CreatedAt     time.Time `json:"created_at"`
	UpdatedAt     time.Time `json:"updated_at"`
	// Sessions are the upstream sessions the run's calls went to, the
	// last one per connection and session scope (an mcpflow extension):
	// a later answer from another session tells the run that the one
	// before was replaced.
	Sessions []RunSession `json:"sessions,omitempty"`
	// Idempotency is the idempotency key the run was started with (an
	// mcpflow extension): CreateRun claims it (IdempotencyKeys); nil for
	// none.
	Idempotency *RunIdempotency `json:"idempotency,omitempty"`
	// Replaced are the session replacements the run saw since its last
	// commit: the commit that writes the run appends a session_replaced
	// run event for each. The next commit's record has none. It is
	// encoded, as all of a record is, because records cross nodes (the
	// run's answers, run.Started and run.Stopped).
	Replaced []RunEventSession `json:"replaced,omitempty"`
}

// Kept is r as a store keeps it: without Replaced, which the commit that
// writes r tells as its session_replaced run events.
func (r Run) Kept() Run {
	r.Replaced = nil
	return r
}

// RunSession is an upstream session a run's calls went to: its
// connection, its session scope ("" for the connection's shared session)
// and its identity (see session.Identity: the generation and, on a node
// alone, the mcpflow process that opened it).
type RunSession struct {
	Connection string `json:"connection"`
	Scope      string `json:"scope,omitempty"`
	Generation int64  `json:"generation"`
	Instance   string `json:"instance,omitempty"`
}

// RunQuery filters and pages runs (newest update first).
type RunQuery struct {
	Status       string // "" for any
	DeploymentID string // "" for any
	Offset       int
	Limit        int // <= 0 for no limit
}

// Runs keeps run records, their append-only traces and (for a Store) their
// event logs: CreateRun, RecordProgress and RecoverRunning append the
// events NewRunEvents derives from each change, and the admin events
// RunAdminEvents derives, in the same transaction.
type Runs interface {
	// CreateRun stores a new run with the first entries of its trace
	// (r.TraceCount is len(entries)), and the events of its creation;
	// ErrExists if the id is taken. A run can so start and commit its
	// first steps in one transaction. A store of a cluster node whose
	// membership has lapsed refuses it with ErrNotMember. A run whose
	// Idempotency is set is created only with its key's claim, in the
	// same transaction (IdempotencyKeys), or refused with ErrKeyTaken.
	CreateRun(ctx context.Context, r Run, entries []workflow.TraceEntry) error
	// RecordProgress atomically replaces the run record and appends trace
	// entries and the events of the change; r.TraceCount must equal the
	// stored count plus len(entries). A store of a cluster node whose
	// membership has lapsed refuses with ErrNotMember a commit that would
	// make a run running on the node that was not (an interrupted run
	// resumed).
	RecordProgress(ctx context.Context, r Run, entries []workflow.TraceEntry) error
	RunLiveEvents
	// GetRun returns a run, or ErrNotFound (ErrPruned for one that
	// retention pruned).
	GetRun(ctx context.Context, id string) (Run, error)
	// ListRuns returns one page sorted by (updated_at, id) descending and
	// the total count after filtering.
	ListRuns(ctx context.Context, q RunQuery) ([]Run, int, error)
	// ReadTrace returns trace entries [start, start+limit) of a run, or
	// ErrNotFound; limit <= 0 reads to the end.
	ReadTrace(ctx context.Context, runID string, start, limit int) ([]workflow.TraceEntry, error)
	// RecoverRunning is called once at start, before any run is started:
	// every run still "running" was cut off by a crash. It becomes
	// "failed" with an error naming the step that was in flight, and the
	// changed runs are returned.
	RecoverRunning(ctx context.Context, now time.Time) ([]Run, error)
}

// UpstreamInterruptKinds are the interrupt kinds of a request an
// upstream server sent during a call (actors/session's UpstreamElicitation
// and UpstreamSampling): a run interrupted so waits in a live actor with
// its call out, on the node that runs it, as a running run does.
var UpstreamInterruptKinds = []string{"elicitation", "sampling"}

// RunClaimer is what a store shared by the nodes of a cluster adds to
// Runs: each running run belongs to one node, the one that executes it,
// and only that node may commit it while it is running (RecordProgress of
// a run running on another node is ErrFenced). A store used by one node
// alone does not implement it.
type RunClaimer interface {
	// ClaimRuns moves every running run of node from to this store's node,
	// in one statement, and returns them as stored (still running), sorted
	// by id. A run interrupted by its server's request (interrupt kind
	// elicitation or sampling, UpstreamInterruptKinds) is claimed too, as
	// stored (interrupted): its actor waited live on node from, its call
	// out, and died with it (the claimer recovers it as a running run). A node claims its own runs and those of a store used by one
	// node alone (from "") when it starts, and a surviving node claims a
	// dead node's; two nodes claiming the runs of one node at once get
	// disjoint sets.
	ClaimRuns(ctx context.Context, from string) ([]Run, error)
}

// Catalogs keeps the last catalog snapshot of each connection.
type Catalogs interface {
	SaveCatalog(ctx context.Context, s catalog.Snapshot) error
	// GetCatalog returns a snapshot or ErrNotFound.
	GetCatalog(ctx context.Context, connectionID string) (catalog.Snapshot, error)
	// ListCatalogs returns all snapshots sorted by connection id.
	ListCatalogs(ctx context.Context) ([]catalog.Snapshot, error)
}

// Auth ids: a letter, digit or underscore, then letters, digits, '_', '.'
// and '-'.
var authIDPattern = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]*$`)

// ValidAuthID reports whether id is a valid auth record id.
func ValidAuthID(id string) bool { return authIDPattern.MatchString(id) }

// AuthRecord is the credentials of a source: a scheme (bearer, headers,
// env, oauth_refresh_token or any other) and the secret key/values it
// needs. Metadata is not secret.
//
// Payload is secret. An AuthRecord formats itself (fmt's %v, %+v, %#v and
// %s) and logs itself (slog.LogValuer) with its id, scheme, metadata and
// the names of its payload keys only: see String and LogValue. Its JSON form
// is the whole record, payload values included, because that is what a
// store keeps: never log or print the JSON of an AuthRecord.
//
// A store opened WithSealer keeps the payload sealed (encrypted) in Sealed
// and Payload nil, and returns records opened: Payload filled, Sealed
// empty.
type AuthRecord struct {
	ID       string         `json:"id"`
	Scheme   string         `json:"scheme"`
	Payload  map[string]any `json:"payload"` // secret
	Metadata map[string]any `json:"metadata"`
	// Sealed is the payload sealed, as a store that seals keeps it (see
	// Sealer); "" in every record a store that seals returns.
	Sealed string `json:"sealed,omitempty"`
}

// AuthRecords keeps auth records; saving replaces. Implementations keep
// them in files only their owner can read or write (mode 0600 or
// stricter, or the equivalent access control of a database server), seal
// their payloads when opened WithSealer, and never log a payload.
type AuthRecords interface {
	// SaveAuth stores a record, replacing any with the same id;
	// ErrInvalid unless ValidAuthID(a.ID).
	SaveAuth(ctx context.Context, a AuthRecord) error
	// GetAuth returns a record or ErrNotFound.
	GetAuth(ctx context.Context, id string) (AuthRecord, error)
	// ListAuth returns all records sorted by id.
	ListAuth(ctx context.Context) ([]AuthRecord, error)
	// DeleteAuth removes a record; false if it did not exist.
	DeleteAuth(ctx context.Context, id string) (bool, error)
}

// RegistryEntry is the desired state of one source: what the source
// registry asks the broker to connect to. Kind is "mcp"; Transport is the
// transport's configuration object; AuthRef names the auth record to use
// (nil: the record whose id is the source id).
//
// The values of Transport's env, headers and url are secret (see
// SecretTransportKey): a store opened WithSealer keeps them sealed in
// Sealed, and returns entries opened.
type RegistryEntry struct {
	ID        string         `json:"id"`
	Kind      string         `json:"kind"`
	Enabled   bool           `json:"enabled"`
	Provider  string         `json:"provider"`
	Account   string         `json:"account"`
	Profile   *string        `json:"profile"`
	Transport map[string]any `json:"transport"`
	AuthRef   *string        `json:"auth_ref"`
	// Auth is how the source logs in ({"kind": "oauth", ...}); nil for
	// none.
	Auth map[string]any `json:"auth,omitempty"`
	// Client is what mcpflow answers the source as an MCP client
	// (config.Client: elicitation, sampling, roots, log_level); nil for
	// the defaults.
	Client map[string]any `json:"client,omitempty"`
	// Expose offers the source through the MCP face (config.MCPExpose,
	// without its connection); nil for not exposed.
	Expose   map[string]any `json:"expose,omitempty"`
	Metadata map[string]any `json:"metadata"`
	// Sealed is the secret values of Transport sealed, as a store that
	// seals keeps them (see SealEntry); "" in every entry a store that
	// seals returns.
	Sealed string `json:"sealed,omitempty"`
}

// SourceRegistry keeps the source registry; putting an entry replaces it
// (the last writer wins).
type SourceRegistry interface {
	// PutRegistryEntry stores an entry, replacing any with the same id.
	PutRegistryEntry(ctx context.Context, e RegistryEntry) error
	// GetRegistryEntry returns an entry or ErrNotFound.
	GetRegistryEntry(ctx context.Context, id string) (RegistryEntry, error)
	// ListRegistryEntries returns all entries sorted by id.
	ListRegistryEntries(ctx context.Context) ([]RegistryEntry, error)
	// DeleteRegistryEntry removes an entry; false if it did not exist.
	DeleteRegistryEntry(ctx context.Context, id string) (bool, error)
}

// Event is one entry of the admin event log. Seq is assigned by the store.
type Event struct {
	Seq              int64          `json:"seq"`
	Kind             string         `json:"kind"`
	TimestampEpochMs int64          `json:"timestamp_epoch_ms"`
	ConnectionID     *string        `json:"connection_id"`
	CapabilityID     *string        `json:"capability_id"`
	WorkflowName     *string        `json:"workflow_name"`
	Payload          map[string]any `json:"payload"`
}

// Events keeps the admin event log with bounded retention: a store keeps
// the newest events, MaxEvents of them unless WithMaxEvents set another
// bound, and drops older ones in the transaction that appends.
type Events interface {
	// AppendEvent stores e under the next sequence number, which it
	// returns; e.Seq is ignored. Sequence numbers start at 1 and increase
	// with every append; they are never reused, even once dropped.
	AppendEvent(ctx context.Context, e Event) (seq int64, err error)
	// ListEvents returns, in sequence order, up to limit of the kept
	// events whose sequence number is greater than afterSeq (0 for the
	// oldest kept); limit <= 0 for no limit. A reader pages by passing the
	// last Seq it got as afterSeq.
	ListEvents(ctx context.Context, afterSeq int64, limit int) ([]Event, error)
	// LastEventSeq returns the sequence number of the last event appended,
	// 0 before the first.
	LastEventSeq(ctx context.Context) (int64, error)
}

// A Commit is one commit of a run, handed to the store whole: the live
// events held since the last one (appended first, in a write of their
// own whose failure does not fail the commit), then the run's record and
// its new trace entries, the run created when Create is set
// (Runs.CreateRun, else Runs.RecordProgress).
type Commit struct {
	Create  bool
	Run     Run
	Entries []workflow.TraceEntry
	Live    []RunEvent
}

// CommitOutcome is how a Commit ended: Err is the run's write's error,
// LiveErr its live events'.
type CommitOutcome struct {
	Err, LiveErr error
}

// A Submitter takes a run's commits without a goroutine of the caller's
// waiting for each: the store's own writer reports the outcome. A run
// actor so commits with no goroutine of its own per commit, and its inbox
// stays free (a cancel is taken while the commit is written).
type Submitter interface {
	// SubmitCommit queues c and returns at once; done is called exactly
	// once, with c's outcome, from a goroutine of the store's (or, for a
	// store that writes in place, before SubmitCommit returns). done must
	// not block. A commit not taken by the store before ctx ends is not
	// written, and done gets ctx's error.
	SubmitCommit(ctx context.Context, c Commit, done func(CommitOutcome))
}

// Submit hands c to st: through its own writer when it is a Submitter,
// else by calling its methods on a goroutine that lives for the commit.
func Submit(ctx context.Context, st Runs, c Commit, done func(CommitOutcome)) {
	if s, ok := st.(Submitter); ok {
		s.SubmitCommit(ctx, c, done)
		return
	}
	commitApart(ctx, st, c, done)
}

// commitApart writes c through st's methods on a goroutine that lives
// for the commit, and tells done its outcome.
func commitApart(ctx context.Context, st Runs, c Commit, done func(CommitOutcome)) {
	go func() { done(CommitInPlace(ctx, st, c)) }()
}

// CommitInPlace writes c through st's methods, waiting for each, and
// returns its outcome: how a store that writes in place (or a wrapper
// that is no Submitter) commits.
func CommitInPlace(ctx context.Context, st Runs, c Commit) CommitOutcome {
	var o CommitOutcome
	if len(c.Live) > 0 {
		o.LiveErr = st.AppendRunEvents(ctx, c.Run.ID, c.Live)
	}
	if c.Create {
		o.Err = st.CreateRun(ctx, c.Run, c.Entries)
	} else {
		o.Err = st.RecordProgress(ctx, c.Run, c.Entries)
	}
	return o
}
