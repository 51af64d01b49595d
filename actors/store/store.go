// Package store owns durable records: draft workspaces, artifacts,
// deployments, runs with their traces, and catalog snapshots. It defines one
// interface for all of them and its implementations; it knows nothing about
// actors, MCP sessions or JSON-RPC.
package store

import (
	"context"
	"errors"
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
)

// Store is every record kind mcpflow keeps. Each method is atomic.
type Store interface {
	Workspaces
	Artifacts
	Deployments
	Runs
	Catalogs
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
}

// Deployment binds one artifact version to concrete sources. Its JSON form
// is the manifest's WorkflowDeploymentPayload.
type Deployment struct {
	ID              string    `json:"id"`
	ArtifactID      string    `json:"artifact_id"`
	ArtifactVersion int       `json:"artifact_version"`
	Bindings        []Binding `json:"bindings"`
	DriftPolicy     string    `json:"drift_policy"` // block | warn | allow
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
)

// Run is one execution of a deployment.
type Run struct {
	ID              string            `json:"run_id"`
	DeploymentID    string            `json:"deployment_id"`
	ArtifactID      string            `json:"artifact_id"`
	ArtifactVersion int               `json:"artifact_version"`
	Status          string            `json:"status"`
	ResumeReadiness string            `json:"resume_readiness"`
	CurrentStep     string            `json:"current_step,omitempty"` // node executing or next; "" before the first step and once finished
	Outcome         *string           `json:"outcome"`
	Error           *string           `json:"error"`
	Output          workflow.Object   `json:"output"`
	Diagnostics     []workflow.Object `json:"diagnostics"`
	Input           workflow.Object   `json:"input"`
	Deployment      Deployment        `json:"deployment"`
	TraceCount      int               `json:"trace_count"`
	CreatedAt       time.Time         `json:"created_at"`
	UpdatedAt       time.Time         `json:"updated_at"`
}

// RunQuery filters and pages runs (newest update first).
type RunQuery struct {
	Status string // "" for any
	Offset int
	Limit  int // <= 0 for no limit
}

// Runs keeps run records and their append-only traces.
type Runs interface {
	// CreateRun stores a new run, whose trace is empty (TraceCount 0);
	// ErrExists if the id is taken.
	CreateRun(ctx context.Context, r Run) error
	// RecordProgress atomically replaces the run record and appends trace
	// entries; r.TraceCount must equal the stored count plus len(entries).
	RecordProgress(ctx context.Context, r Run, entries []workflow.TraceEntry) error
	// GetRun returns a run or ErrNotFound.
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

// Catalogs keeps the last catalog snapshot of each connection.
type Catalogs interface {
	SaveCatalog(ctx context.Context, s catalog.Snapshot) error
	// GetCatalog returns a snapshot or ErrNotFound.
	GetCatalog(ctx context.Context, connectionID string) (catalog.Snapshot, error)
	// ListCatalogs returns all snapshots sorted by connection id.
	ListCatalogs(ctx context.Context) ([]catalog.Snapshot, error)
}
