package edge

import (
	"context"
	"errors"
	"log/slog"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpflow/mcpflow/api/access"
	"github.com/mcpflow/mcpflow/api/contract"
	"github.com/mcpflow/mcpflow/api/jsonrpc"
)

// dispatch answers one request: method lookup, the caller's scope,
// contract check of params, the method's own bound on calls at once, the handler under
// the request's deadline, and error mapping. It returns false for a notification, which is run but
// never answered. A panicking handler is answered with -32603 and logged,
// so it cannot take the process down.
func (s *Server) dispatch(ctx context.Context, req jsonrpc.Request, deadline time.Time, caller access.Principal) (resp jsonrpc.Response, answer bool) {
	defer func() { s.countRequest(req.Method, resp) }() // after the recover below
	defer func() {
		if v := recover(); v != nil {
			slog.Error("method panicked", "method", req.Method, "panic", v, "stack", string(debug.Stack()))
			resp, answer = jsonrpc.NewError(req.ID, jsonrpc.Errorf(jsonrpc.InternalError, "%s failed", req.Method)), !req.IsNotification()
		}
	}()
	return s.call(ctx, req, deadline, caller), !req.IsNotification()
}

func (s *Server) call(ctx context.Context, req jsonrpc.Request, deadline time.Time, caller access.Principal) jsonrpc.Response {
	method, refused := s.permit(caller, req.Method)
	if refused != nil {
		return jsonrpc.NewError(req.ID, refused)
	}
	if s.contract.Has(req.Method) {
		if err := s.contract.ValidateParams(req.Method, req.Params); err != nil {
			return jsonrpc.NewError(req.ID, s.paramsError(req.Method, err))
		}
	} else if len(req.Params) > 0 && req.Params[0] != '{' {
		return jsonrpc.NewError(req.ID, jsonrpc.InvalidParamsAt("params", "must be an object"))
	}
	if method.places != nil {
		if !method.places.tryAcquire() {
			return jsonrpc.NewError(req.ID, method.overloaded(req.Method))
		}
		defer method.places.release()
	}
	ctx, cancel := context.WithDeadline(access.WithPrincipal(ctx, caller), deadline)
	defer cancel()
	result, err := method.Handler(ctx, req.Params)
	if err != nil {
		return jsonrpc.NewError(req.ID, s.mapError(ctx, req.Method, err))
	}
	resp, err := jsonrpc.NewResult(req.ID, result)
	if err != nil {
		return jsonrpc.NewError(req.ID, s.mapError(ctx, req.Method, err))
	}
	return resp
}

// permit looks name up in the table and checks that caller holds its
// scope: the one access check of every call, and of what a face offers
// (Local.Permits). A refusal is -32601 or -32003.
func (s *Server) permit(caller access.Principal, name string) (served, *jsonrpc.Error) {
	method, ok := s.methods[name]
	if !ok {
		return served{}, jsonrpc.Errorf(jsonrpc.MethodNotFound, "unknown method %q", name)
	}
	if !caller.Allows(method.Scope) {
		return served{}, access.Forbidden(caller, name, method.Scope)
	}
	return method, nil
}

// paramsError maps a failed contract check: a *contract.ValidationError
// is a -32602 with its path and reason; anything else is a broken
// manifest, logged and reported as an internal error.
func (s *Server) paramsError(method string, err error) *jsonrpc.Error {
	if ve, ok := errors.AsType[*contract.ValidationError](err); ok {
		return jsonrpc.InvalidParamsAt(ve.Path, ve.Reason)
	}
	slog.Error("check params", "method", method, "err", err)
	return jsonrpc.Errorf(jsonrpc.InternalError, "%s failed", method)
}

// mapError turns a handler error into a JSON-RPC error. Protocol and domain
// errors pass as they are (a -32602 in its one shape, see
// jsonrpc.ParamsDetail); a deadline is a timeout; anything else is an
// internal error, logged here and reported without internals.
func (s *Server) mapError(ctx context.Context, method string, err error) *jsonrpc.Error {
	if e, ok := errors.AsType[*jsonrpc.Error](err); ok {
		return jsonrpc.NormalizeInvalidParams(e)
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

// noSlot answers a request that found no in-flight slot free before its
// deadline; scope says whose slots ("on this connection").
func (s *Server) noSlot(id jsonrpc.ID, scope string) jsonrpc.Response {
	return jsonrpc.NewError(id, jsonrpc.Errorf(jsonrpc.Overloaded,
		"no in-flight slot freed within %s: %d requests in flight %s", s.opts.RequestTimeout, s.opts.MaxInFlight, scope))
}

// delivery receives the reply to a frame, exactly once: nil when nothing
// is to be sent. reserved is what the exchange counted through reserve for
// its entries.
type delivery func(reply []byte, reserved int)

// frameJob says how to answer one frame.
type frameJob struct {
	ctx      context.Context  // the connection's or the POST's
	deadline time.Time        // every request's, from the frame's arrival
	inFlight slots            // the connection's or the client's
	scope    string           // whose slots, for the -32000 ("on this connection")
	caller   access.Principal // who sends the frame: each entry is authorized on its own
	wg       *sync.WaitGroup  // counts the request goroutines
	reserve  func(int)        // counts encoded bytes as they are produced; nil: not counted
	deliver  delivery
	// prepare, when set, gives each request of a method that pushes
	// (rpc.Method.Pushes) its handler's context and a release, called
	// once the frame's reply is delivered (or known to be none).
	prepare func(context.Context) (context.Context, func())
}

// exchange is one frame being answered. Each entry's response is encoded
// as soon as it is ready; whoever finishes last (the reader or an entry's
// goroutine) joins them, in frame order, into the reply.
type exchange struct {
	job      frameJob
	batch    bool
	replies  [][]byte // per entry; nil for none (a notification)
	releases []func() // of prepare; touched by the reader only, before the last finish
	pending  atomic.Int64
	reserved atomic.Int64
}

// answer answers the frame f. Rejected entries are answered at once. Each
// request takes an in-flight slot, waiting for one until the deadline
// (then it is answered -32000), and runs in its own goroutine, so at most
// cap(inFlight) run at once for a connection or a client. When the job's
// context ends, requests not yet started are dropped. The reply is
// delivered once every started request has finished.
func (s *Server) answer(job frameJob, f jsonrpc.Frame) {
	x := &exchange{job: job, batch: f.Batch, replies: make([][]byte, len(f.Entries))}
	x.pending.Store(1) // the loop below
	for i, e := range f.Entries {
		if e.Rejected != nil {
			s.countRequest("", *e.Rejected)
			x.set(i, *e.Rejected)
			continue
		}
		req := e.Request
		if err := job.inFlight.acquire(job.ctx, job.deadline); err != nil {
			if job.ctx.Err() != nil {
				break // the connection or request is gone: nothing more starts
			}
			resp := s.noSlot(req.ID, job.scope)
			s.countRequest(req.Method, resp)
			if !req.IsNotification() {
				x.set(i, resp)
			}
			continue
		}
		ctx := job.ctx
		if job.prepare != nil && s.methods[req.Method].Pushes {
			var release func()
			ctx, release = job.prepare(ctx)
			x.releases = append(x.releases, release)
		}
		x.pending.Add(1)
		job.wg.Add(1)
		go func() {
			defer job.wg.Done()
			defer job.inFlight.release()
			if resp, ok := s.dispatch(ctx, req, job.deadline, job.caller); ok {
				x.set(i, resp)
			}
			x.finish()
		}()
	}
	x.finish()
}

// set encodes entry i's response.
func (x *exchange) set(i int, resp jsonrpc.Response) {
	data, err := jsonrpc.EncodeResponse(resp)
	if err != nil {
		slog.Error("encode response", "id", resp.ID.String(), "err", err)
		data, _ = jsonrpc.EncodeResponse(jsonrpc.NewError(resp.ID, nil)) // a bare -32603 always encodes
	}
	x.replies[i] = data
	if x.job.reserve != nil {
		x.job.reserve(len(data))
		x.reserved.Add(int64(len(data)))
	}
}

// finish ends one part of the exchange; the last joins and delivers the
// reply, then releases the requests. The atomic count orders every set
// (and the reader's appends to releases) before the join.
func (x *exchange) finish() {
	if x.pending.Add(-1) != 0 {
		return
	}
	var encoded [][]byte
	for _, r := range x.replies {
		if r != nil {
			encoded = append(encoded, r)
		}
	}
	x.job.deliver(jsonrpc.JoinReply(x.batch, encoded), int(x.reserved.Load()))
	for _, release := range x.releases {
		release()
	}
}
