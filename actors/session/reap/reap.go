// Package reap is the small supervisor process mcpflow puts between itself
// and each stdio MCP server on Linux, so that nothing a server starts
// outlives its session or mcpflow, even when mcpflow is killed with
// SIGKILL.
//
// The reaper is the mcpflow binary re-executed as the hidden subcommand
// `mcpflow reap [flags] -- COMMAND [ARGS...]` (Self gives that command,
// Args the rest). It marks itself a child subreaper
// (PR_SET_CHILD_SUBREAPER), so every process the server orphans, even one
// that left the server's process group or session, is re-parented to the
// reaper rather than to PID 1. It starts the server in a new process group
// with stdin, stdout and stderr passed straight through (the MCP stdio
// framing never touches the reaper), then lets go of stdin and stdout.
//
// The reaper learns that mcpflow wants the server gone, or is gone itself,
// from its lifeline: the read end of a pipe whose only write end mcpflow
// holds, so the kernel closes it however mcpflow ends. Its parent-death
// signal (ParentDeathSignal, checked against getppid) is a second
// witness. Then it runs the stop sequence on the server's group and on
// every descendant:
//
//  1. the server's stdin is already closed (by mcpflow, or by the kernel
//     when mcpflow died); wait up to the close grace for the server to exit;
//  2. SIGTERM to the group and to every child of the reaper (the server
//     and each re-parented orphan); wait up to the term grace for all of
//     them to exit;
//  3. SIGKILL to the group and to every child, repeated as killed parents
//     hand their own children to the reaper, until none is left.
//
// The group kill of step 3 runs on every path, also when the server exited
// by itself (the reaper then starts at step 2). TermSignal skips step 1 and
// KillSignal skips to step 3. The reaper exits with the server's status
// (128+N when signal N ended it) once its last descendant is reaped.
package reap

import (
	"strconv"
	"time"
)

const (
	// Subcommand is the hidden mcpflow subcommand that runs Main.
	Subcommand = "reap"
	// LifelineFD is the descriptor mcpflow passes the lifeline on (the
	// first of exec.Cmd.ExtraFiles).
	LifelineFD = 3
)

// Exit codes of the reaper besides the server's own.
const (
	ExitUsage    = 125 // bad flags, or the subreaper cannot be set
	ExitNotFound = 127 // the server's command could not be started
)

// Grace holds the waits of the stop sequence.
type Grace struct {
	// Close is how long a server has to exit after its stdin closes
	// before its group gets SIGTERM.
	Close time.Duration
	// Term is how long the group has after SIGTERM before SIGKILL.
	Term time.Duration
}

// DefaultGrace is used for a zero wait.
var DefaultGrace = Grace{Close: time.Second, Term: time.Second}

// orDefault fills zero or negative waits from DefaultGrace.
func (g Grace) orDefault() Grace {
	if g.Close <= 0 {
		g.Close = DefaultGrace.Close
	}
	if g.Term <= 0 {
		g.Term = DefaultGrace.Term
	}
	return g
}

// Self is the reaper command of the running mcpflow binary: the very
// executable (through /proc/self/exe, so an upgrade that replaced the file
// on disk cannot pair this process with another version's reaper) and
// the subcommand. Linux only.
func Self() []string {
	return []string{"/proc/self/exe", Subcommand}
}

// Args are the arguments after the reaper command that make it run
// command with args and stop it with g, reading its lifeline on
// LifelineFD.
func Args(g Grace, command string, args ...string) []string {
	g = g.orDefault()
	out := []string{
		"--close-grace=" + g.Close.String(),
		"--term-grace=" + g.Term.String(),
		"--lifeline-fd=" + strconv.Itoa(LifelineFD),
		"--", command,
	}
	return append(out, args...)
}
