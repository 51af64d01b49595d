package service_test

import (
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/api/protocol"
)

// The prompts of a connection exposed with "prompts": true are its
// catalog's; a connection exposed for its tools only, or not at all, is
// a KeyError.
func TestAnExposedConnectionsPromptsAreListed(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	f.svc.MCP = &config.MCP{Expose: []config.MCPExpose{{Connection: "fake.one", Prompts: true}, {Connection: "web.main"}}}

	listed := mustCall[protocol.SourcePromptsResult](t, f, protocol.MethodSourcesPrompts, `{"source_id":"fake.one"}`)
	is.Equal(len(listed.Prompts), 2)
	is.Equal(listed.Prompts[0].Name, "greet")
	is.Equal(listed.Prompts[1].Name, "bye")

	for _, params := range []string{`{"source_id":"web.main"}`, `{"source_id":"fake.off"}`} {
		_, err := f.call(t, protocol.MethodSourcesPrompts, params)
		domainError(t, err, "KeyError") // tools only, or not exposed
	}
	_, err := f.call(t, protocol.MethodSourcesGetPrompt, `{"source_id":"web.main","name":"greet"}`)
	domainError(t, err, "KeyError")
}
