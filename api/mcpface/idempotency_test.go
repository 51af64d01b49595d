package mcpface

import (
	"testing"

	"github.com/matryer/is"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestACallsIdempotencyKeyIsReadFromItsMeta: a string in _meta
// "io.mcpflow/idempotency_key" is the key; none is no key; an empty or a
// non-string one is refused.
func TestACallsIdempotencyKeyIsReadFromItsMeta(t *testing.T) {
	is := is.New(t)
	call := func(meta mcp.Meta) *mcp.CallToolRequest {
		return &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Meta: meta, Name: "t"}}
	}
	key, err := idempotencyKey(call(mcp.Meta{IdempotencyKeyMeta: "order-1"}))
	is.NoErr(err)
	is.Equal(*key, "order-1")
	key, err = idempotencyKey(call(nil))
	is.NoErr(err)
	is.True(key == nil) // no key: an ordinary start
	for _, bad := range []any{"", 42.0, map[string]any{}} {
		_, err = idempotencyKey(call(mcp.Meta{IdempotencyKeyMeta: bad}))
		is.True(err != nil) // refused, not ignored
	}
}
