package catalog_test

import (
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/catalog"
)

func TestContentKeyIsTheCatalogNotWhoseOrWhen(t *testing.T) {
	is := is.New(t)
	tool := func(schema catalog.Object) catalog.Tool {
		return catalog.Tool{Name: "echo", InputSchema: catalog.Object{"type": "object"}, OutputSchema: schema}
	}
	key := func(s catalog.Snapshot) string {
		k, err := catalog.ContentKey(s)
		is.NoErr(err)
		return k
	}
	a := key(catalog.Snapshot{ConnectionID: "a.one", FetchedAtEpochMs: 1, Tools: []catalog.Tool{tool(nil)}})
	is.Equal(a, key(catalog.Snapshot{ConnectionID: "b.two", FetchedAtEpochMs: 2, MaxAgeSeconds: 9, Tools: []catalog.Tool{tool(nil)}}))   // whose and when do not count
	is.True(a != key(catalog.Snapshot{ConnectionID: "a.one", Tools: []catalog.Tool{tool(catalog.Object{})}}))                            // an empty output schema is not none
	is.True(a != key(catalog.Snapshot{ConnectionID: "a.one", Tools: []catalog.Tool{tool(nil)}, Prompts: []catalog.Prompt{{Name: "p"}}})) // prompts count
	is.True(strings.HasPrefix(a, "sha256:"))
}
