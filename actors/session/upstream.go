package session

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/metrics"
	"github.com/mcpflow/mcpflow/actors/reply"
)

// JSON-RPC error codes mcpflow answers a server's request with: one its
// client block refuses, one it cannot hand to a run, and a sampling
// request its answerer declined (MCP's "user rejected sampling request").
// A refusal is not -32601 (method not found), as a client that lacks the
// method would answer: go-sdk replaces the message of a -32601 error with
// "method not found", and the server would never read the refusal's
// text, which says how to take the request (docs/decisions.md).
const (
	codeRefused  = -32000
	codeUnhanded = -32603
	codeDeclined = -1
)

// ask is a request the server sent during a call (elicitation/create,
// sampling/createMessage), waiting in go-sdk's goroutine for its answer.
// The actor hands it to the run that made the call and delivers the
// answer on answer, which holds one: the actor never blocks on it.
type ask struct {
	kind   string
	params json.RawMessage
	answer chan askAnswer
	// Set by the actor once handed: its request id, the running call it
	// belongs to (a key of running) and who was handed it.
	id  string
	run uint64
	to  reply.Address
}

type askAnswer struct {
	result json.RawMessage
	err    error
}

// Internal messages of the requests the server sends.
type (
	// asked: the server sent q on attempt's session; or, when pinned,
	// on the stream of running call run's own request (a task's
	// tasks/result over streamable HTTP), which q belongs to.
	asked struct {
		attempt int
		q       *ask
		pinned  bool
		run     uint64
	}
	// askGone: q's handler stopped waiting (the server cancelled the
	// request, or its session ended).
	askGone struct {
		q      *ask
		reason string
	}
)

// clientCapabilities are what newClient declares for block: roots (with
// listChanged) always, so that roots/list answers the configured roots;
// elicitation (form and URL) unless refused; sampling unless refused.
func clientCapabilities(block *config.Client) *mcp.ClientCapabilities {
	caps := &mcp.ClientCapabilities{RootsV2: &mcp.RootCapabilities{ListChanged: true}}
	if block.ElicitationPolicy() != config.PolicyRefuse {
		caps.Elicitation = &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}, URL: &mcp.URLElicitationCapabilities{}}
	}
	if block.SamplingPolicy() != config.PolicyRefuse {
		caps.Sampling = &mcp.SamplingCapabilities{}
	}
	return caps
}

// answerAsClient sets opts up to answer the server's requests as the
// connection's client block says: the requests it takes are handed to the
// actor (asker), the ones it refuses answered, by refuser, with an error
// that says how to take them.
func (a *Actor) answerAsClient(attempt int, opts *mcp.ClientOptions) mcp.Middleware {
	block := a.conn.Client
	opts.Capabilities = clientCapabilities(block)
	if block.ElicitationPolicy() != config.PolicyRefuse {
		h := a.asker(asked{attempt: attempt}, UpstreamElicitation)
		opts.ElicitationHandler = func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			var out mcp.ElicitResult
			return &out, decodeAnswer(ctx, h, UpstreamElicitation, req.Params, &out)
		}
	}
	if block.SamplingPolicy() != config.PolicyRefuse {
		h := a.asker(asked{attempt: attempt}, UpstreamSampling)
		opts.CreateMessageHandler = func(ctx context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			var out mcp.CreateMessageResult
			return &out, decodeAnswer(ctx, h, UpstreamSampling, req.Params, &out)
		}
	}
	refusal := refuser(block, a.conn.ID, a.opts.Metrics)
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if _, err := refusal(method); err != nil {
				return nil, err
			}
			return next(ctx, method, req)
		}
	}
}

// askMethods are the kinds of the server's requests mcpflow hands to a
// run, by method.
var askMethods = map[string]string{"elicitation/create": UpstreamElicitation, "sampling/createMessage": UpstreamSampling}

// refuser returns the refusal of a connection's server's requests under
// client block block: the kind of a request of method, and, when block
// refuses it, the error it is answered with, which says how to take it
// (counted); kind "" for another method. It reads only what it was
// given, so go-sdk's goroutines may call it while the actor changes its
// connection's block (setClient, which applies at the next session).
func refuser(block *config.Client, connID string, m *metrics.Metrics) func(method string) (string, error) {
	return func(method string) (string, error) {
		kind := askMethods[method]
		switch {
		case kind == UpstreamElicitation && block.ElicitationPolicy() == config.PolicyRefuse,
			kind == UpstreamSampling && block.SamplingPolicy() == config.PolicyRefuse:
			m.UpstreamRequest(connID, kind, metrics.UpstreamRefusedPolicy)
			return kind, &jsonrpc.Error{Code: codeRefused, Message: refusal(kind, connID)}
		}
		return kind, nil
	}
}

// refusal says why mcpflow refuses a request of kind on source connID
// (its client block's policy), and how to have it taken.
func refusal(kind, connID string) string {
	if kind == UpstreamElicitation {
		return fmt.Sprintf("mcpflow refuses elicitation on source %q: its client block says \"elicitation\": \"refuse\"; set \"client\": {\"elicitation\": \"interrupt\"} to have the run interrupted with the request and answered by its resume", connID)
	}
	return fmt.Sprintf("mcpflow refuses sampling on source %q (its client block's \"sampling\" is \"refuse\", the default); set \"client\": {\"sampling\": \"interrupt\"} to have the run interrupted with the request and answered by its resume, or \"client\" to forward it to the MCP client that started the run", connID)
}

// decodeAnswer hands params to h and decodes its answer into out.
func decodeAnswer(ctx context.Context, h func(context.Context, json.RawMessage) (json.RawMessage, error), kind string, params, out any) error {
	raw, err := json.Marshal(params)
	if err != nil {
		return fmt.Errorf("encode the %s request: %w", kind, err)
	}
	result, err := h(ctx, raw)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(result, out); err != nil {
		return &jsonrpc.Error{Code: codeUnhanded, Message: fmt.Sprintf("the answer to the %s request is not a valid result: %v", kind, err)}
	}
	return nil
}

// asker returns the handler of kind's requests where to says (a
// session's attempt, or a running call's own stream): it hands the
// request to the actor and waits for its answer, the server's cancel of
// the request, or the actor's end.
func (a *Actor) asker(to asked, kind string) func(ctx context.Context, params json.RawMessage) (json.RawMessage, error) {
	engine, self, life := a.engine, a.self, a.ctx
	return func(ctx context.Context, params json.RawMessage) (json.RawMessage, error) {
		q := &ask{kind: kind, params: params, answer: make(chan askAnswer, 1)}
		m := to
		m.q = q
		engine.Send(self, m)
		select {
		case got := <-q.answer:
			return got.result, got.err
		case <-ctx.Done():
			engine.Send(self, askGone{q: q, reason: "the server cancelled its " + kind + " request"})
			return nil, ctx.Err()
		case <-life.Done():
			return nil, &jsonrpc.Error{Code: codeUnhanded, Message: "mcpflow closed the session before the " + kind + " request was answered"}
		}
	}
}

// callAsker is the handler of the server's requests on the stream of
// running call run's own request (tasklink.go): a request the client
// block takes is handed to that call's run, whatever else is in flight;
// one it refuses, or of another method, is answered with an error.
func (a *Actor) callAsker(run uint64) func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	handlers := map[string]func(context.Context, json.RawMessage) (json.RawMessage, error){}
	for method, kind := range askMethods {
		handlers[method] = a.asker(asked{pinned: true, run: run}, kind)
	}
	refusal := refuser(a.conn.Client, a.conn.ID, a.opts.Metrics)
	return func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
		kind, err := refusal(method)
		switch {
		case err != nil:
			return nil, err
		case kind == "":
			return nil, &jsonrpc.Error{Code: codeRefused, Message: fmt.Sprintf("mcpflow does not answer %s as a client", method)}
		}
		return handlers[method](ctx, params)
	}
}

// onAsked hands a request the server sent to the run whose call it
// belongs to: the one call in flight on its session. With none, or
// several (nothing in the request says which one asked), it is refused,
// and counted.
func (a *Actor) onAsked(m asked) {
	q := m.q
	refuse := func(outcome, why string) {
		a.opts.Metrics.UpstreamRequest(a.conn.ID, q.kind, outcome)
		slog.Warn("upstream request refused", "connection", a.conn.ID, "kind", q.kind, "why", why)
		q.answer <- askAnswer{err: &jsonrpc.Error{Code: codeUnhanded, Message: why}}
	}
	if m.pinned {
		// On the call's own stream: the call is the one that asked.
		if f := a.running[m.run]; f == nil || f.w.call == nil {
			refuse(metrics.UpstreamRefusedNoCall, "the call whose stream this "+q.kind+" request came on has ended")
		} else {
			a.handAsk(q, m.run, f)
		}
		return
	}
	if m.attempt != a.attempt || a.session == nil {
		refuse(metrics.UpstreamRefusedNoCall, "mcpflow let go of the session this "+q.kind+" request came on")
		return
	}
	var calls []uint64
	for run, f := range a.running {
		if f.w.call != nil && f.attempt == m.attempt {
			calls = append(calls, run)
		}
	}
	switch len(calls) {
	case 0:
		refuse(metrics.UpstreamRefusedNoCall, fmt.Sprintf(
			"mcpflow answers %s requests only during a tool call of a run, and no call is in flight on source %q's session", q.kind, a.conn.ID))
		return
	case 1:
	default:
		refuse(metrics.UpstreamRefusedAmbiguous, fmt.Sprintf(
			"mcpflow cannot tell which of the %d tool calls in flight on source %q's session sent this %s request, so it cannot hand it to the run that made the call; bind the source with \"session\": \"run\" to give each run a session of its own", len(calls), a.conn.ID, q.kind))
		return
	}
	a.handAsk(q, calls[0], a.running[calls[0]])
}

// handAsk hands q to the run that made running call run, f; a sampling
// request the source forwards to the MCP client that started the run
// (policy client) is refused when no such client did.
func (a *Actor) handAsk(q *ask, run uint64, f *inflight) {
	policy := config.PolicyInterrupt
	if q.kind == UpstreamSampling {
		policy = a.conn.Client.SamplingPolicy()
	}
	if policy == config.PolicyClient && !f.w.call.ClientSampling {
		why := fmt.Sprintf("mcpflow forwards sampling on source %q to the MCP client that started the run (its client block says \"sampling\": \"client\"), and this run was not started by an MCP client that declared sampling; set \"client\": {\"sampling\": \"interrupt\"} to have the run interrupted with the request instead", a.conn.ID)
		a.opts.Metrics.UpstreamRequest(a.conn.ID, q.kind, metrics.UpstreamRefusedNoClient)
		slog.Warn("upstream request refused", "connection", a.conn.ID, "kind", q.kind, "why", why)
		q.answer <- askAnswer{err: &jsonrpc.Error{Code: codeUnhanded, Message: why}}
		return
	}
	a.nextAsk++
	q.id = "g" + strconv.FormatInt(f.gen, 10) + "." + strconv.FormatUint(a.nextAsk, 10)
	q.run, q.to = run, f.w.call.Reply
	a.asks[q.id] = q
	a.opts.Metrics.UpstreamRequest(a.conn.ID, q.kind, metrics.UpstreamInterrupted)
	reply.Send(a.engine, q.to, UpstreamRequest{
		CorrelationID: q.to.Correlation, RequestID: q.id, Connection: a.conn.ID, Scope: f.w.call.Scope,
		Kind: q.kind, Params: q.params, Policy: policy, Generation: f.gen, Deadline: f.w.call.Deadline,
	})
}

// onAnswerUpstream delivers the answer to a request the actor handed out;
// one to a request that is gone is dropped.
func (a *Actor) onAnswerUpstream(m AnswerUpstream) {
	q := a.asks[m.RequestID]
	if q == nil {
		return
	}
	delete(a.asks, m.RequestID)
	if m.Error != "" {
		code := int64(codeDeclined)
		if q.kind == UpstreamElicitation {
			code = codeUnhanded
		}
		q.answer <- askAnswer{err: &jsonrpc.Error{Code: code, Message: m.Error}}
		return
	}
	q.answer <- askAnswer{result: m.Result}
}

// onAskGone forgets a request whose handler stopped waiting, and tells
// whoever was handed it.
func (a *Actor) onAskGone(m askGone) {
	if q := a.asks[m.q.id]; q == nil || q != m.q {
		return
	}
	delete(a.asks, m.q.id)
	a.withdrawn(m.q, m.reason)
}

// withdrawAsks answers the requests handed out for running call run,
// which ended or is being cancelled: an elicitation is answered cancel, a
// sampling request an error; whoever was handed them is told.
func (a *Actor) withdrawAsks(run uint64, reason string) {
	for id, q := range a.asks {
		if q.run != run {
			continue
		}
		delete(a.asks, id)
		if q.kind == UpstreamElicitation {
			q.answer <- askAnswer{result: json.RawMessage(`{"action":"cancel"}`)}
		} else {
			q.answer <- askAnswer{err: &jsonrpc.Error{Code: codeUnhanded, Message: "the call that asked was " + reason}}
		}
		a.withdrawn(q, "the call that asked was "+reason)
	}
}

// withdrawn tells whoever was handed q that it needs no answer any more.
func (a *Actor) withdrawn(q *ask, reason string) {
	reply.Send(a.engine, q.to, UpstreamWithdrawn{CorrelationID: q.to.Correlation, RequestID: q.id, Reason: reason})
}

// setClient takes a changed client block: kept for the next session;
// roots that changed are told to the open session's client, which sends
// notifications/roots/list_changed.
func (a *Actor) setClient(m SetClient) {
	old := a.conn.Client.RootList()
	a.conn.Client = m.Client
	if a.client != nil {
		syncRoots(a.client, old, m.Client.RootList())
	}
}

// syncRoots changes client's roots from old to roots.
func syncRoots(client *mcp.Client, old, roots []config.Root) {
	var gone []string
	for _, r := range old {
		if !containsRoot(roots, r) {
			gone = append(gone, r.URI)
		}
	}
	var added []*mcp.Root
	for _, r := range roots {
		if !containsRoot(old, r) {
			added = append(added, &mcp.Root{URI: r.URI, Name: r.Name})
		}
	}
	if len(gone) > 0 {
		client.RemoveRoots(gone...)
	}
	client.AddRoots(added...)
}

func containsRoot(roots []config.Root, r config.Root) bool {
	for _, x := range roots {
		if x == r {
			return true
		}
	}
	return false
}

// setLogLevel asks a session's server, if it declares logging, for
// level, before the session takes any call, within timeout; a refusal is
// logged (the session goes on at the server's own level). A session of
// the stateless era has no level to set: its server keeps nothing
// between requests, and refuses a logging/setLevel outside any.
func setLogLevel(ctx context.Context, cs *mcp.ClientSession, conn config.Connection, level string, timeout time.Duration) {
	init := cs.InitializeResult()
	if init == nil || init.Capabilities == nil || init.Capabilities.Logging == nil || init.ProtocolVersion >= statelessEra {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: mcp.LoggingLevel(level)}); err != nil {
		slog.Warn("logging/setLevel refused", "connection", conn.ID, "level", level, "err", Redact(conn, err.Error()))
	}
}
