package runs

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/mcpflow/mcpflow/actors/catalog"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/supervisor"
	"github.com/mcpflow/mcpflow/actors/workflow"
	"github.com/mcpflow/mcpflow/actors/workflow/schema"
)

// PassthroughRequest is an MCP client's call of an upstream tool exposed
// through the MCP face (gateway mode): one tool of one connection, called
// through the connection's session as a one-step run.
type PassthroughRequest struct {
	Connection string
	Tool       string
	// Input is the call's arguments.
	Input workflow.Object
	// StartedBy and ClientSampling are as StartRequest's.
	StartedBy      string
	ClientSampling bool
	// ClientSession, when set, is the key of the downstream MCP client
	// session the call came from, for a connection exposed per_client:
	// the call goes to that client's own upstream session
	// (supervisor.ClientScope), not the shared one.
	ClientSession string
	// Transient says the call is not to be recorded (a connection exposed
	// with record false): its run is kept while it runs and briefly
	// after, and appends no admin event (store.Retention.Transient).
	Transient bool
	// Wait is as StartRequest's.
	Wait time.Duration
}

// PassthroughArtifact is the artifact id a pass-through run of
// capability name (its connection and tool) records: not a stored
// artifact (its ":" is in no record id), the name of what was called.
func PassthroughArtifact(name string) string { return "passthrough:" + name }

// Passthrough calls an upstream tool as a run of kind
// store.RunPassthrough: a one-step program made from the tool's
// contract (the call, and its error routed to a failing end), executed by
// a run actor as any run, so that the call goes through the connection's
// shared session (the one workflows use), is committed before it goes
// out, and reports progress, upstream requests and its cancel as a
// workflow's step does. Arguments the tool's input schema refuses are
// refused (-32602) before anything starts. The run has no deployment; its
// artifact id is PassthroughArtifact's, version 1, stored nowhere, so a
// run cut off by a stop is failed at recovery (the call's outcome is
// unknown) rather than made again.
func (m *Manager) Passthrough(ctx context.Context, req PassthroughRequest) (store.Run, error) {
	if !m.cfg.Connections.Enabled(req.Connection) {
		return store.Run{}, invalid("connection %q is not configured or is disabled", req.Connection)
	}
	c, ok := m.cfg.Catalogs.Tool(req.Connection, req.Tool)
	if !ok {
		return store.Run{}, invalid("connection %q has no tool %q in its catalog", req.Connection, req.Tool)
	}
	input := orEmpty(req.Input)
	if err := schema.Default.Validate(c.InputSchema, input); err != nil {
		return store.Run{}, invalidParams("invalid params: the arguments do not match the tool's input schema: %v", err)
	}
	session := store.SessionShared
	if req.ClientSession != "" {
		session = store.SessionClient
	}
	d, a, setup, err := m.passthroughSetup(c, session)
	if err != nil {
		return store.Run{}, err
	}
	if req.Transient {
		d.Retention = &store.Retention{Transient: true}
	}
	rec, err := m.newRun(d, a, input, []workflow.Object{})
	if err != nil {
		return store.Run{}, err
	}
	rec.StartedBy, rec.ClientSampling, rec.Kind, rec.ClientSession = req.StartedBy, req.ClientSampling, store.RunPassthrough, req.ClientSession
	return m.asMember(ctx, rec.ID, func() (store.Run, error) { return m.execute(ctx, rec, setup, nil, nil, req.Wait) })
}

// passthroughSetup is how a pass-through of c runs: its deployment (no
// id, one binding of its connection to itself, which names the
// connection and the session scope for a resume or a recovery), its
// artifact (stored nowhere) and its setup.
func (m *Manager) passthroughSetup(c catalog.Capability, session string) (store.Deployment, store.Artifact, *Setup, error) {
	plan, err := PassthroughPlan(c)
	if err != nil {
		return store.Deployment{}, store.Artifact{}, nil, err
	}
	prog, err := workflow.Program{Root: plan, Children: map[string]workflow.Plan{}}.Prepare()
	if err != nil {
		return store.Deployment{}, store.Artifact{}, nil, fmt.Errorf("pass-through of %s: %w", c.Name, err)
	}
	a := store.Artifact{ID: PassthroughArtifact(c.Name), Version: 1, Plan: plan}
	d := store.Deployment{ArtifactID: a.ID, ArtifactVersion: a.Version, DriftPolicy: "block",
		Bindings: []store.Binding{{LogicalSource: c.SourceID, ConcreteSource: c.SourceID, Session: session}}}
	setup, err := m.setupOf(d, prog)
	return d, a, setup, err
}

// runSetup is how run r goes on (a resume, a recovery): a workflow's run
// in the setup of its artifact and pinned deployment; a pass-through in
// the setup made again from its tool's contract in the catalog now.
func (m *Manager) runSetup(ctx context.Context, r store.Run) (*Setup, error) {
	if r.Kind != store.RunPassthrough {
		a, err := m.Artifact(ctx, r.ArtifactID, r.ArtifactVersion)
		if err != nil {
			return nil, storeErr(err, fmt.Sprintf("artifact %s v%d of run %q", r.ArtifactID, r.ArtifactVersion, r.ID))
		}
		return m.Setup(ctx, r.Deployment, a)
	}
	if len(r.Deployment.Bindings) != 1 {
		return nil, invalid("pass-through run %q names no connection", r.ID)
	}
	conn := r.Deployment.Bindings[0].ConcreteSource
	tool := strings.TrimPrefix(strings.TrimPrefix(r.ArtifactID, PassthroughArtifact("")), conn+".")
	c, ok := m.cfg.Catalogs.Tool(conn, tool)
	if !ok {
		return nil, invalid("pass-through run %q: connection %q has no tool %q in its catalog", r.ID, conn, tool)
	}
	_, _, setup, err := m.passthroughSetup(c, r.Deployment.Bindings[0].Session)
	return setup, err
}

// PassthroughPlan is the one-step plan of a pass-through call of c: the
// run's input is the tool's arguments, whole, and its output the step's
// whole result (structuredContent, or {"content": [...]}); a tool error
// fails the run with the tool's words (workflow.Scaffold's tool_error).
// It depends on c's name and outcomes only; the arguments are checked
// against c's input schema before the run starts.
func PassthroughPlan(c catalog.Capability) (workflow.Plan, error) {
	d, _ := workflow.Scaffold(c, workflow.ScaffoldOptions{
		Name:         "passthrough",
		InputSchema:  workflow.Object{"type": "object"},
		StateSchema:  workflow.Object{"type": "object"},
		OutputSchema: workflow.Object{"type": "object"},
		Input:        []workflow.InputBinding{workflow.PathBinding(".", workflow.RootInput)},
		Output:       []workflow.OutputBinding{workflow.OutputTo(".", workflow.RootState+".result")},
	})
	d.Output = []workflow.InputBinding{workflow.PathBinding(".", workflow.RootState+".result")}
	plan, err := workflow.Compile(d)
	if err != nil {
		return workflow.Plan{}, fmt.Errorf("pass-through of %s: %w", c.Name, err)
	}
	return plan, nil
}

// ReleaseClient closes the upstream sessions of downstream MCP client
// session key (PassthroughRequest.ClientSession): that client has ended
// its session. A key with none open is nothing to do.
func (m *Manager) ReleaseClient(key string) { m.releaseScope(supervisor.ClientScope(key)) }
