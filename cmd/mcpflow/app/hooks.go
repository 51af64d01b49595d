package app

import (
	"github.com/mcpflow/mcpflow/api/access"
	"github.com/mcpflow/mcpflow/api/edge"
	"github.com/mcpflow/mcpflow/api/hooks"
)

// mountHooks serves the signed webhooks at POST /hooks/{id} on the edge,
// under its body bound and body timeout, each run started through the
// method table as the webhook (docs/triggers.md).
func mountHooks(e *edge.Server, st hooks.Store) {
	opts := e.Options()
	e.MountSigned(hooks.Pattern, hooks.New(hooks.Options{
		Store:        st,
		As:           func(p access.Principal) hooks.Caller { return e.Local(p) },
		Metrics:      opts.Metrics,
		MaxBodyBytes: opts.MaxMessageBytes,
		BodyTimeout:  opts.BodyTimeout,
	}))
}
