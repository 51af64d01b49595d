package app

import (
	"context"
	"sync"
	"time"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/api/access"
	"github.com/mcpflow/mcpflow/api/edge"
	"github.com/mcpflow/mcpflow/api/mcpface"
)

// face is the MCP face at /mcp and the goroutine that keeps its tools
// current, which stop ends.
type face struct {
	cancel context.CancelFunc
	done   sync.WaitGroup
}

// mcpSessionIdle closes a 2025-era MCP session that sent no request for
// that long, so that sessions a client forgot do not pile up.
const mcpSessionIdle = 30 * time.Minute

// startFace mounts the MCP face on the edge, unless cfg disables it.
func startFace(e *edge.Server, cfg *config.MCP) *face {
	if cfg != nil && cfg.Disabled {
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	f := &face{cancel: cancel}
	mf := mcpface.New(mcpface.Options{Config: cfg, Watch: e.Local(access.Internal), Version: edge.Version()})
	e.Mount("/mcp", mf.Handler(ctx, mcpface.HTTPOptions{
		Backend:        func(p access.Principal) mcpface.Backend { return e.Local(p) },
		MaxBodyBytes:   e.Options().MaxMessageBytes,
		SessionTimeout: mcpSessionIdle,
	}))
	f.done.Go(func() { mf.Run(ctx) })
	return f
}

// stop ends the face's goroutine and its calls; a nil face does nothing.
func (f *face) stop() {
	if f == nil {
		return
	}
	f.cancel()
	f.done.Wait()
}
