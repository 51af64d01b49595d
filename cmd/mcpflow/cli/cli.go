// Package cli owns mcpflow's command line: the cobra command tree, its
// flags and help, the server commands (serve, demo-server, the hidden
// reap), version, and the client commands that talk to a running server
// over /ws (status, caps, workflow, deploy, deployments, artifacts, run,
// runs, events, auth, sources, registry, schema, bench, mcp), explain: their
// tables, their -o json output, their exit codes and the completion of ids.
package cli

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/mcpflow/mcpflow/api/client"
	"github.com/mcpflow/mcpflow/api/jsonrpc"
)

// Exit codes of mcpflow. They are part of the command line's contract
// (scripts test them) and are listed in `mcpflow --help`.
const (
	// ExitOK: the command did what it was asked; a run it waited for
	// completed.
	ExitOK = 0
	// ExitError: bad usage, or any other error.
	ExitError = 1
	// ExitRunNotCompleted: the run finished without completing (failed
	// or cancelled).
	ExitRunNotCompleted = 2
	// ExitRunInterrupted: the run is interrupted, waiting for a resume.
	ExitRunInterrupted = 3
	// ExitUnreachable: the server could not be reached, or refused the
	// client (-32001 no valid token, -32003 outside its scopes).
	ExitUnreachable = 4
)

const exitCodesHelp = `Exit codes:
  0  ok (a run waited for completed)
  1  usage or other error
  2  the run finished without completing (failed or cancelled)
  3  the run is interrupted, waiting for: mcpflow runs resume ID --payload JSON
  4  the server is unreachable, or refused the client (-32001, -32003)`

// exitError is an error that says which exit code it means. A nil err
// exits with code and prints nothing.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return ""
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// withCode marks err to exit with code.
func withCode(code int, err error) error { return &exitError{code: code, err: err} }

// exitCode is the exit code err means.
func exitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	if e, ok := errors.AsType[*exitError](err); ok {
		return e.code
	}
	if errors.Is(err, client.ErrClosed) {
		return ExitUnreachable
	}
	if e, ok := errors.AsType[*jsonrpc.Error](err); ok && (e.Code == jsonrpc.Unauthenticated || e.Code == jsonrpc.Forbidden) {
		return ExitUnreachable
	}
	return ExitError
}

// Main runs the mcpflow command line on args (the words after the program
// name) and returns the exit code. Errors go to stderr.
func Main(args []string) int {
	return run(args, os.Stdout, os.Stderr)
}

// run is Main with its output streams.
func run(args []string, stdout, stderr io.Writer) int {
	root := NewRootCommand()
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	// A command that failed before it began to run failed on its flags
	// or arguments: say where its usage is.
	ran := false
	onRun(root, func() { ran = true })
	cmd, err := root.ExecuteC()
	if err == nil {
		return ExitOK
	}
	asJSON := false
	if f := cmd.Flag("output"); f != nil {
		asJSON = f.Value.String() == outputJSON
	}
	if msg := userMessage(err, asJSON); msg != "" {
		fmt.Fprintln(stderr, "mcpflow:", msg)
	}
	if !ran {
		fmt.Fprintf(stderr, "Run '%s --help' for usage.\n", cmd.CommandPath())
		return ExitError
	}
	return exitCode(err)
}

// onRun has mark called as each command of the tree begins to run (after
// its flags and arguments were accepted).
func onRun(cmd *cobra.Command, mark func()) {
	if run := cmd.RunE; run != nil {
		cmd.RunE = func(cmd *cobra.Command, args []string) error {
			mark()
			return run(cmd, args)
		}
	}
	for _, sub := range cmd.Commands() {
		onRun(sub, mark)
	}
}

// NewRootCommand builds the whole mcpflow command tree.
func NewRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "mcpflow",
		Short: "mcpflow runs workflows over long-lived MCP sessions",
		Long: `mcpflow is an MCP workflow runtime: workflows whose steps call tools on
upstream MCP servers, each connection kept on one long-lived session.

Start the server with 'mcpflow serve'. The client commands talk to it over
its WebSocket: --url (default ` + defaultURL + `, or $` + envURL + `)
and --token (or $` + envToken + `). They print tables for people, or the raw
JSON result with -o json.

` + exitCodesHelp,
		Version:       readBuildInfo().String(),
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	root.SetVersionTemplate("mcpflow {{.Version}}\n")
	root.Example = rootExample

	r := &remote{}
	root.AddGroup(&cobra.Group{ID: groupServer, Title: "Server:"}, &cobra.Group{ID: groupClient, Title: "Client (talk to a running server):"})
	root.AddCommand(newServeCommand(), newDemoServerCommand(), newReapCommand(), newVersionCommand(), newConfigCommand())
	root.AddCommand(newStoreCommand(), newClusterCommand())
	root.AddCommand(newExplainCommand())
	for _, cmd := range []*cobra.Command{
		newStatusCommand(r), newCapsCommand(r), newWorkflowCommand(r), newDeployCommand(r), newRunCommand(r),
		newRunsCommand(r), newSourcesCommand(r), newRegistryCommand(r), newSchemaCommand(r), newBenchCommand(r), newMCPCommand(r),
		newSecretsCommand(r), newWebhooksCommand(r), newSchedulesCommand(r),
		newArtifactsCommand(r), newDeploymentsCommand(r), newEventsCommand(r), newAuthCommand(r),
		newDraftCommand(r),
	} {
		cmd.GroupID = groupClient
		r.addFlags(cmd)
		root.AddCommand(cmd)
	}
	examplesFromSubcommands(root)
	completeFirstArgs(r, root)
	return root
}

// Command groups of the root's help.
const (
	groupServer = "server"
	groupClient = "client"
)

// newGroup is a command that only holds subcommands: alone it shows its
// help; with an unknown subcommand it is a usage error.
func newGroup(use, short string, subs ...*cobra.Command) *cobra.Command {
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(subs...)
	return cmd
}

// newConfigCommand holds the config subcommands.
func newConfigCommand() *cobra.Command {
	cmd := newGroup("config", "Work with mcpflow config files", NewConfigImportCommand())
	cmd.GroupID = groupServer
	return cmd
}
