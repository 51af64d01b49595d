package catalog_test

import (
	"reflect"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/catalog"
)

// Tools that declare no schema get the default ones, one copy shared by
// all of them, whatever their source.
func TestToolsWithoutSchemasShareTheDefaultOnes(t *testing.T) {
	is := is.New(t)
	a := catalog.Tool{Name: "fetch"}.Capability("a.default")
	b := catalog.Tool{Name: "other"}.Capability("b.default")
	is.Equal(a.InputSchema, catalog.Object{"type": "object"})
	is.Equal(a.OutputSchema, catalog.Object{"type": "object", "properties": catalog.Object{"content": catalog.Object{"type": "array"}}})
	is.Equal(reflect.ValueOf(a.InputSchema).Pointer(), reflect.ValueOf(b.InputSchema).Pointer())   // one input schema
	is.Equal(reflect.ValueOf(a.OutputSchema).Pointer(), reflect.ValueOf(b.OutputSchema).Pointer()) // one output schema
	allocs := testing.AllocsPerRun(100, func() { catalog.Tool{Name: "fetch"}.Capability("a.default") })
	is.True(allocs <= 2) // the name and the outcomes, no schema
}
