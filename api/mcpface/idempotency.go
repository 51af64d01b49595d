package mcpface

import (
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// IdempotencyKeyMeta is the _meta key of a tools/call that carries an
// idempotency key (docs/mcp.md, "Idempotent calls"): the face passes it
// to workflow.runs.start as idempotency_key, so that a client that calls
// a workflow's tool again with the same key, the same arguments, gets
// the first call's run instead of a second run.
const IdempotencyKeyMeta = "io.mcpflow/idempotency_key"

// idempotencyKey is the idempotency key req carries in its _meta, or nil;
// a key that is not a non-empty string is an error the client is told.
func idempotencyKey(req *mcp.CallToolRequest) (*string, error) {
	v, ok := req.Params.GetMeta()[IdempotencyKeyMeta]
	if !ok {
		return nil, nil
	}
	key, _ := v.(string)
	if key == "" {
		return nil, fmt.Errorf("_meta %q must be a non-empty string", IdempotencyKeyMeta)
	}
	return &key, nil
}
