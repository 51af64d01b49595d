package fakes_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/session"
	"github.com/mcpflow/mcpflow/fakes"
)

var (
	_ session.TransportFactory = (*fakes.InMemory)(nil)
	_ session.TransportFactory = (*fakes.Recording)(nil)
)

// patience bounds waits that only a broken fake would reach.
const patience = 10 * time.Second

func conn(id string) config.Connection {
	return config.Connection{Kind: "mcp", ID: id, Transport: config.Transport{Kind: "inmemory"}}
}

// dial makes a transport with factory and connects a go-sdk client over it.
func dial(t *testing.T, factory session.TransportFactory, id string) (*mcp.ClientSession, mcp.Transport) {
	t.Helper()
	is := is.New(t)
	is.Helper()
	transport, err := factory.NewTransport(conn(id))
	is.NoErr(err) // new transport
	client := mcp.NewClient(&mcp.Implementation{Name: "fakes-test", Version: "v0"}, nil)
	cs, err := client.Connect(t.Context(), transport, nil)
	is.NoErr(err) // connect
	t.Cleanup(func() { _ = cs.Close() })
	return cs, transport
}

type count struct {
	Count int `json:"count"`
}

// ended reports whether cs.Wait returns within patience.
func ended(cs *mcp.ClientSession) bool {
	done := make(chan struct{})
	go func() {
		_ = cs.Wait()
		close(done)
	}()
	select {
	case <-done:
		return true
	case <-time.After(patience):
		return false
	}
}

func TestServerTools(t *testing.T) {
	is := is.New(t)
	cs, _ := dial(t, fakes.NewInMemory(nil), "fake.default")

	res, err := cs.ListTools(t.Context(), nil)
	is.NoErr(err)
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	is.Equal(len(names), 7) // counter, crash, echo, fail, idle, overlap, sleep

	type message struct {
		Message string `json:"message"`
	}
	is.Equal(fakes.CallStructured[message](t, cs, "echo", map[string]any{"message": "hi"}).Message, "hi")

	type slept struct {
		SleptMS int `json:"slept_ms"`
	}
	is.Equal(fakes.CallStructured[slept](t, cs, "sleep", map[string]any{"ms": 1}).SleptMS, 1)

	failed, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "fail", Arguments: map[string]any{"message": "boom"}})
	is.NoErr(err)           // a tool error is a result, not a protocol error
	is.True(failed.IsError) // fail reports a tool error
	is.Equal(failed.Content[0].(*mcp.TextContent).Text, "boom")
}

func TestInMemorySessionsAreIndependent(t *testing.T) {
	is := is.New(t)
	factory := fakes.NewInMemory(nil)
	first, _ := dial(t, factory, "fake.one")
	second, _ := dial(t, factory, "fake.two")

	is.Equal(fakes.CallStructured[count](t, first, "counter", nil).Count, 1)
	is.Equal(fakes.CallStructured[count](t, first, "counter", map[string]any{}).Count, 2)
	is.Equal(fakes.CallStructured[count](t, second, "counter", nil).Count, 1) // a new server per transport
}

func TestInMemoryUsesTheGivenServer(t *testing.T) {
	is := is.New(t)
	factory := fakes.NewInMemory(func() *mcp.Server {
		return mcp.NewServer(&mcp.Implementation{Name: "custom", Version: "v1"}, nil)
	})
	cs, _ := dial(t, factory, "custom.default")
	is.Equal(cs.InitializeResult().ServerInfo.Name, "custom")
}

func TestSleepHonoursDeadline(t *testing.T) {
	is := is.New(t)
	factory := fakes.NewInMemory(nil)
	cs, _ := dial(t, factory, "fake.default")

	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "sleep", Arguments: map[string]any{"ms": 60_000}})
	is.True(errors.Is(err, context.DeadlineExceeded))

	// A graceful close waits for in-flight handlers, so it ends promptly only
	// if the server's sleep saw the cancellation.
	closed := make(chan error, 1)
	go func() { closed <- factory.CloseServers() }()
	select {
	case err := <-closed:
		is.NoErr(err)
	case <-time.After(patience):
		is.Fail() // the server's sleep ends when its call is cancelled
	}
	is.True(ended(cs)) // the server closing ends the client session
}

func TestCrashEndsTheSession(t *testing.T) {
	is := is.New(t)
	cs, _ := dial(t, fakes.NewInMemory(nil), "fake.default")

	_, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "crash"})
	is.True(err != nil) // the call dies with its connection
	is.True(ended(cs))

	_, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "counter"})
	is.True(errors.Is(err, mcp.ErrConnectionClosed))
}

func TestCrashOutsideInMemory(t *testing.T) {
	is := is.New(t)
	cs := fakes.Connect(t, fakes.NewServer())

	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "crash"})
	is.NoErr(err)
	is.True(res.IsError)                                                  // crash cannot cut a connection InMemory did not make
	is.Equal(fakes.CallStructured[count](t, cs, "counter", nil).Count, 1) // the session lives on
}

func TestKillEndsSessions(t *testing.T) {
	is := is.New(t)
	factory := fakes.NewInMemory(nil)
	first, transport := dial(t, factory, "fake.one")
	second, _ := dial(t, factory, "fake.two")

	killer, ok := transport.(session.Killer)
	is.True(ok) // InMemory transports can be killed
	is.NoErr(killer.Kill())
	is.True(ended(first))
	is.Equal(fakes.CallStructured[count](t, second, "counter", nil).Count, 1) // the other upstream lives

	factory.KillAll()
	is.True(ended(second))
}

func TestKillAllFailsInFlightCalls(t *testing.T) {
	is := is.New(t)
	factory := fakes.NewInMemory(nil)
	rec := fakes.NewRecording(factory) // only to learn when the call is sent
	cs, _ := dial(t, rec, "fake.default")

	errc := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "sleep", Arguments: map[string]any{"ms": 60_000}})
		errc <- err
	}()
	is.True(rec.WaitForToolCalls(1, patience))
	factory.KillAll()
	is.True(<-errc != nil) // the in-flight call fails
	is.True(ended(cs))
}

// toolCall is fakes.ToolCall with printable arguments.
type toolCall struct{ Connection, Name, Arguments string }

func calls(rec *fakes.Recording) []toolCall {
	var out []toolCall
	for _, c := range rec.ToolCalls() {
		out = append(out, toolCall{c.Connection, c.Name, string(c.Arguments)})
	}
	return out
}

func TestRecordingCountsSessionsAndCalls(t *testing.T) {
	is := is.New(t)
	rec := fakes.NewRecording(fakes.NewInMemory(nil))
	first, transport := dial(t, rec, "fake.one")
	second, _ := dial(t, rec, "fake.two")
	is.Equal(rec.SessionsCreated(), 2)
	_, ok := transport.(session.Killer)
	is.True(ok) // Recording keeps the inner transport's Kill

	_, err := first.ListTools(t.Context(), nil) // not a tool call
	is.NoErr(err)
	fakes.CallStructured[count](t, first, "counter", nil)
	fakes.CallStructured[count](t, first, "counter", map[string]any{})
	fakes.CallStructured[struct{}](t, second, "echo", map[string]any{"message": "<hi>"})
	fakes.CallStructured[struct{}](t, second, "sleep", json.RawMessage(`{ "ms": 1 }`))

	is.Equal(calls(rec), []toolCall{
		{"fake.one", "counter", `{}`},
		{"fake.one", "counter", `{}`},
		{"fake.two", "echo", `{"message":"<hi>"}`},
		{"fake.two", "sleep", `{"ms":1}`},
	})
}

func TestRecordingWaitsForConcurrentCalls(t *testing.T) {
	is := is.New(t)
	rec := fakes.NewRecording(fakes.NewInMemory(nil))
	cs, _ := dial(t, rec, "fake.default")

	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			_, _ = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "counter"})
		})
	}
	is.True(rec.WaitForToolCalls(8, patience))
	wg.Wait()
	is.Equal(len(rec.ToolCalls()), 8)
	is.Equal(fakes.CallStructured[count](t, cs, "counter", nil).Count, 9)
	is.True(!rec.WaitForToolCalls(10, time.Millisecond)) // only 9 were sent
}

// failingConnect makes transports whose Connect fails.
type failingConnect struct{}

func (failingConnect) NewTransport(config.Connection) (mcp.Transport, error) {
	return failingTransport{}, nil
}

type failingTransport struct{}

func (failingTransport) Connect(context.Context) (mcp.Connection, error) {
	return nil, errors.New("refused")
}

func TestRecordingCountsOnlyConnectedSessions(t *testing.T) {
	is := is.New(t)

	rec := fakes.NewRecording(session.Factories{}) // no factory for the kind
	_, err := rec.NewTransport(conn("fake.default"))
	is.True(err != nil)
	is.Equal(rec.SessionsCreated(), 0)

	rec = fakes.NewRecording(failingConnect{})
	transport, err := rec.NewTransport(conn("fake.default"))
	is.NoErr(err)
	client := mcp.NewClient(&mcp.Implementation{Name: "fakes-test", Version: "v0"}, nil)
	_, err = client.Connect(t.Context(), transport, nil)
	is.True(err != nil)
	is.Equal(rec.SessionsCreated(), 0)
}
