package edge

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/mcpflow/mcpflow/api/access"
	"github.com/mcpflow/mcpflow/api/jsonrpc"
	"github.com/mcpflow/mcpflow/api/rpc"
)

// Local is the method table as a face in this process reaches it (the MCP
// face at /mcp), acting for one principal. Each call is dispatched as a
// request arriving on /ws is: the principal's scopes, the contract's check
// of params, the method's bound on calls at once, the request deadline and
// the mapping of errors, counted in the edge's metrics. Refusals are
// *jsonrpc.Error.
type Local struct {
	server *Server
	caller access.Principal
}

// Local returns the method table acting for p.
func (s *Server) Local(p access.Principal) Local { return Local{server: s, caller: p} }

// Subscribe calls a subscribe method whose notifications go to deliver,
// from the hub's delivery of that subscription, one at a time, until the
// subscription or ctx ends. The hub starts delivering only once result is
// decoded, as on /ws only once the reply is queued.
func (l Local) Subscribe(ctx context.Context, method string, params, result any, deliver func(method string, params json.RawMessage)) error {
	n := &localNotifier{ctx: ctx, deliver: deliver}
	sctx, release := rpc.WithNotifier(ctx, n)
	defer release()
	return l.Call(sctx, method, params, result)
}

// Permits reports whether the principal may call method: nil, or the
// refusal a call would get (-32003 naming the scope it lacks, -32601 for
// no such method), from the check every call is made with.
func (l Local) Permits(method string) error {
	if _, refused := l.server.permit(l.caller, method); refused != nil {
		return refused
	}
	return nil
}

// Call invokes method with params and decodes its result into result
// (which may be nil).
func (l Local) Call(ctx context.Context, method string, params, result any) error {
	if params == nil {
		params = struct{}{}
	}
	raw, err := json.Marshal(params)
	if err != nil {
		return fmt.Errorf("%s: encode params: %w", method, err)
	}
	deadline := time.Now().Add(l.server.opts.RequestTimeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	req := jsonrpc.Request{JSONRPC: jsonrpc.Version, ID: jsonrpc.IntID(1), Method: method, Params: raw}
	resp, _ := l.server.dispatch(ctx, req, deadline, l.caller)
	if resp.Error != nil {
		return resp.Error
	}
	if result == nil {
		return nil
	}
	if err := json.Unmarshal(resp.Result, result); err != nil {
		return fmt.Errorf("%s: decode result: %w", method, err)
	}
	return nil
}

// localNotifier is a subscription's rpc.Notifier for a Local caller:
// each notification is encoded and handed to deliver, one at a time.
type localNotifier struct {
	ctx     context.Context
	mu      sync.Mutex
	deliver func(method string, params json.RawMessage)
}

func (n *localNotifier) Notify(ctx context.Context, method string, params any) error {
	raw, err := json.Marshal(params)
	if err != nil {
		return fmt.Errorf("encode %s: %w", method, err)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if err := n.ctx.Err(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	n.deliver(method, raw)
	return nil
}

func (n *localNotifier) Done() <-chan struct{} { return n.ctx.Done() }
