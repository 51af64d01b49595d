package integration

// Results a model can read (issue 30, item 3), through the real mcpflow
// binary with npm @modelcontextprotocol/server-everything behind it: the
// MCP inspector's --strict tools/list finds no schema-portability problem
// in the deployment tools and the face's own tools; a tool result's text
// is the run's output, with real newlines and no escaping; and no
// description names an internal capability such as wf.std.runtime_error.

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/matryer/is"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/api/client"
	p "github.com/mcpflow/mcpflow/api/protocol"
)

// The MCP inspector, whose CLI's --strict tools/list reports tool schemas
// that do not port across clients.
const (
	inspectorPackage = "@modelcontextprotocol/inspector"
	inspectorVersion = "2.12.0"
)

func TestToolResultsAndSchemasAreReadable(t *testing.T) {
	t.Parallel() // its own mcpflow and upstream: see parallelTests
	is := is.New(t)
	node, script := everythingTS(t)
	_, prefix := nodePeers(t, pinnedPeer{inspectorPackage, inspectorVersion})

	conn := "readable.default"
	dir := t.TempDir()
	pr, c := serveMCPFlowWith(t, dir, conn, config.Server{
		Sources: []config.Connection{stdioSource(conn, node, script, "stdio")},
		MCP:     &config.MCP{Tools: config.MCPToolsPerDeployment, Authoring: true},
	})
	ctx := testContext(t)
	for tool, name := range map[string]string{"echo": "echo", "get-tiny-image": "tiny", "get-structured-content": "weather", "get-resource-reference": "reference"} {
		buildToolDeployment(t, c, conn, tool, name)
	}
	// A workflow whose author wrote a type array, a property that
	// constrains nothing and a description of their own: offered
	// portably, in their words.
	loose := p.Object{"type": "object", "required": []any{"message"}, "properties": p.Object{
		"message": p.Object{"type": []any{"string", "null"}, "description": "What to say back."},
		"extra":   p.Object{"description": "Anything at all."},
	}}
	ws, err := c.CreateDraftWorkspaceFromCapability(ctx, p.CreateFromCapabilityParams{WorkspaceID: "loose_ws", CapabilityName: conn + ".echo", Name: ptr("loose"), InputSchema: loose})
	is.NoErr(err)
	if ws.Status != "valid" {
		t.Logf("loose draft: %+v", ws)
	}
	saved, err := c.CreateArtifactFromWorkspace(ctx, p.CreateArtifactParams{WorkspaceID: "loose_ws", ArtifactID: "loose", Version: 1, Title: "Loose echo", Outcomes: []string{"ok", "error"}, Description: ptr("Says the message back, whatever it is.")})
	is.NoErr(err)
	is.True(saved.Saved)
	_, err = c.SaveDeployment(ctx, p.Object{"id": "loose.default", "artifact_id": "loose", "artifact_version": 1, "bindings": []any{p.Object{"logical_source": conn, "concrete_source": conn}}})
	is.NoErr(err)
	endpoint := strings.Replace(strings.Replace(pr.url, "ws://", "http://", 1), "/ws", "/mcp", 1)

	// (a) The inspector's strict lint of tools/list: no warning, no error.
	cli := filepath.Join(prefix, "node_modules", filepath.FromSlash(inspectorPackage), "clients", "launcher", "build", "index.js")
	cmd := exec.CommandContext(ctx, "node", cli, "--cli", endpoint, "--strict", "--method", "tools/list")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.Env = append(os.Environ(), "MCP_CATALOG_PATH="+filepath.Join(dir, "inspector-catalog.json"))
	runErr := cmd.Run()
	if runErr != nil || stderr.Len() > 0 {
		t.Logf("inspector --strict: %v\n%s", runErr, stderr.String())
	}
	is.NoErr(runErr)                                           // the inspector lists the tools
	is.True(!strings.Contains(stderr.String(), "Warning:"))    // no portability warning
	is.True(!strings.Contains(stderr.String(), "Error:"))      // nor error
	is.True(!strings.Contains(stderr.String(), "portability")) // nor a count of them
	var listed struct {
		Tools []map[string]any `json:"tools"`
	}
	is.NoErr(json.Unmarshal(stdout.Bytes(), &listed))
	names := map[string]bool{}
	for _, tool := range listed.Tools {
		names[tool["name"].(string)] = true
	}
	for _, tool := range listed.Tools {
		if tool["name"] == "loose" {
			is.Equal(tool["description"], "Says the message back, whatever it is.") // the author's words alone
		}
	}
	for _, want := range []string{"echo", "tiny", "weather", "reference", "loose", "mcpflow_get_run", "mcpflow_resume_run", "mcpflow_cancel_run", "mcpflow_draft", "mcpflow_draft_step", "mcpflow_draft_bind", "mcpflow_draft_route", "mcpflow_publish", "mcpflow_search_capabilities"} {
		if !names[want] {
			t.Logf("tools listed: %v", names)
		}
		is.True(names[want]) // the deployments and the face's own tools were linted
	}

	// (b) No description, of a tool or in its schemas, names wf.std.
	raw, err := json.Marshal(listed.Tools)
	is.NoErr(err)
	is.True(!bytes.Contains(raw, []byte("wf.std")))

	// A result's text is the output: real newlines, nothing escaped.
	session := connectFace(t, endpoint)
	call := func(name string, args map[string]any) *mcp.CallToolResult {
		t.Helper()
		res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		is.NoErr(err)
		for _, text := range textsOf(res) {
			if strings.Contains(text, `\n`) || strings.Contains(text, `\u00`) {
				t.Logf("%s answered %q", name, text)
			}
			is.True(!strings.Contains(text, `\n`))   // no escaped newline in a text block
			is.True(!strings.Contains(text, `\u00`)) // nor an escaped <, > or &
		}
		return res
	}
	said := "line one\nline two -> <done> & \"quoted\""
	res := call("echo", map[string]any{"message": said})
	is.True(!res.IsError)
	is.Equal(textsOf(res), []string{"Echo: " + said}) // the tool's text itself, its newline real

	res = call("weather", map[string]any{"location": "Chicago"})
	texts := textsOf(res)
	is.Equal(len(texts), 1)
	is.True(strings.Contains(texts[0], "\n  \"temperature\": ")) // the output alone, as indented JSON
	is.True(!strings.Contains(texts[0], "run_id"))

	res = call("tiny", map[string]any{})
	images := 0
	for _, b := range res.Content {
		switch b := b.(type) {
		case *mcp.ImageContent:
			images++
		case *mcp.TextContent:
			is.True(!strings.Contains(b.Text, everythingTinyImage)) // no base64 in a text
		}
	}
	is.Equal(images, 1) // the image as an image block

	res = call("reference", map[string]any{"resourceType": "Text", "resourceId": 0})
	is.True(res.IsError) // a failed run is an error whose text is why
	texts = textsOf(res)
	is.Equal(len(texts), 1)
	is.True(strings.Contains(texts[0], everythingRejected)) // in the server's words
}

// serveMCPFlowWith starts the mcpflow binary with server's config (its
// store in dir), stopped at cleanup, and answers it with a client
// connected to it, conn's catalog read.
func serveMCPFlowWith(t *testing.T, dir, conn string, server config.Server) (*process, *client.Client) {
	t.Helper()
	is := is.New(t)
	is.Helper()
	server.Store = config.Store{Root: filepath.Join(dir, "store")}
	data, err := json.Marshal(config.File{Version: 1, Server: server})
	is.NoErr(err)
	cfgPath := filepath.Join(dir, "mcpflow.json")
	is.NoErr(os.WriteFile(cfgPath, data, 0o600))
	pr := startProcess(t, cfgPath, "mcpflow.log")
	t.Cleanup(func() { stopEverythingMCPFlow(t, pr, nil) })
	c := dialURL(t, pr.url)
	_, err = c.RefreshConnectionCatalog(testContext(t), conn)
	is.NoErr(err)
	return pr, c
}

// textsOf is the text of each text block of a tool result.
func textsOf(res *mcp.CallToolResult) []string {
	var out []string
	for _, b := range res.Content {
		if text, ok := b.(*mcp.TextContent); ok {
			out = append(out, text.Text)
		}
	}
	return out
}
