package service

import "github.com/mcpflow/mcpflow/actors/config"

// exposures are the connections exposed through the MCP face now: the
// entries of server.mcp.expose, and the expose blocks of the effective
// sources (the config file's and the source registry's, as last applied).
func (s *Service) exposures() []config.MCPExpose {
	return config.Exposures(s.MCP, s.connections())
}

// exposed is connection id's exposure, if it is exposed now.
func (s *Service) exposed(id string) (config.MCPExpose, bool) {
	return config.ExposedIn(s.exposures(), id)
}

// Exposures are the connections exposed through the MCP face now (the
// face's gateway mode reads them at each refresh).
func (s *Service) Exposures() []config.MCPExpose { return s.exposures() }
