package session

import (
	"time"

	"github.com/mcpflow/mcpflow/actors/catalog"
	"github.com/mcpflow/mcpflow/actors/metrics"
)

// Options bound a session actor. Every wait has a deadline and every queue
// has a bound.
type Options struct {
	// ProtocolVersion pinned on connect. The default, 2025-11-25, is the
	// last session-ful MCP version: it keeps upstream session state and
	// lets keepalive detect dead sessions.
	ProtocolVersion string
	// ConnectTimeout bounds connect plus initialize.
	ConnectTimeout time.Duration
	// CallTimeout is used when a call brings no deadline.
	CallTimeout time.Duration
	// CloseTimeout bounds a graceful close before the peer is killed.
	CloseTimeout time.Duration
	// MaxInFlight caps concurrent calls on one session.
	MaxInFlight int
	// MaxQueued caps calls waiting for a session or a free slot.
	MaxQueued int
	// KeepAlive pings the session at this interval (0 disables).
	KeepAlive time.Duration
	// PingTimeout is how long a keepalive ping waits for its answer
	// before it counts as missed; 0 is DefaultPingTimeout, and it is never
	// more than KeepAlive.
	PingTimeout time.Duration
	// PingFailures is how many pings in a row may be missed before the
	// session is taken for hung and ended; 0 is DefaultPingFailures. A
	// ping that fails because the session is closed ends it at once.
	PingFailures int
	// NoListen keeps an HTTP session from holding a stream open to hear
	// the server's notifications (the standing GET of streamable HTTP,
	// subscriptions/listen of the stateless era): an idle session then
	// costs one goroutine and no connection, and a changed catalog is
	// found when it turns stale (CatalogMaxAge) instead of at once. A
	// stdio session hears notifications on its pipe either way; an
	// HTTP+SSE one has no session without its stream.
	NoListen bool
	// Stalls tells how long the process was starved of CPU, which a
	// ping's timeout does not count (see StallMonitor); nil counts all.
	Stalls StallMeter
	// Policy is how the session is reopened after it dies or a connect
	// fails: backoff, restart limit, probes.
	Policy Policy
	// Clock times the policy, the keepalive and queued deadlines; nil is
	// the wall clock.
	Clock Clock
	// Limiter bounds concurrent connects across the session actors that
	// share it; nil does not bound them.
	Limiter *Limiter
	// CatalogMaxAge is how long a listed catalog stays fresh: an open
	// session re-lists it then, and a session that opens re-lists a
	// catalog older than this.
	CatalogMaxAge time.Duration
	// ListChangedDebounce gathers the list_changed notifications a server
	// sends within this long of the first into one re-list of the catalog.
	ListChangedDebounce time.Duration
	// StdioCloseGrace is how long a stopping stdio server has to exit
	// after its stdin closes before its process group gets SIGTERM, and
	// StdioTermGrace how long the group has after SIGTERM before SIGKILL.
	// Their sum, plus a little, should stay below CloseTimeout.
	StdioCloseGrace, StdioTermGrace time.Duration
	// StdioReaper is the command each stdio server runs under (the
	// mcpflow binary's `reap` subcommand, reap.Self()), so that nothing a
	// server starts outlives its session or mcpflow. Empty, or off Linux,
	// servers run directly under mcpflow. See Stdio.
	StdioReaper []string
	// Metrics records the session's gauges, connects and call latencies;
	// nil records nothing.
	Metrics *metrics.Metrics
	// Tenure ties the session to its node's ownership of the connection
	// in a cluster; nil on one node. See Tenure.
	Tenure Tenure
	// Instance names the mcpflow process in the identities of the
	// sessions opened without a tenure (see Identity); "" is a random
	// name drawn once per process. Tests set it to stand for a restart.
	Instance string
	// MaxResultBytes bounds one upstream answer of the stdio and HTTP
	// transports NewStdio and the app make, for a connection that sets
	// no max_result_bytes (server.limits.max_result_bytes; 0:
	// config.DefaultMaxResultBytes).
	MaxResultBytes int64
	// Sealer seals the streamable HTTP session id a task's TaskRef keeps
	// (a run's checkpoint holds it), so that a restarted mcpflow polls
	// the task on the session that created it; nil keeps none, and such
	// a task is lost with the process.
	Sealer Sealer
}

// The keepalive defaults: a busy upstream (or a starved mcpflow) that is
// slow to answer a ping or two keeps its session.
const (
	DefaultPingTimeout  = 10 * time.Second
	DefaultPingFailures = 3
)

// pingTimeout is PingTimeout, its default, capped by KeepAlive.
func (o Options) pingTimeout() time.Duration {
	d := DefaultPingTimeout
	if o.PingTimeout > 0 {
		d = o.PingTimeout
	}
	if o.KeepAlive > 0 {
		d = min(d, o.KeepAlive)
	}
	return d
}

// pingFailures is PingFailures, or its default.
func (o Options) pingFailures() int {
	if o.PingFailures > 0 {
		return o.PingFailures
	}
	return DefaultPingFailures
}

// DefaultOptions are the production bounds.
func DefaultOptions() Options {
	return Options{
		ProtocolVersion:     "2025-11-25",
		ConnectTimeout:      30 * time.Second,
		CallTimeout:         60 * time.Second,
		CloseTimeout:        3 * time.Second,
		MaxInFlight:         32,
		MaxQueued:           1024,
		KeepAlive:           30 * time.Second,
		PingTimeout:         DefaultPingTimeout,
		PingFailures:        DefaultPingFailures,
		Policy:              DefaultPolicy(),
		CatalogMaxAge:       catalog.DefaultMaxAgeSeconds * time.Second,
		ListChangedDebounce: 250 * time.Millisecond,
		StdioCloseGrace:     time.Second,
		StdioTermGrace:      time.Second,
	}
}
