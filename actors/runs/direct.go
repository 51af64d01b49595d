package runs

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mcpflow/mcpflow/actors/audit"
	"github.com/mcpflow/mcpflow/actors/catalog"
	"github.com/mcpflow/mcpflow/actors/reply"
	"github.com/mcpflow/mcpflow/actors/run"
	"github.com/mcpflow/mcpflow/actors/session"
	"github.com/mcpflow/mcpflow/actors/workflow"
	"github.com/mcpflow/mcpflow/actors/workflow/schema"
)

// OutcomeRuntimeError is the outcome of a direct call that failed.
const OutcomeRuntimeError = "runtime_error"

// defaultDirectCallTimeout bounds a direct tool call when the Manager
// has no CallTimeout.
const defaultDirectCallTimeout = time.Minute

// CallNodeSpec calls one node spec with payload outside any run and any
// deployment (workflow.capabilities.call of a tool or a built-in): a
// built-in in place, an MCP tool or a resource read through the
// connection's session actor (the session runs share), and checks the
// result as a run's step would be: the input against the input schema,
// the outcome against the declared ones, the output (but a tool's error
// report) against the output schema. The call leaves no run record; the
// admin event log has its start and end. An error is the call's failure,
// which the caller reports as a result.
func (m *Manager) CallNodeSpec(ctx context.Context, c catalog.Capability, payload workflow.Object) (string, workflow.Object, error) {
	if err := schema.Default.Validate(c.InputSchema, payload); err != nil {
		return "", nil, fmt.Errorf("the payload does not match the input schema: %w", err)
	}
	var (
		outcome string
		output  workflow.Object
		err     error
	)
	if fn, ok := workflow.Builtin(c.Name); ok {
		outcome, output, err = runBuiltin(fn, payload)
	} else if c.Name == workflow.ReadResource {
		outcome, output, err = m.readResourceDirectly(ctx, c, payload)
	} else {
		outcome, output, err = m.callTool(ctx, c, payload)
	}
	if err != nil {
		return "", nil, err
	}
	outcome = cmp.Or(outcome, workflow.OutcomeOK)
	if output == nil {
		output = workflow.Object{}
	}
	if !slices.Contains(c.Outcomes, outcome) {
		return "", nil, fmt.Errorf("outcome %q is not one the capability declares (%s)", outcome, strings.Join(c.Outcomes, ", "))
	}
	if outcome != workflow.OutcomeError {
		if err := schema.Default.Validate(c.OutputSchema, output); err != nil {
			return "", nil, fmt.Errorf("the output does not match the output schema: %w", err)
		}
	}
	return outcome, output, nil
}

// runBuiltin runs a built-in in place; a panic is its failure.
func runBuiltin(fn workflow.BuiltinFunc, input workflow.Object) (outcome string, output workflow.Object, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("built-in panicked: %v", r)
		}
	}()
	return fn(input)
}

// callTool calls an MCP tool through the session actor of its
// connection, as a run's step does, but owned by no run.
func (m *Manager) callTool(ctx context.Context, c catalog.Capability, payload workflow.Object) (string, workflow.Object, error) {
	end := m.begin(ctx, audit.Event{Kind: audit.ToolCallStarted, ConnectionID: c.SourceID, CapabilityID: c.Name,
		Payload: map[string]any{"tool": c.LocalName, "input_keys": workflow.SortedKeys(payload), "direct": true}})
	args, err := json.Marshal(payload)
	if err != nil {
		return "", nil, fmt.Errorf("encode the payload: %w", err)
	}
	deadline := time.Now().Add(m.directCallTimeout())
	call := session.CallTool{Connection: c.SourceID, Tool: c.LocalName, Arguments: args, Deadline: deadline}
	if c.TaskSupport == catalog.TaskRequired {
		call.Task = &session.TaskCall{} // polled to its end within the deadline
	}
	ask := func() (session.ToolResult, workflow.Object, error) {
		w := reply.Expect[session.ToolResult](m.cfg.Replies)
		call.Reply = w.To()
		m.cfg.Supervisor.Lines().Call(m.cfg.Engine, m.cfg.Supervisor.PID(), call)
		return waitSession(ctx, w, deadline)
	}
	r, output, err := ask()
	if errors.Is(err, session.ErrRetired) {
		// Never sent: its session actor stopped first. Asked again, once,
		// of the connection's next one, as a run's step is.
		r, output, err = ask()
	}
	if err == nil && r.Input != nil {
		// Nothing holds a direct call's answer to come: only a run can be
		// interrupted with the server's input requests.
		err = fmt.Errorf("the server answered input_required (%d input requests): a direct capability call cannot be asked for input; call %s in a workflow run, which is interrupted with the requests", len(r.Input.Requests), c.Name)
		r.Outcome = session.OutcomeInputRequired
	}
	completed := map[string]any{"tool": c.LocalName, "outcome": cmp.Or(r.Outcome, OutcomeRuntimeError), "direct": true}
	end(audit.Event{Kind: audit.ToolCallCompleted, ConnectionID: c.SourceID, CapabilityID: c.Name, Payload: completed})
	if err != nil {
		return "", nil, err
	}
	return r.Outcome, output, nil
}

// readResourceDirectly performs wf.source.read_resource outside any
// deployment: its logical source must be an enabled connection's id.
func (m *Manager) readResourceDirectly(ctx context.Context, c catalog.Capability, input workflow.Object) (string, workflow.Object, error) {
	logical, uri := run.ResourceRef(input)
	if !m.isEnabledConnection(logical) {
		return "", nil, fmt.Errorf("unbound logical source %q: outside a deployment, a resource is read from the enabled connection of that id", logical)
	}
	read, err := m.readResource(ctx, c.Name, logical, uri)
	if err != nil {
		return "", nil, err
	}
	out, err := run.ResourceOutput(input, read)
	return workflow.OutcomeOK, out, err
}

// ReadResource reads the resource uri of connection through its shared
// session actor (the session runs share), outside any run: the MCP
// face's gateway mode (workflow.sources.read_resource). Its answer is
// the upstream's ReadResourceResult ({"contents": [...]}). The read's
// start and end go to the admin event log, as a direct read's.
func (m *Manager) ReadResource(ctx context.Context, connection, uri string) (workflow.Object, error) {
	if !m.isEnabledConnection(connection) {
		return nil, fmt.Errorf("connection %q is not an enabled connection", connection)
	}
	return m.readResource(ctx, "", connection, uri)
}

// readResource sends one ReadResource to the session actor of connection
// and waits for its answer, recording its start and end (capability is
// the capability that asked, "" for none).
func (m *Manager) readResource(ctx context.Context, capability, connection, uri string) (workflow.Object, error) {
	end := m.begin(ctx, audit.Event{Kind: audit.ResourceReadStarted, ConnectionID: connection, CapabilityID: capability, Payload: map[string]any{"uri": uri, "direct": true}})
	deadline := time.Now().Add(m.directCallTimeout())
	w := reply.Expect[session.ToolResult](m.cfg.Replies)
	m.cfg.Engine.Send(m.cfg.Supervisor.PID(), session.ReadResource{Connection: connection, URI: uri, Deadline: deadline, Reply: w.To()})
	_, read, err := waitSession(ctx, w, deadline)
	end(audit.Event{Kind: audit.ResourceReadCompleted, ConnectionID: connection, CapabilityID: capability,
		Payload: map[string]any{"uri": uri, "ok": err == nil, "direct": true}})
	return read, err
}

// waitSession waits for a session actor's answer, a little past the
// call's deadline so that the session answers a deadline first, and
// returns its output.
func waitSession(ctx context.Context, w *reply.Expected[session.ToolResult], deadline time.Time) (session.ToolResult, workflow.Object, error) {
	wctx, cancel := context.WithDeadline(ctx, deadline.Add(time.Second))
	defer cancel()
	r, err := w.Wait(wctx)
	if err != nil {
		return session.ToolResult{}, nil, err
	}
	if err := r.Error.Err(); err != nil {
		return r, nil, err
	}
	return r, r.Output, nil
}

func (m *Manager) directCallTimeout() time.Duration {
	if m.cfg.CallTimeout > 0 {
		return m.cfg.CallTimeout
	}
	return defaultDirectCallTimeout
}

// isEnabledConnection reports whether id names an enabled effective
// connection.
func (m *Manager) isEnabledConnection(id string) bool {
	if m.cfg.Connections == nil {
		return false
	}
	c, ok := m.cfg.Connections.Get(id)
	return ok && c.IsEnabled()
}

// begin records start, the start of a direct call or read, in the admin
// event log, and returns what records its end: off the caller's path
// through the Manager's Audit (the two appended together once the end is
// recorded, see audit.Appender), else each on it.
func (m *Manager) begin(ctx context.Context, start audit.Event) (end func(audit.Event)) {
	if m.cfg.Audit != nil {
		span := m.cfg.Audit.Begin(m.now(), start)
		return func(e audit.Event) { span.End(m.now(), e) }
	}
	audit.Record(ctx, m.cfg.Store, m.now(), start)
	return func(e audit.Event) { audit.Record(ctx, m.cfg.Store, m.now(), e) }
}

// GetPrompt renders the prompt name of connection with args through its
// shared session actor, outside any run: the MCP face's gateway mode
// (workflow.sources.get_prompt). Its answer is the upstream's
// GetPromptResult ({"description", "messages": [...]}).
func (m *Manager) GetPrompt(ctx context.Context, connection, name string, args map[string]string) (workflow.Object, error) {
	return m.askShared(ctx, connection, func(deadline time.Time, to reply.Address) any {
		return session.GetPrompt{Connection: connection, Name: name, Arguments: args, Deadline: deadline, Reply: to}
	})
}

// Complete completes an argument of a prompt or a resource template of
// req.Connection through its shared session actor, outside any run: the
// MCP face's gateway mode (workflow.sources.complete). Its answer is the
// upstream's CompleteResult ({"completion": {"values": [...], ...}}),
// with no values where the upstream did not declare the completions
// capability. req's Deadline and Reply are set here.
func (m *Manager) Complete(ctx context.Context, req session.Complete) (workflow.Object, error) {
	return m.askShared(ctx, req.Connection, func(deadline time.Time, to reply.Address) any {
		req.Deadline, req.Reply = deadline, to
		return req
	})
}

// askShared sends the request made of deadline and the reply address
// to the shared session actor of connection, an enabled connection, and
// waits for its answer's output.
func (m *Manager) askShared(ctx context.Context, connection string, request func(deadline time.Time, to reply.Address) any) (workflow.Object, error) {
	if !m.isEnabledConnection(connection) {
		return nil, fmt.Errorf("connection %q is not an enabled connection", connection)
	}
	deadline := time.Now().Add(m.directCallTimeout())
	w := reply.Expect[session.ToolResult](m.cfg.Replies)
	m.cfg.Engine.Send(m.cfg.Supervisor.PID(), request(deadline, w.To()))
	_, out, err := waitSession(ctx, w, deadline)
	return out, err
}
