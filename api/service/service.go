// Package service owns the workflow API's method table: one handler per
// JSON-RPC method, turning typed params into store reads and writes and
// actor messages, and domain failures into 5000 errors. It knows nothing of
// WebSocket or HTTP framing; the edge calls it.
package service

import (
	"context"
	"time"

	"github.com/mcpflow/mcpflow/actors/audit"
	"github.com/mcpflow/mcpflow/actors/catalog"
	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/runs"
	"github.com/mcpflow/mcpflow/actors/sources"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/supervisor"
	"github.com/mcpflow/mcpflow/api/live"
)

// Service holds what the handlers use.
type Service struct {
	Store store.Store
	// Catalogs is the live view of every connection's latest snapshot.
	Catalogs   *catalog.Registry
	Supervisor *supervisor.Handle
	// Runs runs the runs: runs.start, resume and cancel, and the wrappers
	// capabilities.call runs, call it; required by them and by the
	// methods that save deployments and artifacts, which it prepares.
	Runs *runs.Manager
	// Connections is the live view of the effective MCP sources: the
	// config merged with the source registry, replaced by each apply.
	// Handlers read it through connections and connection.
	Connections *config.View
	// Sources is the source registry over Connections, which its
	// methods change and apply; required by them.
	Sources   *sources.Sources
	StoreRoot string
	// RunWait bounds how long runs.start waits for a run to finish before
	// answering with its current, still running, state.
	RunWait time.Duration
	// MaxConcurrentRuns bounds the runs.start calls running at once,
	// server-wide (DefaultMaxConcurrentRuns when 0).
	MaxConcurrentRuns int
	// Now is the clock (tests may fix it).
	Now func() time.Time
	// Hub serves the subscriptions to live events (workflow.runs.subscribe,
	// workflow.admin.events.subscribe); nil refuses them. Store must then
	// be store.Observed with Hub as its observer, so that the hub sees
	// every commit.
	Hub *live.Hub
	// MCP is the server.mcp block: the connections it exposes are those
	// workflow.runs.passthrough may call (nil exposes none).
	MCP *config.MCP
	// RotateKeys re-seals the store's auth records under a new key
	// (workflow.admin.secrets.rotate); nil when the store seals nothing.
	RotateKeys KeyRotator
	// Schedules is the scheduling loop: told of each change to a
	// schedule, and what workflow.schedules.trigger fires through (nil
	// refuses trigger).
	Schedules ScheduleLoop
}

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// record appends an event to the admin event log.
func (s *Service) record(ctx context.Context, e audit.Event) { audit.Record(ctx, s.Store, s.now(), e) }

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
