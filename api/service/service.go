// Package service owns the workflow API's method table: one handler per
// JSON-RPC method, turning typed params into store reads and writes and
// actor messages, and domain failures into 5000 errors. It knows nothing of
// WebSocket or HTTP framing; the edge calls it.
package service

import (
	"bytes"
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"time"

	"github.com/anthdm/hollywood/actor"

	"github.com/mcpflow/mcpflow/actors/catalog"
	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/supervisor"
	"github.com/mcpflow/mcpflow/api/protocol"
)

// Handler serves one method: params are the raw JSON object already
// checked against the contract.
type Handler func(ctx context.Context, params json.RawMessage) (any, error)

// Service holds what the handlers use.
type Service struct {
	Store store.Store
	// Catalogs is the live view of every connection's latest snapshot.
	Catalogs   *catalog.Registry
	Engine     *actor.Engine
	Supervisor *supervisor.Handle
	// Connections is the live view of the effective MCP sources: the
	// config merged with the source registry, replaced by each apply.
	// Handlers read it through connections and connection.
	Connections *config.View
	StoreRoot   string
	// RunWait bounds how long runs.start waits for a run to finish before
	// answering with its current, still running, state.
	RunWait time.Duration
	// CallTimeout bounds a tool call whose step declares no timeout.
	CallTimeout time.Duration
	// MaxSteps is each run's step budget (workflow.DefaultMaxSteps when
	// 0), and RunDeadline how long a run may take overall (none when 0).
	MaxSteps    int
	RunDeadline time.Duration
	// Now is the clock (tests may fix it).
	Now func() time.Time
	// Hub serves the subscriptions to live events (workflow.runs.subscribe,
	// workflow.admin.events.subscribe); nil refuses them. Store must then
	// be Hub.Store(), so that the hub sees every commit.
	Hub *Hub
	// resuming holds the ids of runs being resumed, one resume at a time.
	resuming sync.Map
	// live maps the id of each run whose actor is running to it.
	live         sync.Map
	incarnations atomic.Uint64
	// life admits run actors until the service stops (see StopRuns).
	life lifecycle
	// registryMu runs source registry mutations and applies one at a time.
	registryMu sync.Mutex
}

// Methods returns the method table: each area of the API contributes its
// own part.
func (s *Service) Methods() map[string]Handler {
	table := map[string]Handler{}
	for _, part := range []map[string]Handler{
		s.coreMethods(),
		s.documentEditMethods(),
		s.stepEditMethods(),
		s.recordMethods(),
		s.registryMethods(),
		s.authMethods(),
		s.liveMethods(),
	} {
		for name, h := range part {
			if _, dup := table[name]; dup {
				panic("service: method " + name + " registered twice")
			}
			table[name] = h
		}
	}
	return table
}

// coreMethods are health, capabilities, workspaces, artifacts,
// deployments, runs and connections.
func (s *Service) coreMethods() map[string]Handler {
	return map[string]Handler{
		protocol.MethodHealth:                    handle(s.health),
		protocol.MethodCapabilitiesList:          handle(s.listCapabilities),
		protocol.MethodCapabilitiesInspect:       handle(s.inspectCapability),
		protocol.MethodWorkspaceFromCapability:   handle(s.createFromCapability),
		protocol.MethodWorkspaceGet:              handle(s.getWorkspace),
		protocol.MethodWorkspaceCreateArtifact:   handle(s.createArtifact),
		protocol.MethodWorkspaceList:             handle(s.listWorkspaces),
		protocol.MethodWorkspaceSetName:          handle(s.setName),
		protocol.MethodWorkspaceSetStart:         handle(s.setStart),
		protocol.MethodWorkspaceSetRoute:         handle(s.setRoute),
		protocol.MethodWorkspaceReplaceDocument:  handle(s.replaceDocument),
		protocol.MethodWorkspaceValidate:         handle(s.validateWorkspace),
		protocol.MethodWorkspaceDelete:           handle(s.deleteWorkspace),
		protocol.MethodArtifactsList:             handle(s.listArtifacts),
		protocol.MethodArtifactsInspect:          handle(s.inspectArtifact),
		protocol.MethodDeploymentsSave:           handle(s.saveDeployment),
		protocol.MethodDeploymentsInspect:        handle(s.inspectDeployment),
		protocol.MethodDeploymentsList:           handle(s.listDeployments),
		protocol.MethodDeploymentsValidate:       handle(s.validateDeployment),
		protocol.MethodRunsStart:                 handle(s.startRun),
		protocol.MethodRunsInspect:               handle(s.inspectRun),
		protocol.MethodRunsList:                  handle(s.listRuns),
		protocol.MethodRunsTrace:                 handle(s.readTrace),
		protocol.MethodRunsResume:                handle(s.resumeRun),
		protocol.MethodRunsCancel:                handle(s.cancelRun),
		protocol.MethodConnectionsList:           handle(s.listConnections),
		protocol.MethodConnectionStatusesList:    handle(s.listConnectionStatuses),
		protocol.MethodConnectionsRefreshCatalog: handle(s.refreshCatalog),
		protocol.MethodWorkspaceCompile:          handle(s.compileWorkspace),
		protocol.MethodDraftsValidate:            handle(s.validateDraft),
		protocol.MethodArtifactsCreateFromPlan:   handle(s.createFromPlan),
	}
}

// handle adapts a typed method to a Handler. Params decode strictly:
// unknown keys are invalid params even where no contract schema applies.
func handle[P, R any](fn func(context.Context, P) (R, error)) Handler {
	return func(ctx context.Context, raw json.RawMessage) (any, error) {
		var p P
		if len(raw) > 0 && !bytes.Equal(raw, []byte("null")) {
			dec := json.NewDecoder(bytes.NewReader(raw))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&p); err != nil {
				return nil, invalidParams("invalid params: %v", err)
			}
		}
		return fn(ctx, p)
	}
}

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func (s *Service) health(context.Context, protocol.Empty) (protocol.HealthResult, error) {
	return protocol.HealthResult{Status: "ok", StoreRoot: s.StoreRoot}, nil
}

// connections returns the effective connections now, sorted by id: one
// snapshot that a concurrent apply does not change. Do not modify it.
func (s *Service) connections() []config.Connection {
	if s.Connections == nil {
		return nil
	}
	return s.Connections.All()
}

// connection finds an effective connection.
func (s *Service) connection(id string) (config.Connection, bool) {
	if s.Connections == nil {
		return config.Connection{}, false
	}
	return s.Connections.Get(id)
}

// isEnabledConnection reports whether id names an enabled connection.
func (s *Service) isEnabledConnection(id string) bool {
	c, ok := s.connection(id)
	return ok && c.IsEnabled()
}

// isConnection reports whether id names a configured connection.
func (s *Service) isConnection(id string) bool {
	_, ok := s.connection(id)
	return ok
}
