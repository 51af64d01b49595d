package mcpface

import (
	"context"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	mfrpc "github.com/mcpflow/mcpflow/api/jsonrpc"
	"github.com/mcpflow/mcpflow/api/protocol"
)

// Gate is the method table's access check for one principal: Permits is
// nil where the principal may call method, else the refusal its call
// gets (-32003 naming what it lacks). On /mcp it is the edge's own check
// (edge.Local); for `mcpflow mcp`, the methods workflow.access.whoami
// names, which the server reads from the same table.
//
// Each tool of the face names the methods it calls. A tool is listed only
// where every one of them is permitted (for an authoring tool of several
// operations, every one of one operation's), and a call of a tool the face
// knows but does not list is answered with the refusal of its first
// method not permitted: what is listed and what may be called are one
// rule, the table's, never a second list of scopes.
type Gate interface {
	Permits(method string) error
}

// Callable is the Gate of a face that reaches the server as a client
// (`mcpflow mcp`): the methods the server said the token may call
// (workflow.access.whoami). The server still checks every call.
type Callable struct {
	Token   string   // the token's name
	Methods []string // the methods it may call
}

// Permits is nil where method is among c.Methods.
func (c Callable) Permits(method string) error {
	if slices.Contains(c.Methods, method) {
		return nil
	}
	return mfrpc.Errorf(mfrpc.Forbidden, "forbidden: token %q may not call %s (workflow.access.whoami lists the methods it may)", c.Token, method)
}

// The methods each kind of tool calls.
var (
	// A workflow tool (and mcpflow_run_workflow) starts a run and follows
	// it; it answers an interrupt of the 2026 era with a resume, and
	// cancels the run when the client cancels the call.
	workflowMethods = []string{protocol.MethodRunsStart, protocol.MethodRunsSubscribe, protocol.MethodRunsInspect,
		protocol.MethodRunsResume, protocol.MethodRunsCancel}
	// mcpflow_resume_run resumes a run and follows it as a workflow tool
	// does.
	resumeMethods = []string{protocol.MethodRunsResume, protocol.MethodRunsSubscribe, protocol.MethodRunsInspect,
		protocol.MethodRunsCancel}
	getMethods    = []string{protocol.MethodRunsInspect}
	cancelMethods = []string{protocol.MethodRunsCancel}
	// mcpflow_find_workflow lists deployments, as deployments.list does.
	findMethods = []string{protocol.MethodDeploymentsList}
)

// refusal is nil where s's principal may call every one of methods, else
// the refusal of the first it may not.
func (s *served) refusal(methods []string) error {
	for _, m := range methods {
		if err := s.gate.Permits(m); err != nil {
			return err
		}
	}
	return nil
}

// refusalOf is nil where s's principal may call tool e: every one of its
// methods, or, for a tool of several operations, every method of one of
// them (an operation it may not call is then refused by the method table
// itself); else the refusal of the first method it may not call.
func (s *served) refusalOf(e toolEntry) error {
	if len(e.anyOf) == 0 {
		return s.refusal(e.methods)
	}
	var first error
	for _, methods := range e.anyOf {
		err := s.refusal(methods)
		if err == nil {
			return nil
		}
		if first == nil {
			first = err
		}
	}
	return first
}

// refuseUnlisted answers a call of a tool the face knows but does not
// offer s's principal with the refusal of a method it would call
// (-32003), as the edge would answer that method; any other call goes
// on (an unknown tool is go-sdk's to answer).
func (f *Face) refuseUnlisted(s *served) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			call, ok := req.(*mcp.CallToolRequest)
			if !ok || method != "tools/call" || call.Params == nil {
				return next(ctx, method, req)
			}
			if err := f.unlisted(s, call.Params.Name); err != nil {
				return nil, sdkError(err)
			}
			return next(ctx, method, req)
		}
	}
}

// unlisted is the refusal of a call of tool name where the face knows
// the tool and does not offer it to s's principal for want of a method;
// nil otherwise. It takes f.mu.
func (f *Face) unlisted(s *served, name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, offered := s.offered[name]; offered {
		return nil
	}
	for _, e := range f.candidates(s) {
		if e.tool.Name == name {
			return s.refusalOf(e)
		}
	}
	return nil
}
