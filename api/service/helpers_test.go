package service_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anthdm/hollywood/actor"
	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/catalog"
	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/reply"
	"github.com/mcpflow/mcpflow/actors/reply/replytest"
	"github.com/mcpflow/mcpflow/actors/runs"
	"github.com/mcpflow/mcpflow/actors/sources"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/supervisor/supervisortest"
	"github.com/mcpflow/mcpflow/api/jsonrpc"
	"github.com/mcpflow/mcpflow/api/live"
	"github.com/mcpflow/mcpflow/api/rpc"
	"github.com/mcpflow/mcpflow/api/service"
	"github.com/mcpflow/mcpflow/fakes"
)

// patience bounds every wait that only a broken service would reach.
const patience = 10 * time.Second

// storeRoot is the store root the fixture's service reports.
const storeRoot = "/var/lib/mcpflow-test"

// Secrets configured on connections; no listing may ever show them.
const (
	secretEnv    = "s3cret-env-value"
	secretHeader = "Bearer s3cret-header-value"
)

func enabled(on bool) *bool { return &on }

// connections are the configured sources, sorted by id:
//   - fake.off: disabled, with a catalog whose tools must stay hidden;
//   - fake.one: an in-memory fake upstream (counter, echo, fail, ...);
//   - spare.one: enabled but never catalogued;
//   - web.main: an http source with a catalog of its own.
func connections() []config.Connection {
	return []config.Connection{
		{Kind: "mcp", ID: "fake.off", Enabled: enabled(false), Transport: config.Transport{Kind: config.TransportStdio, Command: "fake-off"}},
		{Kind: "mcp", ID: "fake.one", Transport: config.Transport{
			Kind: config.TransportStdio, Command: "fake-server", Args: []string{"--serve"},
			Env: map[string]string{"API_TOKEN": secretEnv, "LOG_LEVEL": "debug"},
		}},
		{Kind: "mcp", ID: "spare.one", Transport: config.Transport{Kind: config.TransportStdio, Command: "spare"}},
		{Kind: "mcp", ID: "web.main", Provider: "web", Account: "main", Ownership: "managed", Transport: config.Transport{
			Kind: config.TransportHTTP, URL: "https://mcp.example.test/mcp",
			Headers: map[string]string{"Authorization": secretHeader},
		}, Metadata: map[string]any{"team": "search"}},
	}
}

func obj(kv ...any) catalog.Object {
	o := catalog.Object{}
	for i := 0; i < len(kv); i += 2 {
		o[kv[i].(string)] = kv[i+1]
	}
	return o
}

// Tools of fake.one as the fake server declares them.
func counterTool() catalog.Tool {
	return catalog.Tool{
		Name: "counter", Description: "Increment and return the session counter.",
		InputSchema:  obj("type", "object"),
		OutputSchema: obj("type", "object", "properties", obj("count", obj("type", "integer")), "required", []any{"count"}),
	}
}

func echoTool() catalog.Tool {
	return catalog.Tool{
		Name: "echo", Description: "Return the message unchanged.",
		InputSchema:  obj("type", "object", "properties", obj("message", obj("type", "string")), "required", []any{"message"}),
		OutputSchema: obj("type", "object", "properties", obj("message", obj("type", "string"))),
	}
}

func failTool() catalog.Tool {
	return catalog.Tool{
		Name: "fail", Description: "Fail with a tool error.",
		InputSchema: obj("type", "object", "properties", obj("message", obj("type", "string"))),
	}
}

// snapshots seed the registry, so capabilities exist without I/O.
func snapshots() []catalog.Snapshot {
	return []catalog.Snapshot{
		{ConnectionID: "fake.one", FetchedAtEpochMs: 1_700_000_000_000, MaxAgeSeconds: 300, Tools: []catalog.Tool{counterTool(), echoTool(), failTool()},
			Resources: []catalog.Resource{{URI: "fake://readme", Name: "readme"}}, Prompts: []catalog.Prompt{{Name: "greet"}, {Name: "bye"}}},
		{ConnectionID: "fake.off", FetchedAtEpochMs: 1_700_000_000_001, MaxAgeSeconds: 300, Tools: []catalog.Tool{{Name: "hidden_tool", Description: "Must never be listed.", InputSchema: obj("type", "object")}}},
		{ConnectionID: "web.main", FetchedAtEpochMs: 1_700_000_000_002, MaxAgeSeconds: 60, Tools: []catalog.Tool{{
			Name: "search", Description: "Search the web for pages.",
			InputSchema:  obj("type", "object", "properties", obj("q", obj("type", "string")), "required", []any{"q"}),
			OutputSchema: obj("type", "object", "properties", obj("hits", obj("type", "array"))),
		}}},
	}
}

// fixture is a Service over an in-memory store, a registry seeded with
// snapshots and a real supervisor whose upstreams are in-process fakes.
type fixture struct {
	svc      *service.Service
	engine   *actor.Engine
	store    *store.Memory
	registry *catalog.Registry
	methods  map[string]rpc.Method
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	return newFixtureOn(t, actor.NewEngineConfig())
}

// newFixtureOn is newFixture on an engine of that config: one with a
// remote, for a node of a cluster.
func newFixtureOn(t *testing.T, engine actor.EngineConfig) *fixture {
	t.Helper()
	is := is.New(t)
	is.Helper()
	e, err := actor.NewEngine(engine)
	is.NoErr(err) // new engine
	st := store.NewMemory()
	opts := supervisortest.Options()
	// The seeded snapshots stand for the catalogs: sessions do not list
	// their own when they open, only refresh_catalog does.
	opts.Session.CatalogMaxAge = 0
	conns := connections()
	reg := catalog.NewRegistry(snapshots())
	hub := live.NewHub(st, live.Options{})
	observed := store.Observed(st, hub, nil)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), patience)
		defer cancel()
		is.NoErr(hub.Close(ctx)) // every subscription's goroutine returns
	})
	sup := supervisortest.Spawn(t, e, conns, fakes.NewInMemory(nil), sources.NewCatalogSink(observed, reg), opts)
	svc := &service.Service{
		Store: observed, Hub: hub, Catalogs: reg, Supervisor: sup, Connections: config.NewView(conns),
		StoreRoot: storeRoot, RunWait: patience,
	}
	svc.Sources = sources.New(svc.Store, svc.Connections, sup)
	svc.Runs = runsOf(t, svc, e)
	return &fixture{svc: svc, engine: e, store: st, registry: reg, methods: svc.Methods()}
}

// runsOf is the run manager of svc's runs on e, made as the app makes
// its own, on the service's clock (which a test may set later).
func runsOf(t *testing.T, svc *service.Service, e *actor.Engine) *runs.Manager {
	t.Helper()
	return runs.New(runs.Config{
		Engine: e, Supervisor: svc.Supervisor, Replies: replies(t, e), Store: svc.Store, Catalogs: svc.Catalogs, Connections: svc.Connections,
		CallTimeout: 5 * time.Second, Now: func() time.Time {
			if svc.Now != nil {
				return svc.Now()
			}
			return time.Now()
		},
	})
}

// ticking returns a clock that advances one second per reading.
func ticking() func() time.Time {
	var n atomic.Int64
	base := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	return func() time.Time { return base.Add(time.Duration(n.Add(1)) * time.Second) }
}

// replies spawns the router of a fixture's service on e, stopped with the
// test.
func replies(t *testing.T, e *actor.Engine) *reply.Router {
	t.Helper()
	return replytest.Router(t, e, "service")
}

func bounded(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	t.Cleanup(cancel)
	return ctx
}

// call invokes a method as the edge does, with raw JSON params.
func (f *fixture) call(t *testing.T, method, params string) (any, error) {
	t.Helper()
	is := is.New(t)
	is.Helper()
	h, ok := f.methods[method]
	if !ok {
		t.Logf("no method %q in the table", method)
	}
	is.True(ok) // the method is in the table
	return h.Handler(bounded(t), json.RawMessage(params))
}

// succeed calls a method that must succeed and returns its answer.
func (f *fixture) succeed(t *testing.T, method, params string) any {
	t.Helper()
	is := is.New(t)
	is.Helper()
	res, err := f.call(t, method, params)
	if err != nil {
		t.Logf("%s %s: %v", method, params, err)
	}
	is.NoErr(err) // the method succeeds
	return res
}

// raw calls a method that must succeed and returns its JSON answer.
func (f *fixture) raw(t *testing.T, method, params string) []byte {
	t.Helper()
	is := is.New(t)
	is.Helper()
	data, err := json.Marshal(f.succeed(t, method, params))
	is.NoErr(err) // the answer encodes as JSON
	return data
}

// mustCall calls a method that must succeed and decodes its answer as a
// client would.
func mustCall[T any](t *testing.T, f *fixture, method, params string) T {
	t.Helper()
	is := is.New(t)
	is.Helper()
	var out T
	is.NoErr(json.Unmarshal(f.raw(t, method, params), &out)) // the answer decodes
	return out
}

// generic decodes an answer into plain JSON values.
func generic(t *testing.T, data []byte) map[string]any {
	t.Helper()
	is := is.New(t)
	is.Helper()
	var m map[string]any
	is.NoErr(json.Unmarshal(data, &m)) // the answer is a JSON object
	return m
}

// domainError asserts err is the 5000 error with data.code code and
// returns its data.message.
func domainError(t *testing.T, err error, code string) string {
	t.Helper()
	is := is.New(t)
	is.Helper()
	var e *jsonrpc.Error
	if !errors.As(err, &e) {
		t.Logf("error %v (%T) is no *jsonrpc.Error", err, err)
		is.Fail() // a domain error
	}
	is.Equal(e.Code, jsonrpc.OperationFailed) // a 5000 error
	data, ok := e.Data.(jsonrpc.ErrorData)
	is.True(ok)                 // its data is ErrorData
	is.Equal(data.Code, code)   // the domain error code
	is.True(data.Message != "") // a message explains it
	return data.Message
}

// invalidParams asserts err is a -32602 error.
func invalidParams(t *testing.T, err error) {
	t.Helper()
	is := is.New(t)
	is.Helper()
	var e *jsonrpc.Error
	if !errors.As(err, &e) {
		t.Logf("error %v (%T) is no *jsonrpc.Error", err, err)
		is.Fail() // an invalid params error
	}
	is.Equal(e.Code, jsonrpc.InvalidParams) // -32602
}

func jsonOf(v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("encode %v: %v", v, err))
	}
	return string(data)
}
