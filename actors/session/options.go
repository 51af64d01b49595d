package session

import (
	"time"

	"github.com/mcpflow/mcpflow/actors/catalog"
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
	// KeepAlive pings an idle session at this interval (0 disables).
	KeepAlive time.Duration
	// MinBackoff and MaxBackoff bound the wait after a failed connect.
	MinBackoff, MaxBackoff time.Duration
	// CatalogMaxAge is how long a listed catalog stays fresh: an open
	// session re-lists it then, and a session that opens re-lists a
	// catalog older than this.
	CatalogMaxAge time.Duration
}

// DefaultOptions are the production bounds.
func DefaultOptions() Options {
	return Options{
		ProtocolVersion: "2025-11-25",
		ConnectTimeout:  30 * time.Second,
		CallTimeout:     60 * time.Second,
		CloseTimeout:    3 * time.Second,
		MaxInFlight:     32,
		MaxQueued:       1024,
		KeepAlive:       30 * time.Second,
		MinBackoff:      250 * time.Millisecond,
		MaxBackoff:      30 * time.Second,
		CatalogMaxAge:   catalog.DefaultMaxAgeSeconds * time.Second,
	}
}

// backoff is the wait after n consecutive connect failures (n >= 1):
// exponential from MinBackoff, capped at MaxBackoff.
func (o Options) backoff(n int) time.Duration {
	d := o.MinBackoff
	for i := 1; i < n && d < o.MaxBackoff; i++ {
		d *= 2
	}
	return min(d, o.MaxBackoff)
}
