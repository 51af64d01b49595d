package service_test

import (
	"testing"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/api/protocol"
)

// A completion reaches only what the face offers: a prompt of a
// connection that exposes its prompts, a resource template of one that
// exposes its resources; anything else is a KeyError, and a ref that
// names the wrong thing for its type is invalid.
func TestACompletionIsRefusedOutsideWhatIsExposed(t *testing.T) {
	f := newFixture(t)
	f.svc.MCP = &config.MCP{Expose: []config.MCPExpose{{Connection: "fake.one", Prompts: true}, {Connection: "web.main", Resources: true}}}

	for _, params := range []string{
		`{"source_id":"web.main","ref":{"type":"ref/prompt","name":"greet"},"argument":{"name":"who","value":"A"}}`,       // resources only
		`{"source_id":"fake.one","ref":{"type":"ref/resource","uri":"fake://{id}"},"argument":{"name":"id","value":"1"}}`, // prompts only
		`{"source_id":"fake.off","ref":{"type":"ref/prompt","name":"greet"},"argument":{"name":"who","value":"A"}}`,       // not exposed
	} {
		_, err := f.call(t, protocol.MethodSourcesComplete, params)
		domainError(t, err, "KeyError")
	}
	for _, params := range []string{
		`{"source_id":"fake.one","ref":{"type":"ref/prompt","uri":"fake://x"},"argument":{"name":"who","value":"A"}}`,
		`{"source_id":"web.main","ref":{"type":"ref/resource","name":"greet"},"argument":{"name":"id","value":"1"}}`,
		`{"source_id":"fake.one","ref":{"type":"ref/other","name":"greet"},"argument":{"name":"who","value":"A"}}`,
	} {
		_, err := f.call(t, protocol.MethodSourcesComplete, params)
		invalidParams(t, err)
	}
}
