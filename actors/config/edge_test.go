package config_test

import (
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/config"
)

func TestTheEdgeBlockParsesAndRefusesNegativeBounds(t *testing.T) {
	is := is.New(t)
	f, err := config.Parse([]byte(`{"version":1,"server":{"sources":[],"edge":{
		"max_message_bytes":1048576,"max_batch":50,"max_in_flight":16,"max_subscriptions":8,
		"max_connections_per_client":32,"max_concurrent_runs":10,"max_outbound_messages":64,"max_outbound_bytes":524288,
		"request_timeout_ms":60000,"write_timeout_ms":5000,"ping_interval_ms":20000,"pong_timeout_ms":10000,
		"read_header_timeout_ms":5000,"body_timeout_ms":10000}}}`))
	is.NoErr(err)
	is.Equal(*f.Server.Edge, config.Edge{
		MaxMessageBytes: 1 << 20, MaxBatch: 50, MaxInFlight: 16, MaxSubscriptions: 8,
		MaxConnectionsPerClient: 32, MaxConcurrentRuns: 10, MaxOutboundMessages: 64, MaxOutboundBytes: 512 << 10,
		RequestTimeoutMS: 60000, WriteTimeoutMS: 5000, PingIntervalMS: 20000, PongTimeoutMS: 10000,
		ReadHeaderTimeoutMS: 5000, BodyTimeoutMS: 10000,
	})

	f, err = config.Parse([]byte(`{"version":1,"server":{"sources":[]}}`))
	is.NoErr(err)
	is.Equal(f.Server.Edge, nil) // absent: every default

	_, err = config.Parse([]byte(`{"version":1,"server":{"sources":[],"edge":{"max_batch":-1,"write_timeout_ms":-5}}}`))
	is.True(err != nil)
	is.True(strings.Contains(err.Error(), "edge: max_batch must not be negative"))
	is.True(strings.Contains(err.Error(), "edge: write_timeout_ms must not be negative"))

	_, err = config.Parse([]byte(`{"version":1,"server":{"sources":[],"edge":{"max_bach":5}}}`))
	is.True(err != nil) // unknown keys are errors
}
