package app_test

import (
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/api/service"
	"github.com/mcpflow/mcpflow/cmd/mcpflow/app"
)

// TestMaxConcurrentRunsComesFromTheEdgeBlock: server.edge's
// max_concurrent_runs is the bound of run starts, which the service puts
// in its table; without it the default applies.
func TestMaxConcurrentRunsComesFromTheEdgeBlock(t *testing.T) {
	is := is.New(t)
	is.Equal(app.DefaultOptions(nil).MaxConcurrentRuns, service.DefaultMaxConcurrentRuns)
	is.Equal(app.DefaultOptions(&config.File{}).MaxConcurrentRuns, service.DefaultMaxConcurrentRuns)
	cfg := &config.File{Server: config.Server{Edge: &config.Edge{MaxConcurrentRuns: 6}}}
	is.Equal(app.DefaultOptions(cfg).MaxConcurrentRuns, 6)
}
