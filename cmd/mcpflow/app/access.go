package app

import (
	"fmt"
	"slices"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/api/access"
)

// Access builds who may call the API from cfg's access block: its tokens
// (inline and from its token file) and the origins and Host names it
// allows, with extraOrigins (--allow-origin) added.
func Access(cfg *config.File, extraOrigins []string) (*access.Guard, *access.Gate, error) {
	a := cfg.Server.Access
	if a == nil {
		a = &config.Access{}
	}
	tokens, err := a.AllTokens(cfg.Dir())
	if err != nil {
		return nil, nil, fmt.Errorf("access: %w", err)
	}
	return access.NewGuard(tokens), access.NewGate(slices.Concat(a.AllowedOrigins, extraOrigins), a.AllowedHosts), nil
}
