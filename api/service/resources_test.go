package service_test

import (
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/api/protocol"
	"github.com/mcpflow/mcpflow/fakes"
)

// The resources of a connection exposed with "resources": true are its
// catalog's, and a read goes through its session to the upstream; a
// connection exposed for its tools only, or not at all, is a KeyError.
func TestAnExposedConnectionsResourcesAreListedAndRead(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	f.svc.MCP = &config.MCP{Expose: []config.MCPExpose{{Connection: "fake.one", Resources: true}, {Connection: "web.main"}}}

	listed := mustCall[protocol.SourceResourcesResult](t, f, protocol.MethodSourcesResources, `{"source_id":"fake.one"}`)
	is.Equal(len(listed.Resources), 1)
	is.Equal(listed.Resources[0].URI, "fake://readme")
	is.Equal(listed.Resources[0].Name, "readme")
	is.Equal(len(listed.ResourceTemplates), 0)

	read := mustCall[protocol.ReadSourceResourceResult](t, f, protocol.MethodSourcesReadResource, `{"source_id":"fake.one","uri":"`+fakes.GreetingURI+`"}`)
	is.Equal(len(read.Contents), 1)
	is.Equal(read.Contents[0]["text"], fakes.Greeting) // the upstream's contents, through the session

	for _, params := range []string{`{"source_id":"web.main"}`, `{"source_id":"fake.off"}`} {
		_, err := f.call(t, protocol.MethodSourcesResources, params)
		domainError(t, err, "KeyError") // tools only, or not exposed
	}
	_, err := f.call(t, protocol.MethodSourcesReadResource, `{"source_id":"web.main","uri":"`+fakes.GreetingURI+`"}`)
	domainError(t, err, "KeyError")
}
