package mcpface

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/metrics"
	"github.com/mcpflow/mcpflow/api/access"
	"github.com/mcpflow/mcpflow/api/protocol"
)

// Options configure a Face.
type Options struct {
	// Config is the server.mcp block; nil takes every default.
	Config *config.MCP
	// Watch reads the deployments and follows the admin event log, to
	// keep every server's tools current. It needs the read scope, and the
	// admin scope to follow the log; without it the face reads the
	// deployments again every PollInterval.
	Watch Backend
	// States seals the requestState of 2026-era interrupts (required):
	// the store's secrets keyring, so that any node and the server after a
	// restart open it, or secrets.Ephemeral for a face of one process.
	States Sealer
	// Version is the server's version, as its MCP implementation says.
	Version string
	// Logger logs what the face could not do; nil uses slog's default.
	Logger *slog.Logger
	// Metrics counts the 2025-era sessions of /mcp; nil counts nothing.
	Metrics *metrics.Metrics
	// Exposures reads the connections exposed now (server.mcp.expose's
	// and the sources' own expose blocks, which a registry apply changes),
	// at each refresh; nil takes Config.Expose, fixed.
	Exposures func(ctx context.Context) ([]config.MCPExpose, error)
	// LoneSession names the one client session of a face that serves
	// one (`mcpflow mcp` over stdio, whose session has no id): the key of
	// its per_client upstream sessions, closed as it ends. "" for /mcp.
	LoneSession string
}

// PollInterval is how often a face that cannot follow the admin event
// log reads the deployments again.
const PollInterval = 30 * time.Second

// Face offers the deployments to MCP clients: one go-sdk server per
// principal, each offering the tools that principal may see.
type Face struct {
	cfg     config.MCP
	watch   Backend
	log     *slog.Logger
	version string
	states  stateSigner
	// changed is poked when the deployments may have changed.
	changed chan struct{}
	// served is closed by the first NewServer: until then nothing is
	// offered, so Run neither reads the deployments nor follows the
	// admin event log (whose every run start and end would wake it).
	served     chan struct{}
	servedOnce sync.Once

	// loading holds refreshes to one at a time; it owns catalog.
	loading sync.Mutex
	catalog catalog

	// running are the tool calls of each 2025-era session.
	running inFlight
	// clients closes the per_client upstream sessions of each session
	// that ends; lone is Options.LoneSession.
	clients clientSessions
	lone    string
	// exposuresOf is Options.Exposures; exposed what it last read (under mu).
	exposuresOf func(ctx context.Context) ([]config.MCPExpose, error)
	exposed     []config.MCPExpose
	// sessions bounds the 2025-era sessions of /mcp (Handler's), which
	// Run closes as it ends; nil without a Handler.
	sessions *sessionCap
	metrics  *metrics.Metrics

	mu      sync.Mutex
	tools   []workflowTool
	gateway []gatewayTool
	// resources are the exposed connections' resources (gateway_resources.go).
	resources []gatewayResource
	// prompts are the exposed connections' prompts (gateway_prompts.go).
	prompts []gatewayPrompt
	loaded  bool
	servers []*served
}

// served is one go-sdk server of the face and what it offers.
type served struct {
	srv  *mcp.Server
	who  access.Principal
	api  Backend
	gate Gate
	// offered maps each tool offered to its definition as JSON, to tell
	// a changed tool from an unchanged one.
	offered map[string]string
	// resources maps each exposed resource and resource template offered
	// (gatewayResource.key) to its definition as JSON, as offered does
	// tools.
	resources map[string]string
	// prompts maps each exposed prompt offered (its name) to its
	// definition as JSON.
	prompts map[string]string
}

// New returns a face; Run keeps its tools current.
func New(opts Options) *Face {
	cfg := config.MCP{}
	if opts.Config != nil {
		cfg = *opts.Config
	}
	if cfg.MaxTools == 0 {
		cfg.MaxTools = config.DefaultMCPMaxTools
	}
	if cfg.HeartbeatMS == 0 {
		cfg.HeartbeatMS = config.DefaultMCPHeartbeat
	}
	cfg.MaxSessionsPerToken, cfg.MaxSessions = cfg.SessionCaps()
	cfg.SessionEvictIdleMS = cmp.Or(cfg.SessionEvictIdleMS, config.DefaultMCPSessionEvictIdleMS)
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	return &Face{
		cfg: cfg, watch: opts.Watch, log: log, version: opts.Version, states: stateSigner{sealer: opts.States},
		changed: make(chan struct{}, 1), served: make(chan struct{}), catalog: catalog{backend: opts.Watch}, metrics: opts.Metrics,
		lone: opts.LoneSession, exposuresOf: opts.Exposures,
	}
}

// NewServer returns a go-sdk server whose tools are those who may see and
// call, calling the workflow API through api (acting for who), as gate
// (who's access check on the method table) permits.
func (f *Face) NewServer(ctx context.Context, who access.Principal, api Backend, gate Gate) *mcp.Server {
	return f.newServed(ctx, who, api, gate).srv
}

// newServed is NewServer's server with what it offers.
func (f *Face) newServed(ctx context.Context, who access.Principal, api Backend, gate Gate) *served {
	caps := &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}}
	if f.mayOfferResources() {
		// The exposed resources change as their upstreams' do.
		caps.Resources = &mcp.ResourceCapabilities{ListChanged: true}
	}
	opts := &mcp.ServerOptions{
		Instructions: instructions,
		// The tools change as deployments do: say so even while none is
		// offered yet.
		Capabilities: caps,
	}
	if f.mayOfferPrompts() {
		caps.Prompts = &mcp.PromptCapabilities{ListChanged: true}
	}
	var s *served
	if f.mayOfferPrompts() || f.mayOfferResources() {
		opts.CompletionHandler = func(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
			return f.complete(ctx, s, req)
		}
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "mcpflow", Title: "mcpflow workflows", Version: f.version}, opts)
	s = &served{srv: srv, who: who, api: api, gate: gate, offered: map[string]string{}, resources: map[string]string{}, prompts: map[string]string{}}
	srv.AddReceivingMiddleware(f.refuseUnlisted(s))
	f.mu.Lock()
	f.servers = append(f.servers, s)
	loaded := f.loaded
	if loaded {
		f.offer(s)
	}
	f.mu.Unlock()
	f.servedOnce.Do(func() { close(f.served) })
	if !loaded {
		f.refresh(ctx)
	}
	return s
}

// instructions tell the model how the tools behave.
const instructions = "Each workflow tool starts a durable mcpflow run and answers with its output; the structured result is the run: run_id, status, outcome and output. " +
	"A run that waits for a person comes back interrupted: ask the user, then call mcpflow_resume_run. " +
	"mcpflow_get_run shows a run later, also one whose call was cut off."

// Run keeps the tools current until ctx ends, from the first server on
// (the first NewServer reads the deployments itself): it follows the
// admin event log and reads the deployments again after each change of a
// deployment or a catalog, or every PollInterval where it may not follow
// the log. As it ends it closes the 2025-era sessions of /mcp.
func (f *Face) Run(ctx context.Context) {
	defer f.clients.wait()
	defer f.sessions.closeAll()
	select {
	case <-ctx.Done():
		return
	case <-f.served:
	}
	var following sync.WaitGroup
	defer following.Wait()
	following.Go(func() { f.follow(ctx) })
	for {
		select {
		case <-ctx.Done():
			return
		case <-f.changed:
			f.refresh(ctx)
		}
	}
}

// poke asks Run for a refresh; pokes coalesce.
func (f *Face) poke() {
	select {
	case f.changed <- struct{}{}:
	default:
	}
}

// follow subscribes to the admin event log and pokes on each change that
// may change a tool; it subscribes again after a lag, and falls back to
// polling where it may not subscribe.
func (f *Face) follow(ctx context.Context) {
	var after *int64
	for ctx.Err() == nil {
		ended := make(chan int64, 1)
		sub, cancel := context.WithCancel(ctx)
		var res protocol.SubscribeAdminEventsResult
		err := f.watch.Subscribe(sub, protocol.MethodAdminEventsSubscribe, protocol.SubscribeAdminEventsParams{AfterSequence: after}, &res,
			func(method string, params json.RawMessage) {
				var n struct {
					Kind   string `json:"kind"`
					Seq    int64  `json:"sequence"`
					Cursor int64  `json:"cursor"`
				}
				_ = json.Unmarshal(params, &n)
				switch {
				case method == "workflow.admin.lagged":
					ended <- n.Cursor
				case changesTools(n.Kind):
					f.poke()
				}
			})
		if err != nil {
			cancel()
			f.log.Info("mcp face: reading deployments every interval, not following the admin log", "interval", PollInterval, "err", err)
			f.poll(ctx)
			return
		}
		if after == nil {
			// A deployment saved after the first server's read and before
			// this subscription is read now.
			f.poke()
		}
		select {
		case <-ctx.Done():
		case cursor := <-ended:
			after = &cursor
			f.poke() // what was missed is read again
		}
		cancel()
	}
}

// changesTools reports whether an admin event of kind may change a tool
// (or an exposed resource).
func changesTools(kind string) bool {
	return slices.Contains([]string{"workflow_deployment_saved", "workflow_deployment_deleted", "tools_changed", "resources_changed", "prompts_changed", "capability_drift",
		"connection_registered", "connection_updated", "connection_removed"}, kind) // a registry apply may expose or withdraw a connection
}

// poll pokes every PollInterval until ctx ends.
func (f *Face) poll(ctx context.Context) {
	t := time.NewTicker(PollInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			f.poke()
		}
	}
}

// refresh reads the deployments and updates every server's tools. The
// reads run outside f.mu, one refresh at a time, so that calls looking
// up a tool never wait for them.
func (f *Face) refresh(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, refreshTimeout)
	defer cancel()
	f.loading.Lock()
	defer f.loading.Unlock()
	exposed := f.exposuresNow(ctx)
	gateway := f.refreshGateway(ctx, exposed)
	resources := f.refreshGatewayResources(ctx, exposed)
	prompts := f.refreshGatewayPrompts(ctx, exposed)
	tools, errs := f.catalog.load(ctx, gatewayReserved(gateway))
	for _, err := range errs {
		f.log.Warn("mcp face: a deployment is not offered", "err", err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.gateway, f.resources, f.prompts = gateway, resources, prompts
	if tools == nil && len(errs) > 0 && f.loaded {
		for _, s := range f.servers {
			f.offer(s)
		}
		return // the list itself failed: keep what is offered
	}
	f.tools, f.loaded = tools, true
	for _, s := range f.servers {
		f.offer(s)
	}
}

// refreshTimeout bounds one read of the deployments.
const refreshTimeout = 30 * time.Second

// visible are the workflow tools who may see: not hidden, within
// server.mcp.deployments and the token's mcp_deployments. Under f.mu.
func (f *Face) visible(who access.Principal) []workflowTool {
	var out []workflowTool
	for _, t := range f.tools {
		if !t.hidden && config.MatchAny(f.cfg.Deployments, t.deploymentID) && who.SeesDeployment(t.deploymentID) {
			out = append(out, t)
		}
	}
	return out
}

// finding reports whether n visible deployments are offered through the
// finder tools rather than one tool each.
func (f *Face) finding(n int) bool {
	switch f.cfg.Tools {
	case config.MCPToolsFind:
		return true
	case config.MCPToolsPerDeployment:
		return false
	}
	return n > f.cfg.MaxTools
}

// offer brings s's tools in line with f.tools: removed tools go, new and
// changed ones are added (go-sdk then tells the session's client,
// notifications/tools/list_changed). Under f.mu.
func (f *Face) offer(s *served) {
	want := map[string]toolEntry{}
	for _, e := range f.toolsFor(s) {
		want[e.tool.Name] = e
	}
	var gone []string
	for name := range s.offered {
		if _, ok := want[name]; !ok {
			gone = append(gone, name)
		}
	}
	if len(gone) > 0 {
		slices.Sort(gone)
		s.srv.RemoveTools(gone...)
		for _, name := range gone {
			delete(s.offered, name)
		}
	}
	names := slices.Sorted(func(yield func(string) bool) {
		for name := range want {
			if !yield(name) {
				return
			}
		}
	})
	for _, name := range names {
		e := want[name]
		def, err := json.Marshal(e.tool)
		if err != nil {
			f.log.Error("mcp face: encode a tool", "tool", name, "err", err)
			continue
		}
		if s.offered[name] == string(def) {
			continue
		}
		s.srv.AddTool(e.tool, f.running.track(s, e.handler))
		s.offered[name] = string(def)
	}
	f.offerResources(s)
	f.offerPrompts(s)
}

// toolEntry is a tool, its handler and the workflow API methods it calls:
// methods, all of them, or, for a tool of several operations, the
// methods of each operation (anyOf).
type toolEntry struct {
	tool    *mcp.Tool
	handler mcp.ToolHandler
	methods []string
	anyOf   [][]string
}

// toolsFor lists what s offers: of its candidates, those whose every
// method s's principal may call (see Gate). Under f.mu.
func (f *Face) toolsFor(s *served) []toolEntry {
	var out []toolEntry
	for _, e := range f.candidates(s) {
		if s.refusalOf(e) == nil {
			out = append(out, e)
		}
	}
	return out
}

// candidates are the tools s would offer a principal that may call every
// method: the workflow tools of the deployments it sees (or the finder
// tools), the run tools, and the authoring tools where server.mcp.authoring
// is on. Under f.mu.
func (f *Face) candidates(s *served) []toolEntry {
	var out []toolEntry
	vis := f.visible(s.who)
	if f.finding(len(vis)) {
		out = append(out, f.finderTools(s, vis)...)
	} else {
		for _, t := range vis {
			out = append(out, toolEntry{tool: t.tool, handler: f.workflowHandler(s, t), methods: workflowMethods})
		}
	}
	out = append(out, f.gatewayEntries(s)...)
	for _, c := range f.companions(s) {
		if !c.authoring || f.cfg.Authoring {
			out = append(out, c.toolEntry)
		}
	}
	return out
}

// ownTools are the names of the face's own tools, which no deployment's
// tool may take.
var ownTools = []string{
	toolGetRun, toolResumeRun, toolCancelRun, toolFindWorkflow, toolRunWorkflow,
	toolSearchCapabilities, toolDraft, toolDraftStep, toolDraftBind, toolDraftRoute, toolPublish,
}

func isOwnTool(name string) bool { return slices.Contains(ownTools, name) }

// lookup finds the workflow tool of a deployment id or tool name among
// those who may see. It takes f.mu.
func (f *Face) lookup(who access.Principal, name string) (workflowTool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, t := range f.visible(who) {
		if t.tool.Name == name || t.deploymentID == name {
			return t, nil
		}
	}
	return workflowTool{}, fmt.Errorf("no workflow %q: mcpflow_find_workflow lists them", name)
}
