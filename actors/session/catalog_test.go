package session_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/matryer/is"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflow/mcpflow/actors/catalog"
	"github.com/mcpflow/mcpflow/actors/session"
	"github.com/mcpflow/mcpflow/fakes"
)

func TestListCatalogReturnsToolsWithSchemas(t *testing.T) {
	is := is.New(t)
	e, pid := spawn(t, fakes.NewInMemory(nil), testOptions())

	w := expect[session.CatalogListed](e)
	e.Send(pid, session.ListCatalog{Deadline: time.Now().Add(2 * time.Second), Reply: w.To()})
	listed := await(t, w)
	is.NoErr(listed.Error.Err())
	snap := listed.Snapshot
	is.Equal(snap.ConnectionID, connID)
	is.True(snap.FetchedAtEpochMs > 0)
	is.Equal(snap.Resources, []catalog.Resource{{URI: fakes.GreetingURI, Name: "greeting", MIMEType: "text/plain"}}) // resources are listed too
	is.Equal(len(snap.Prompts), 0)

	var names []string
	for _, tool := range snap.Tools {
		names = append(names, tool.Name)
		is.Equal(tool.InputSchema["type"], "object") // every tool has an input schema
	}
	slices.Sort(names)
	is.Equal(names, []string{"counter", "crash", "echo", "fail", "idle", "overlap", "sleep"})

	sleep := snap.Tools[slices.IndexFunc(snap.Tools, func(t catalog.Tool) bool { return t.Name == "sleep" })]
	ms, ok := sleep.InputSchema["properties"].(map[string]any)["ms"].(map[string]any)
	is.True(ok) // sleep takes ms
	is.Equal(ms["type"], "integer")
	counter := snap.Tools[slices.IndexFunc(snap.Tools, func(t catalog.Tool) bool { return t.Name == "counter" })]
	_, ok = counter.OutputSchema["properties"].(map[string]any)["count"]
	is.True(ok) // counter declares its output
}

func TestToolListChangedSendsAFreshCatalogToTheParent(t *testing.T) {
	is := is.New(t)
	newServer, servers := fakes.Handing(nil)
	h := spawnWithParent(t, fakes.NewInMemory(newServer), testOptions())
	mustCall(t, h.engine, h.pid, "counter", nil)
	server := <-servers

	server.RemoveTools("crash")
	select {
	case listed := <-h.catalogs:
		is.NoErr(listed.Error.Err())
		var names []string
		for _, tool := range listed.Snapshot.Tools {
			names = append(names, tool.Name)
		}
		slices.Sort(names)
		is.Equal(names, []string{"counter", "echo", "fail", "idle", "overlap", "sleep"})
	case <-time.After(patience):
		is.Fail() // a catalog arrives after tools/list_changed
	}
}

// A re-list the actor starts itself has no reply address; when it cannot
// run (here: it waited in the queue past its deadline) it must be dropped,
// not answered through a nil reply.
func TestUnrunnableCatalogRefreshDoesNotPanic(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		is := is.New(t)
		opts := testOptions()
		opts.MaxInFlight = 1
		opts.CallTimeout = 50 * time.Millisecond // the re-list's deadline
		newServer, servers := fakes.Handing(nil)
		h := spawnWithParent(t, fakes.NewInMemory(newServer), opts)
		mustCall(t, h.engine, h.pid, "counter", nil)
		server := <-servers

		busy := send(h.engine, h.pid, "sleep", map[string]any{"ms": 5000}, time.Second)
		server.RemoveTools("crash") // the re-list queues behind the sleep
		r := await(t, busy)
		is.True(r.Error.Err() != nil) // the sleep hit its deadline
		// The re-list, expired by now, left the queue when the sleep finished;
		// this call is handled after that.
		mustCall(t, h.engine, h.pid, "counter", nil)
		select {
		case p := <-h.panics:
			t.Logf("session actor panicked: %v", p)
			is.Fail() // the session actor must not panic
		default:
		}
	})
}

func TestASourceDownAtStartListsItsCatalogOnceItIsUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		is := is.New(t)
		opts := testOptions()
		opts.CatalogMaxAge = time.Minute
		factory := &flakyFactory{inner: fakes.NewInMemory(nil), failures: 2}
		h := spawnWithParent(t, factory, opts)

		// The first listing (a warm-up) fails with the connect: the source is
		// down.
		w := expect[session.CatalogListed](h.engine)
		h.engine.Send(h.pid, session.ListCatalog{Deadline: time.Now().Add(patience), Reply: w.To()})
		first := await(t, w)
		is.True(errors.Is(first.Error.Err(), session.ErrUnavailable))
		is.True(strings.Contains(first.Error.Err().Error(), "upstream refused")) // at once, with the cause

		// Nobody asks again, yet the catalog arrives once the source is up.
		select {
		case listed := <-h.catalogs:
			is.NoErr(listed.Error.Err())
			is.True(len(listed.Snapshot.Tools) > 0)
			is.Equal(factory.attempts.Load(), int32(3)) // two refused connects, then one that worked
		case <-time.After(patience):
			is.Fail() // the background retry lists the catalog
		}
	})
}

func TestAnOpenSessionListsItsCatalogAgainOnceItIsStale(t *testing.T) {
	is := is.New(t)
	opts := testOptions()
	opts.CatalogMaxAge = 50 * time.Millisecond
	h := spawnWithParent(t, fakes.NewInMemory(nil), opts)
	mustCall(t, h.engine, h.pid, "counter", nil)
	for i := range 2 { // listed when the session opens, then again when stale
		select {
		case listed := <-h.catalogs:
			is.NoErr(listed.Error.Err())
		case <-time.After(patience):
			t.Logf("listing %d did not arrive", i+1)
			is.Fail() // the catalog is listed again once stale
		}
	}
}

// A burst of list_changed notifications (tools, resources and prompts) is
// listed once, when the debounce window that the first opened closes; the
// listing holds every change of the burst.
func TestListChangedNotificationsAreDebouncedIntoOneListing(t *testing.T) {
	is := is.New(t)
	newServer, servers := fakes.Handing(func() *mcp.Server {
		s := fakes.NewServer()
		s.AddPrompt(&mcp.Prompt{Name: "greet"}, greet)
		return s
	})
	opts, clock := clocked(testOptions().Policy)
	opts.ListChangedDebounce = 7 * time.Second // no other timer of this length
	h := spawnWithParent(t, fakes.NewInMemory(newServer), opts)
	mustCall(t, h.engine, h.pid, "counter", nil)
	server := <-servers

	server.RemoveTools("crash")
	server.AddResource(&mcp.Resource{URI: "fake://added", Name: "added"}, readAdded)
	server.AddPrompt(&mcp.Prompt{Name: "added"}, greet)
	awaitTimer(t, clock, opts.ListChangedDebounce)
	select {
	case listed := <-h.catalogs:
		t.Logf("listed before the window closed: %+v", listed)
		is.Fail() // nothing is listed while the window is open
	default:
	}
	clock.Advance(opts.ListChangedDebounce)

	select {
	case listed := <-h.catalogs:
		is.NoErr(listed.Error.Err())
		snap := listed.Snapshot
		is.True(!slices.ContainsFunc(snap.Tools, func(tool catalog.Tool) bool { return tool.Name == "crash" }))
		is.True(slices.ContainsFunc(snap.Resources, func(r catalog.Resource) bool { return r.URI == "fake://added" }))
		is.True(slices.ContainsFunc(snap.Prompts, func(p catalog.Prompt) bool { return p.Name == "added" }))
	case <-time.After(patience):
		is.Fail() // the catalog is listed once the window closes
	}
}

func greet(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "hello"}}}}, nil
}

func readAdded(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: "added"}}}, nil
}
