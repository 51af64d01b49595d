package config

import (
	"strings"
	"testing"

	"github.com/matryer/is"
)

func TestTheMCPSessionCapsKeepTheirDefaultsUnlessSet(t *testing.T) {
	for _, tc := range []struct {
		mcp             *MCP
		perToken, total int
	}{
		{nil, DefaultMCPMaxSessionsPerToken, DefaultMCPMaxSessions},
		{&MCP{}, DefaultMCPMaxSessionsPerToken, DefaultMCPMaxSessions},
		{&MCP{MaxSessionsPerToken: 5, MaxSessions: 20}, 5, 20},
	} {
		is := is.New(t)
		perToken, total := tc.mcp.SessionCaps()
		is.Equal(perToken, tc.perToken)
		is.Equal(total, tc.total)
		is.NoErr(tc.mcp.Validate())
	}
}

func TestMCPSessionCapsThatCannotHoldAreRefusedByName(t *testing.T) {
	is := is.New(t)
	err := (&MCP{MaxSessionsPerToken: -1, MaxSessions: -1, SessionEvictIdleMS: -1}).Validate()
	is.True(err != nil)
	for _, name := range []string{"server.mcp.max_sessions_per_token", "server.mcp.max_sessions ", "server.mcp.session_evict_idle_ms"} {
		is.True(strings.Contains(err.Error(), name)) // each bad field is named
	}
	err = (&MCP{MaxSessionsPerToken: 2000}).Validate() // past the server's default 1000
	is.True(err != nil)
	is.True(strings.Contains(err.Error(), "must not exceed server.mcp.max_sessions (1000)"))
}
