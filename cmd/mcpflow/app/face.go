package app

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/secrets"
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

// faceStates is what seals the MCP face's request states: the store's
// secrets keyring, so that any node of a cluster and the server after a
// restart open them; a key of this process where the App was given a store
// (tests).
func faceStates(keys *secrets.Keyring) (mcpface.Sealer, error) {
	if keys != nil {
		return keys, nil
	}
	ephemeral, err := secrets.Ephemeral()
	if err != nil {
		return nil, fmt.Errorf("a key for the mcp face: %w", err)
	}
	return ephemeral, nil
}

// startFace mounts the MCP face on the edge, unless cfg disables it; the
// connections it exposes are the service's (exposures), read again at
// each of its refreshes.
func startFace(e *edge.Server, cfg *config.MCP, states mcpface.Sealer, exposures func() []config.MCPExpose) *face {
	if cfg != nil && cfg.Disabled {
		return nil
	}
	mf := mcpface.New(mcpface.Options{Config: cfg, Watch: e.Local(access.Internal), Version: edge.Version(), States: states,
		Metrics: e.Options().Metrics, Exposures: func(context.Context) ([]config.MCPExpose, error) { return exposures(), nil }})
	ctx, cancel := context.WithCancel(context.Background())
	f := &face{cancel: cancel}
	e.Mount("/mcp", mf.Handler(ctx, mcpface.HTTPOptions{
		Backend:        func(p access.Principal) mcpface.Backend { return e.Local(p) },
		Gate:           func(p access.Principal) mcpface.Gate { return e.Local(p) },
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
