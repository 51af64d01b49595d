package demoserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"testing"

	"github.com/matryer/is"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflow/mcpflow/cmd/mcpflow/demoserver"
	"github.com/mcpflow/mcpflow/fakes"
)

// stdioEnv, when set, turns the test binary into the demo server so that
// TestRunServesStdio can talk to a real subprocess.
const stdioEnv = "MCPFLOW_DEMOSERVER_STDIO"

func TestMain(m *testing.M) {
	if os.Getenv(stdioEnv) == "1" {
		if err := demoserver.Run(context.Background()); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

type count struct {
	Count int `json:"count"`
}

type entry struct {
	Key   string `json:"key"`
	Value string `json:"value"`
	Found bool   `json:"found"`
}

func TestListTools(t *testing.T) {
	is := is.New(t)
	cs := fakes.Connect(t, demoserver.New())

	res, err := cs.ListTools(t.Context(), nil)
	is.NoErr(err)
	tools := map[string]*mcp.Tool{}
	for _, tool := range res.Tools {
		tools[tool.Name] = tool
		is.True(tool.Description != "") // every tool is described
	}
	is.Equal(len(tools), 4)
	for _, name := range []string{"counter", "kv_set", "kv_get", "echo"} {
		is.True(tools[name] != nil) // tool listed
	}

	schema, err := json.Marshal(tools["counter"].OutputSchema)
	is.NoErr(err)
	var counterOut struct {
		Properties map[string]any `json:"properties"`
	}
	is.NoErr(json.Unmarshal(schema, &counterOut))
	_, ok := counterOut.Properties["count"]
	is.True(ok) // counter's output schema has property "count"
}

func TestCounterIsSessionLocal(t *testing.T) {
	is := is.New(t)
	first := fakes.Connect(t, demoserver.New())
	second := fakes.Connect(t, demoserver.New())

	is.Equal(fakes.CallStructured[count](t, first, "counter", map[string]any{}).Count, 1)
	is.Equal(fakes.CallStructured[count](t, first, "counter", nil).Count, 2)
	is.Equal(fakes.CallStructured[count](t, second, "counter", map[string]any{}).Count, 1) // independent instance
}

func TestKeyValue(t *testing.T) {
	is := is.New(t)
	cs := fakes.Connect(t, demoserver.New())

	set := fakes.CallStructured[entry](t, cs, "kv_set", map[string]any{"key": "greeting", "value": "hello"})
	is.Equal(set, entry{Key: "greeting", Value: "hello"})

	got := fakes.CallStructured[entry](t, cs, "kv_get", map[string]any{"key": "greeting"})
	is.Equal(got, entry{Key: "greeting", Value: "hello", Found: true})

	missing := fakes.CallStructured[entry](t, cs, "kv_get", map[string]any{"key": "nope"})
	is.Equal(missing, entry{Key: "nope"}) // found=false
}

func TestKVSetRequiresKey(t *testing.T) {
	is := is.New(t)
	cs := fakes.Connect(t, demoserver.New())

	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "kv_set", Arguments: map[string]any{"value": "v"}})
	is.NoErr(err)
	is.True(res.IsError) // missing key is rejected by the input schema
}

func TestEcho(t *testing.T) {
	is := is.New(t)
	cs := fakes.Connect(t, demoserver.New())

	out := fakes.CallStructured[struct {
		Message string `json:"message"`
	}](t, cs, "echo", map[string]any{"message": "hi there"})
	is.Equal(out.Message, "hi there")
}

func TestRunServesStdio(t *testing.T) {
	is := is.New(t)
	exe, err := os.Executable()
	is.NoErr(err)
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), stdioEnv+"=1")
	cmd.Stderr = os.Stderr

	client := mcp.NewClient(&mcp.Implementation{Name: "demoserver-test", Version: "v0"}, nil)
	cs, err := client.Connect(t.Context(), &mcp.CommandTransport{Command: cmd}, nil)
	is.NoErr(err)
	is.Equal(cs.InitializeResult().ServerInfo.Name, "mcpflow-demo")
	is.Equal(fakes.CallStructured[count](t, cs, "counter", nil).Count, 1)
	is.Equal(fakes.CallStructured[count](t, cs, "counter", nil).Count, 2)

	// Closing the client closes the server's stdin: Run returns nil, the
	// process exits 0, and Close reports the clean exit as nil.
	is.NoErr(cs.Close())
}
