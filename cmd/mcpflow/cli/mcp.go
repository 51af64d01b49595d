package cli

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/secrets"
	"github.com/mcpflow/mcpflow/api/access"
	"github.com/mcpflow/mcpflow/api/client"
	"github.com/mcpflow/mcpflow/api/mcpface"
	"github.com/mcpflow/mcpflow/api/protocol"
)

// newMCPCommand is `mcpflow mcp`: the MCP face over stdio, backed by a
// running server, and `mcp config`, the snippets that add it to a host.
func newMCPCommand(r *remote) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "mcp",
		Example: "  mcpflow mcp --url ws://127.0.0.1:8765/ws   # what an MCP host launches\n  mcpflow mcp config claude-desktop",
		Short:   "Serve mcpflow's MCP face over stdio, for hosts that launch commands",
		Long: `Serve mcpflow's MCP face over stdio: every deployment of the server at
--url offered as an MCP tool, a tool call a durable run, beside what the
server's /mcp offers the token too (its server.mcp: the connections it
exposes, the authoring tools). For hosts that launch MCP servers as
commands (Claude Desktop, Claude Code, Cursor, VS Code); hosts that
speak streamable HTTP may use the server's /mcp.

It is a client of the running server: every call goes over its WebSocket
with --token (or $` + envToken + `), and the server enforces the token's
scopes. stdout carries MCP only; logs go to stderr. It serves until stdin
closes (the host ends the session), a signal, or the lost connection.

'mcpflow mcp config HOST' prints the snippet that adds it to a host.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// Anything written to stdout but MCP breaks the host's session:
			// logs go to stderr.
			log := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), nil))
			slog.SetDefault(log)
			return r.do(cmd, func(ctx context.Context, c *conn) error {
				return serveStdio(ctx, c.Client, &mcp.StdioTransport{}, log)
			})
		},
	}
	cmd.AddCommand(newMCPConfigCommand(r))
	return cmd
}

// serveStdio serves the MCP face on t, through cl, until the MCP session
// ends (stdin closed), ctx does, or the connection to the server is lost.
func serveStdio(ctx context.Context, cl *client.Client, t mcp.Transport, log *slog.Logger) error {
	ctx, cancel := context.WithCancelCause(ctx)
	var running sync.WaitGroup
	defer func() {
		cancel(nil) // the face's watch and the watchdog end with ctx
		running.Wait()
	}()
	running.Go(func() {
		select {
		case <-cl.Done():
			cancel(errLostServer)
		case <-ctx.Done():
		}
	})
	who, gate, cfg, err := whoami(ctx, cl)
	if err != nil {
		return withCode(ExitUnreachable, err)
	}
	// A process of one client: its interrupts' request states are sealed
	// under a key of its own.
	states, err := secrets.Ephemeral()
	if err != nil {
		return err
	}
	// Its one MCP session has no id: it gets one, for the upstream
	// sessions of the connections exposed per_client.
	lone := make([]byte, 16)
	if _, err := rand.Read(lone); err != nil {
		return err
	}
	face := mcpface.New(mcpface.Options{Config: cfg, Watch: cl, Version: readBuildInfo().String(), Logger: log, States: states,
		LoneSession: hex.EncodeToString(lone), Exposures: exposuresOf(cl)})
	running.Go(func() { face.Run(ctx) })
	// The face offers what the server says the token may do; the server
	// still checks every call.
	err = face.NewServer(ctx, who, cl, gate).Run(ctx, t)
	if cause := context.Cause(ctx); errors.Is(cause, errLostServer) {
		return withCode(ExitUnreachable, cause)
	}
	if err != nil && ctx.Err() == nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("mcp over stdio: %w", err)
	}
	return nil
}

// errLostServer ends `mcpflow mcp` when its server connection is lost.
var errLostServer = errors.New("the connection to the server was lost")

// whoami asks the server who the token is (workflow.access.whoami): its
// name, scopes, the deployments and exposed connections it sees, and the
// methods it may call, which are what the face lists; and the server's
// MCP face (server.mcp), so that this face offers what /mcp does: the
// same tools, exposed connections and authoring tools. A server that
// does not say gives the defaults (nil).
func whoami(ctx context.Context, cl *client.Client) (access.Principal, mcpface.Callable, *config.MCP, error) {
	var who protocol.WhoamiResult
	if err := cl.Call(ctx, protocol.MethodAccessWhoami, nil, &who); err != nil {
		return access.Principal{}, mcpface.Callable{}, nil, fmt.Errorf("ask the server who the token is: %w", err)
	}
	cfg, err := faceConfig(who.MCPFace)
	if err != nil {
		return access.Principal{}, mcpface.Callable{}, nil, err
	}
	gate := mcpface.Callable{Token: who.Name, Methods: who.Methods}
	if who.Anonymous {
		return access.Anonymous, gate, cfg, nil
	}
	scopes := make([]access.Scope, len(who.Scopes))
	for i, s := range who.Scopes {
		scopes[i] = access.Scope(s)
	}
	return access.NewPrincipal(who.Name, scopes, who.MCPDeployments).WithConnections(who.MCPConnections), gate, cfg, nil
}

// faceConfig is the server.mcp block the server described; nil for none.
func faceConfig(f *protocol.MCPFace) (*config.MCP, error) {
	if f == nil {
		return nil, nil
	}
	cfg := &config.MCP{Tools: f.Tools, MaxTools: f.MaxTools, Deployments: f.Deployments, Authoring: f.Authoring, HeartbeatMS: f.HeartbeatMS}
	raw, err := json.Marshal(f.Expose)
	if err == nil {
		err = json.Unmarshal(raw, &cfg.Expose)
	}
	if err != nil {
		return nil, fmt.Errorf("the server's exposed connections (mcp_face.expose): %w", err)
	}
	return cfg, nil
}

// exposuresOf reads the connections the server exposes to the token
// (whoami's mcp_face.expose), for each refresh of the face: a source
// registry apply may expose or withdraw one while the process runs.
func exposuresOf(cl *client.Client) func(context.Context) ([]config.MCPExpose, error) {
	return func(ctx context.Context) ([]config.MCPExpose, error) {
		_, _, cfg, err := whoami(ctx, cl)
		if err != nil || cfg == nil {
			return nil, err
		}
		return cfg.Expose, nil
	}
}
