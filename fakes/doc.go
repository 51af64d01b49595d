// Package fakes holds test doubles: in-process MCP servers and a recording
// transport factory. Only tests import it.
package fakes
