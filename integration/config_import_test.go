package integration

// A Claude Desktop file, as users keep it, serving a real MCP server from
// npm: read directly by `serve --config`, and converted by `mcpflow config
// import` into mcpflow's config, which serves the same.

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/config"
	p "github.com/mcpflow/mcpflow/api/protocol"
)

// importSecret is what ${MCPFLOW_IT_SECRET} expands to: it must show up
// nowhere but in the upstream server's environment.
const importSecret = "it-secret-value-7f3a9c"

func TestConfigImportServesAClaudeDesktopFile(t *testing.T) {
	node, script := sequentialThinking(t)
	is := is.New(t)
	dir := t.TempDir()
	t.Setenv("MCPFLOW_IT_SEQ_SCRIPT", script)
	t.Setenv("MCPFLOW_IT_SECRET", importSecret)
	// The file names no store: records go to ./.mcpflow, here.
	t.Chdir(dir)

	claude := filepath.Join(dir, "claude_desktop_config.json")
	data, err := json.Marshal(map[string]any{
		"mcpServers": map[string]any{
			"sequential-thinking": map[string]any{
				"command": node,
				"args":    []string{"${MCPFLOW_IT_SEQ_SCRIPT}"},
				"env":     map[string]string{"DISABLE_THOUGHT_LOGGING": "true", "SEQ_TOKEN": "${MCPFLOW_IT_SECRET}"},
			},
		},
		"globalShortcut": "Ctrl+Space",
	})
	is.NoErr(err)
	is.NoErr(os.WriteFile(claude, data, 0o600))

	// mcpflow config import: the config on stdout, the report on stderr.
	stdout, stderr := runImport(t, claude)
	f, err := config.Parse(stdout)
	is.NoErr(err) // the output is an mcpflow config
	is.Equal(len(f.Connections()), 1)
	is.Equal(f.Connections()[0].ID, "sequential-thinking.default")
	is.True(strings.Contains(string(stdout), "${MCPFLOW_IT_SECRET}")) // references stay references
	is.True(strings.Contains(stderr, "sequential-thinking.default"))  // the report says what was mapped
	is.True(strings.Contains(stderr, `"globalShortcut"`))             // and skipped
	is.True(!strings.Contains(string(stdout)+stderr, importSecret))

	// -o writes it, mode 0600.
	imported := filepath.Join(dir, "mcpflow.json")
	runImport(t, claude, "-o", imported)
	info, err := os.Stat(imported)
	is.NoErr(err)
	is.Equal(info.Mode().Perm(), os.FileMode(0o600))
	_, err = config.Load(imported)
	is.NoErr(err) // the written config loads

	t.Run("serve the Claude Desktop file", func(t *testing.T) { servesSequentialThinking(t, claude, node) })
	t.Run("serve the imported config", func(t *testing.T) { servesSequentialThinking(t, imported, node) })
	_, err = os.Stat(filepath.Join(dir, config.DefaultStoreRoot))
	is.NoErr(err) // the default store is in the working directory
}

// runImport runs `mcpflow config import` with args and returns its stdout
// and stderr.
func runImport(t *testing.T, args ...string) ([]byte, string) {
	t.Helper()
	is := is.New(t)
	is.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(binary, append([]string{"config", "import"}, args...)...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Logf("mcpflow config import %v: %v\n%s", args, err, stderr.String())
		is.Fail() // config import succeeds
	}
	return stdout.Bytes(), stderr.String()
}

// servesSequentialThinking serves cfgPath with the real binary and checks
// that its one source, sequential-thinking.default, lists its tool and
// answers a call, that the server (node) has the configured variables in
// its environment, the secret expanded, and that the expanded secret is
// in no output.
func servesSequentialThinking(t *testing.T, cfgPath, node string) {
	is := is.New(t)
	const conn = "sequential-thinking.default"
	pr := startProcess(t, cfgPath, strings.ReplaceAll(t.Name(), "/", "_")+".log")
	c := dialURL(t, pr.url)
	ctx := testContext(t)

	conns, err := c.ListConnections(ctx)
	is.NoErr(err)
	is.Equal(len(conns.Connections), 1)
	is.Equal(conns.Connections[0].ID, conn) // <name>.default

	refreshed, err := c.RefreshConnectionCatalog(ctx, conn)
	is.NoErr(err)
	is.Equal(refreshed.NodeCount, 1) // the server's one tool
	caps, err := c.ListCapabilities(ctx, p.ListCapabilitiesParams{SourceID: ptr(conn)})
	is.NoErr(err)
	is.Equal(caps.Total, 1)
	is.Equal(caps.Capabilities[0].Name, conn+".sequentialthinking")

	var res p.CapabilityCallResult
	is.NoErr(c.Call(ctx, p.MethodCapabilitiesCall, p.CallCapabilityParams{QualifiedName: conn + ".sequentialthinking",
		Payload: p.Object{"thought": "imported from Claude Desktop", "nextThoughtNeeded": false, "thoughtNumber": 1, "totalThoughts": 1}}, &res))
	is.Equal(res.Outcome, "ok") // the call goes through the imported source
	is.Equal(res.Output["thoughtHistoryLength"], float64(1))

	nodeExe, err := filepath.EvalSymlinks(node)
	is.NoErr(err)
	server := runningBelow(pr, nodeExe)
	is.True(server != 0) // the server runs below mcpflow
	env := environOf(t, server)
	is.True(slices.Contains(env, "SEQ_TOKEN="+importSecret))      // the configured variable reaches the server, expanded
	is.True(slices.Contains(env, "DISABLE_THOUGHT_LOGGING=true")) // as does the plain one

	health, err := c.Health(ctx)
	is.NoErr(err)
	is.Equal(health.StoreRoot, config.DefaultStoreRoot)

	shown, err := json.Marshal(conns)
	is.NoErr(err)
	code, _ := pr.terminate(t)
	is.Equal(code, 0)
	logs, err := os.ReadFile(pr.logs)
	is.NoErr(err)
	is.True(!strings.Contains(string(logs)+string(shown), importSecret)) // the secret is in no log and no response
}
