package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/session/reap"
	"github.com/mcpflow/mcpflow/api/client"
	"github.com/mcpflow/mcpflow/api/jsonrpc"
	p "github.com/mcpflow/mcpflow/api/protocol"
)

// runCLI runs the command line in-process and returns its exit code and
// output.
func runCLI(args ...string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	code := run(args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func TestHelpExitsZeroEverywhere(t *testing.T) {
	is := is.New(t)
	root := NewRootCommand()
	count := 0
	var visit func(path []string)
	visit = func(path []string) {
		cmd, _, err := root.Find(path)
		is.NoErr(err)
		if cmd.Hidden {
			return
		}
		code, out, errOut := runCLI(append(path, "--help")...)
		if code != ExitOK {
			t.Logf("%v --help: %s", path, errOut)
		}
		is.Equal(code, ExitOK)                   // --help exits 0
		is.True(strings.Contains(out, "Usage:")) // and prints the usage
		count++
		for _, sub := range cmd.Commands() {
			visit(append(append([]string{}, path...), sub.Name()))
		}
	}
	visit(nil)
	is.True(count > 20) // every command was asked
}

func TestUsageErrorsExitOneAndPointAtTheHelp(t *testing.T) {
	is := is.New(t)
	for _, args := range [][]string{{"nope"}, {"runs", "nope"}, {"run"}, {"serve", "--nope"}, {"workflow", "new"}} {
		code, _, errOut := runCLI(args...)
		is.Equal(code, ExitError)
		is.True(strings.Contains(errOut, "--help' for usage")) // says where the usage is
	}
}

func TestReapGetsItsWordsUntouched(t *testing.T) {
	is := is.New(t)
	// --help is the reaper's to refuse, not cobra's to answer: its flag
	// set knows no such flag, and nothing to run is a usage error.
	code, out, _ := runCLI(reap.Subcommand, "--help")
	is.Equal(code, reap.ExitUsage)
	is.Equal(out, "")
	code, _, _ = runCLI(reap.Subcommand, "--close-grace=1s")
	is.Equal(code, reap.ExitUsage) // no command after the flags
	_, root, _ := runCLI("--help")
	is.True(!strings.Contains(root, "reap")) // hidden
}

func TestExitCodes(t *testing.T) {
	is := is.New(t)
	is.Equal(exitCode(nil), ExitOK)
	is.Equal(exitCode(errors.New("x")), ExitError)
	is.Equal(exitCode(fmt.Errorf("call: %w", client.ErrClosed)), ExitUnreachable)
	is.Equal(exitCode(fmt.Errorf("call: %w", jsonrpc.Errorf(jsonrpc.Unauthenticated, "no token"))), ExitUnreachable)
	is.Equal(exitCode(jsonrpc.Errorf(jsonrpc.Forbidden, "scope")), ExitUnreachable)
	is.Equal(exitCode(jsonrpc.Failed("KeyError", "no such run")), ExitError)
	is.Equal(exitCode(withCode(ExitRunInterrupted, nil)), ExitRunInterrupted)

	id, msg := "run_1", "boom"
	for status, want := range map[string]int{
		statusCompleted: ExitOK, "running": ExitOK, statusFailed: ExitRunNotCompleted,
		statusCancelled: ExitRunNotCompleted, statusInterrupted: ExitRunInterrupted,
	} {
		is.Equal(exitCode(runExit(p.RunResult{RunID: &id, Status: status, Error: &msg})), want)
	}
	is.True(strings.Contains(runExit(p.RunResult{RunID: &id, Status: statusFailed, Error: &msg}).Error(), "boom"))
}

func TestRedactURLDropsSecrets(t *testing.T) {
	is := is.New(t)
	is.Equal(redactURL("ws://user:pw@host:1/ws?token=s3cret#frag"), "ws://host:1/ws")
	is.Equal(redactURL("ws://127.0.0.1:8765/ws"), "ws://127.0.0.1:8765/ws")
	is.True(!strings.Contains(redactURL("::bad url?token=s3cret"), "s3cret"))
}

func TestReadJSONArg(t *testing.T) {
	is := is.New(t)
	obj, err := readJSONArg(`{"n": 12345678901234567890}`, nil)
	is.NoErr(err)
	data, err := json.Marshal(obj)
	is.NoErr(err)
	is.Equal(string(data), `{"n":12345678901234567890}`) // numbers keep their digits
	obj, err = readJSONArg("@-", strings.NewReader(`{"a":1}`))
	is.NoErr(err)
	is.Equal(fmt.Sprint(obj["a"]), "1")
	for _, bad := range []string{"[1]", "null", `{"a":1} {}`, "nope", "@/no/such/file"} {
		_, err := readJSONArg(bad, strings.NewReader(""))
		is.True(err != nil) // refused
	}
}

func TestScaffoldDefaults(t *testing.T) {
	is := is.New(t)
	s := scaffold{capability: "demo.default.counter"}
	s.defaults()
	is.Equal(s, scaffold{capability: "demo.default.counter", workspaceID: "counter_ws", artifactID: "counter_workflow",
		deploymentID: "counter_workflow.default"}) // the title is the server's (records.ScaffoldTitle)
	s = scaffold{capability: "gh.team.Search-Issues", artifactID: "mine"}
	s.defaults()
	is.Equal(s.workspaceID, "search_issues_ws")
	is.Equal(s.deploymentID, "mine.default")
}

func TestDeployFromFlags(t *testing.T) {
	is := is.New(t)
	f := deployFlags{artifact: "a", version: 2, bindings: []string{"l=c"}}
	d, err := f.deployment(nil, nil)
	is.NoErr(err)
	is.Equal(d["id"], "a.default")
	is.Equal(d["bindings"], []any{p.Object{"logical_source": "l", "concrete_source": "c"}})
	_, err = (&deployFlags{artifact: "a", bindings: []string{"nope"}}).deployment(nil, nil)
	is.True(err != nil) // LOGICAL=CONCRETE
	_, err = (&deployFlags{artifact: "a"}).deployment([]string{"-"}, strings.NewReader("{}"))
	is.True(err != nil) // a file or flags, not both
}

func TestCells(t *testing.T) {
	is := is.New(t)
	var none *string
	text := "two\nlines\tand tabs"
	is.Equal(cell(none), "-")
	is.Equal(cell(&text), "two lines and tabs")
	is.Equal(cell(""), "-")
	is.Equal(cell(true), "yes")
	is.Equal(cell([]string{"a", "b"}), "a,b")
	is.Equal(cell(map[string]any{"k": 1}), `{"k":1}`)
	is.Equal(cell(map[string]any(nil)), "-")
	is.Equal(clip("abcdef", 4), "abc…")
}

func TestVersionNamesTheGoVersion(t *testing.T) {
	is := is.New(t)
	code, out, _ := runCLI("version", "-o", "json")
	is.Equal(code, ExitOK)
	var b buildInfo
	is.NoErr(json.Unmarshal([]byte(out), &b))
	is.True(strings.HasPrefix(b.Go, "go"))
	_, short, _ := runCLI("--version")
	is.True(strings.Contains(short, b.Go))
}
