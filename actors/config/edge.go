package config

import (
	"errors"
	"fmt"
)

// Edge bounds the network edge (/ws and /rpc); see docs/edge.md. Every
// field is optional: an absent or zero field keeps the default. Durations
// are milliseconds.
type Edge struct {
	MaxMessageBytes int `json:"max_message_bytes,omitempty"` // one WebSocket message or /rpc body; beyond it: close 1009 / HTTP 413
	MaxBatch        int `json:"max_batch,omitempty"`         // entries per batch
	// MaxInFlight caps the requests running at once per WebSocket
	// connection, and per client address on /rpc.
	MaxInFlight      int `json:"max_in_flight,omitempty"`
	MaxSubscriptions int `json:"max_subscriptions,omitempty"` // per WebSocket connection
	// SubscriptionBuffer is how many events one subscription may hold that
	// its connection has not taken; beyond it the subscription lags.
	SubscriptionBuffer int `json:"subscription_buffer,omitempty"`
	// MaxConnectionsPerClient caps the WebSocket connections and /rpc
	// requests being served at once per client address.
	MaxConnectionsPerClient int `json:"max_connections_per_client,omitempty"`
	MaxConcurrentRuns       int `json:"max_concurrent_runs,omitempty"` // workflow.runs.start calls at once, server-wide
	// MaxOutboundMessages and MaxOutboundBytes bound the replies queued for
	// one WebSocket connection; while either is reached the connection is
	// not read.
	MaxOutboundMessages int   `json:"max_outbound_messages,omitempty"`
	MaxOutboundBytes    int64 `json:"max_outbound_bytes,omitempty"`
	RequestTimeoutMS    int   `json:"request_timeout_ms,omitempty"`
	WriteTimeoutMS      int   `json:"write_timeout_ms,omitempty"`
	PingIntervalMS      int   `json:"ping_interval_ms,omitempty"`
	PongTimeoutMS       int   `json:"pong_timeout_ms,omitempty"`
	ReadHeaderTimeoutMS int   `json:"read_header_timeout_ms,omitempty"` // HTTP request headers
	BodyTimeoutMS       int   `json:"body_timeout_ms,omitempty"`        // an /rpc request body
}

// Validate checks the values an edge block sets: none may be negative.
func (e *Edge) Validate() error {
	if e == nil {
		return nil
	}
	var errs []error
	for _, f := range []struct {
		name string
		v    int64
	}{
		{"max_message_bytes", int64(e.MaxMessageBytes)}, {"max_batch", int64(e.MaxBatch)}, {"max_in_flight", int64(e.MaxInFlight)},
		{"max_subscriptions", int64(e.MaxSubscriptions)}, {"subscription_buffer", int64(e.SubscriptionBuffer)}, {"max_connections_per_client", int64(e.MaxConnectionsPerClient)},
		{"max_concurrent_runs", int64(e.MaxConcurrentRuns)}, {"max_outbound_messages", int64(e.MaxOutboundMessages)},
		{"max_outbound_bytes", e.MaxOutboundBytes}, {"request_timeout_ms", int64(e.RequestTimeoutMS)},
		{"write_timeout_ms", int64(e.WriteTimeoutMS)}, {"ping_interval_ms", int64(e.PingIntervalMS)},
		{"pong_timeout_ms", int64(e.PongTimeoutMS)}, {"read_header_timeout_ms", int64(e.ReadHeaderTimeoutMS)},
		{"body_timeout_ms", int64(e.BodyTimeoutMS)},
	} {
		if f.v < 0 {
			errs = append(errs, fmt.Errorf("edge: %s must not be negative", f.name))
		}
	}
	return errors.Join(errs...)
}
