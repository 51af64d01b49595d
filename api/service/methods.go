package service

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/mcpflow/mcpflow/api/access"
	"github.com/mcpflow/mcpflow/api/rpc"
)

// Methods returns the method table: each namespace of the API registers
// its own part in its own file (runs.go has workflow.runs.*, and so on),
// and declares each method's scope there.
func (s *Service) Methods() map[string]rpc.Method {
	table := map[string]rpc.Method{}
	for _, part := range []map[string]rpc.Method{
		s.healthMethods(),
		s.capabilityMethods(),
		s.workspaceMethods(),
		s.draftMethods(),
		s.artifactMethods(),
		s.deploymentMethods(),
		s.runMethods(),
		s.sourceMethods(),
		s.connectionMethods(),
		s.registryMethods(),
		s.authMethods(),
		s.webhookMethods(),
		s.scheduleMethods(),
		s.secretMethods(),
		s.eventMethods(),
		s.accessMethods(),
	} {
		for name, m := range part {
			if _, dup := table[name]; dup {
				panic("service: method " + name + " registered twice")
			}
			table[name] = m
		}
	}
	s.suggesting(table)
	return table
}

// The scopes of the table's entries: forRead for what only reads (list,
// inspect, trace, validate, follow), forRun for what starts, resumes,
// cancels or calls, forAuthor for what changes workspaces, artifacts and
// deployments, forAdmin for the workflow.admin namespace.
func forRead[P, R any](fn func(context.Context, P) (R, error)) rpc.Method {
	return rpc.Method{Scope: access.Read, Handler: handle(fn)}
}

func forRun[P, R any](fn func(context.Context, P) (R, error)) rpc.Method {
	return rpc.Method{Scope: access.Run, Handler: handle(fn)}
}

func forAuthor[P, R any](fn func(context.Context, P) (R, error)) rpc.Method {
	return rpc.Method{Scope: access.Author, Handler: handle(fn)}
}

func forAdmin[P, R any](fn func(context.Context, P) (R, error)) rpc.Method {
	return rpc.Method{Scope: access.Admin, Handler: handle(fn)}
}

// handle adapts a typed method to a Handler. Params decode strictly:
// unknown keys are invalid params even where no contract schema applies.
func handle[P, R any](fn func(context.Context, P) (R, error)) rpc.Handler {
	return func(ctx context.Context, raw json.RawMessage) (any, error) {
		var p P
		if len(raw) > 0 && !bytes.Equal(raw, []byte("null")) {
			dec := json.NewDecoder(bytes.NewReader(raw))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&p); err != nil {
				return nil, invalidParams("invalid params: %v", err)
			}
		}
		return fn(ctx, p)
	}
}
