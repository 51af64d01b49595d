package edge

import (
	"context"
	"errors"
	"log/slog"
	"runtime/debug"
	"sync"

	"github.com/mcpflow/mcpflow/api/jsonrpc"
)

// dispatch answers one request: method lookup, contract check of params,
// the handler under the request deadline, and error mapping. It returns
// false for a notification, which is run but never answered.
// A panicking handler is answered with -32603 and logged, so it cannot take
// the process down.
func (s *Server) dispatch(ctx context.Context, req jsonrpc.Request) (resp jsonrpc.Response, answer bool) {
	defer func() {
		if v := recover(); v != nil {
			slog.Error("method panicked", "method", req.Method, "panic", v, "stack", string(debug.Stack()))
			resp, answer = jsonrpc.NewError(req.ID, jsonrpc.Errorf(jsonrpc.InternalError, "%s failed", req.Method)), !req.IsNotification()
		}
	}()
	return s.call(ctx, req), !req.IsNotification()
}

func (s *Server) call(ctx context.Context, req jsonrpc.Request) jsonrpc.Response {
	handler, ok := s.methods[req.Method]
	if !ok {
		return jsonrpc.NewError(req.ID, jsonrpc.Errorf(jsonrpc.MethodNotFound, "unknown method %q", req.Method))
	}
	if s.contract.Has(req.Method) {
		if err := s.contract.ValidateParams(req.Method, req.Params); err != nil {
			return jsonrpc.NewError(req.ID, jsonrpc.Errorf(jsonrpc.InvalidParams, "%v", err))
		}
	} else if len(req.Params) > 0 && req.Params[0] != '{' {
		return jsonrpc.NewError(req.ID, jsonrpc.Errorf(jsonrpc.InvalidParams, "params must be an object"))
	}
	ctx, cancel := context.WithTimeout(ctx, s.opts.RequestTimeout)
	defer cancel()
	result, err := handler(ctx, req.Params)
	if err != nil {
		return jsonrpc.NewError(req.ID, s.mapError(ctx, req.Method, err))
	}
	resp, err := jsonrpc.NewResult(req.ID, result)
	if err != nil {
		return jsonrpc.NewError(req.ID, s.mapError(ctx, req.Method, err))
	}
	return resp
}

// mapError turns a handler error into a JSON-RPC error. Protocol and domain
// errors pass as they are; a deadline is a timeout; anything else is an
// internal error, logged here and reported without internals.
func (s *Server) mapError(ctx context.Context, method string, err error) *jsonrpc.Error {
	if e, ok := errors.AsType[*jsonrpc.Error](err); ok {
		return e
	}
	if errors.Is(err, context.Canceled) && s.base.Err() != nil {
		return jsonrpc.Errorf(jsonrpc.Overloaded, "%s was cut short: mcpflow is shutting down", method)
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return jsonrpc.Errorf(jsonrpc.RequestTimeout, "%s did not finish within %s", method, s.opts.RequestTimeout)
	}
	slog.Error("method failed", "method", method, "err", err)
	return jsonrpc.Errorf(jsonrpc.InternalError, "%s failed", method)
}

// overloaded answers a request that found no free slot.
func (s *Server) overloaded(id jsonrpc.ID) jsonrpc.Response {
	return jsonrpc.NewError(id, jsonrpc.Errorf(jsonrpc.Overloaded, "more than %d requests in flight on this connection", s.opts.MaxInFlight))
}

// slots bounds the requests in flight: one token per request.
type slots chan struct{}

// acquire takes a slot if one is free; it never waits.
func (s slots) acquire() bool {
	select {
	case s <- struct{}{}:
		return true
	default:
		return false
	}
}

// release frees a slot taken by acquire.
func (s slots) release() { <-s }

// answerFrame runs every request of a decoded frame concurrently and
// collects the responses to send, in frame order: rejected entries first.
func (s *Server) answerFrame(ctx context.Context, f jsonrpc.Frame, inFlight slots) []jsonrpc.Response {
	responses := append([]jsonrpc.Response(nil), f.Rejected...)
	answers := make([]*jsonrpc.Response, len(f.Requests))
	var wg sync.WaitGroup
	for i, req := range f.Requests {
		if !inFlight.acquire() {
			if !req.IsNotification() {
				r := s.overloaded(req.ID)
				answers[i] = &r
			}
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer inFlight.release()
			if r, ok := s.dispatch(ctx, req); ok {
				answers[i] = &r
			}
		}()
	}
	wg.Wait()
	for _, a := range answers {
		if a != nil {
			responses = append(responses, *a)
		}
	}
	return responses
}
