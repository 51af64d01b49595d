//go:build linux

package reap_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/matryer/is"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/session"
	"github.com/mcpflow/mcpflow/actors/session/reap"
	"github.com/mcpflow/mcpflow/fakes/procs"
)

// The test binary doubles as the reaper (REAP_TEST_ROLE=reaper: the
// `mcpflow reap` subcommand) and as a stand-in for mcpflow
// (REAP_TEST_ROLE=parent: starts REAP_TEST_SCRIPT through session.Stdio
// under the reaper, then waits to be killed).
func TestMain(m *testing.M) {
	switch os.Getenv("REAP_TEST_ROLE") {
	case "reaper":
		os.Exit(reap.Main(os.Args[1:]))
	case "parent":
		os.Exit(parent())
	}
	os.Exit(m.Run())
}

// parent plays mcpflow: it runs a stdio source under the reaper and
// blocks until killed.
func parent() int {
	conn := config.Connection{Kind: "mcp", ID: "reap.test", Transport: config.Transport{
		Kind: config.TransportStdio, Command: "sh", Args: []string{"-c", os.Getenv("REAP_TEST_SCRIPT")},
		Env: map[string]string{"REAP_TEST_ROLE": "reaper"},
	}}
	tr, err := session.Stdio{Reaper: []string{os.Args[0]}, CloseGrace: time.Second, TermGrace: time.Second}.NewTransport(conn)
	if err == nil {
		_, err = tr.Connect(context.Background())
	}
	if err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		return 1
	}
	select {}
}

// reaper is one `mcpflow reap` started by a test, which holds its stdin
// and its lifeline.
type reaper struct {
	cmd      *exec.Cmd
	stdin    *os.File
	lifeline *os.File
	exited   chan struct{}
	dir      string // where the script writes pids
}

// startReaper runs script (sh -c; $D is a directory for pid files) under
// the reaper with grace g.
func startReaper(t *testing.T, g reap.Grace, script string) *reaper {
	t.Helper()
	is := is.New(t)
	is.Helper()
	dir := t.TempDir()
	inR, inW, err := os.Pipe()
	is.NoErr(err)
	lifeR, lifeW, err := os.Pipe()
	is.NoErr(err)
	logs, err := os.Create(filepath.Join(dir, "reaper.log"))
	is.NoErr(err)
	defer logs.Close()
	cmd := exec.Command(os.Args[0], reap.Args(g, "sh", "-c", script)...)
	cmd.Env = []string{"REAP_TEST_ROLE=reaper", "PATH=" + os.Getenv("PATH"), "D=" + dir}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, logs, logs
	cmd.ExtraFiles = []*os.File{lifeR}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	is.NoErr(cmd.Start())
	inR.Close()
	lifeR.Close()
	r := &reaper{cmd: cmd, stdin: inW, lifeline: lifeW, exited: make(chan struct{}), dir: dir}
	go func() {
		_ = cmd.Wait()
		close(r.exited)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-r.exited
		if t.Failed() {
			data, _ := os.ReadFile(filepath.Join(dir, "reaper.log"))
			t.Logf("reaper output:\n%s", data)
		}
	})
	return r
}

// pid polls the pid file name until the script has written it.
func (r *reaper) pid(t *testing.T, name string) int {
	t.Helper()
	return procs.PidIn(t, filepath.Join(r.dir, name))
}

// closeInput does what mcpflow's close does: stdin, then the lifeline.
func (r *reaper) closeInput() {
	r.stdin.Close()
	r.lifeline.Close()
}

// exitWithin waits for the reaper to exit and returns its exit code and
// how long it took from start.
func (r *reaper) exitWithin(t *testing.T, d time.Duration, start time.Time) (int, time.Duration) {
	t.Helper()
	select {
	case <-r.exited:
	case <-time.After(d):
		t.Fatalf("reaper still running %s later", d)
	}
	return r.cmd.ProcessState.ExitCode(), time.Since(start)
}

// tree is a server script that leaves behind a child in its group, a
// child in its own session (out of the group) and an orphan adopted by
// the reaper while the server runs; then it runs server.
func tree(server string) string {
	return `echo $$ > "$D/server"
sleep 300 & echo $! > "$D/child"
setsid sleep 300 & echo $! > "$D/escaped"
(sleep 300 & echo $! > "$D/orphan") &
` + server
}

func (r *reaper) treePIDs(t *testing.T) []int {
	t.Helper()
	return []int{r.pid(t, "server"), r.pid(t, "child"), r.pid(t, "escaped"), r.pid(t, "orphan")}
}

func TestClosingStdinAndTheLifelineStopsTheWholeTree(t *testing.T) {
	is := is.New(t)
	r := startReaper(t, reap.Grace{Close: 10 * time.Second, Term: 10 * time.Second}, tree("exec cat"))
	pids := r.treePIDs(t)
	start := time.Now()
	r.closeInput()
	code, took := r.exitWithin(t, 10*time.Second, start)
	t.Logf("reaper exited %d after %s", code, took)
	is.Equal(code, 0)               // cat's status: it exited on end of file; no grace waited out: SIGTERM ended the rest
	procs.GoneWithin(t, 0, pids...) // the reaper exits only once every descendant is reaped
}

func TestAServerThatIgnoresStdinGetsSIGTERMThenSIGKILL(t *testing.T) {
	is := is.New(t)
	g := reap.Grace{Close: 150 * time.Millisecond, Term: 200 * time.Millisecond}
	r := startReaper(t, g, `trap 'echo term >> "$D/log"' TERM`+"\n"+tree(`while :; do sleep 1; done`))
	pids := r.treePIDs(t)
	start := time.Now()
	r.closeInput()
	code, took := r.exitWithin(t, 5*time.Second, start)
	t.Logf("reaper exited %d after %s", code, took)
	is.Equal(code, 128+int(syscall.SIGKILL)) // the server was killed
	is.True(took >= g.Close+g.Term)          // after both graces
	log, err := os.ReadFile(filepath.Join(r.dir, "log"))
	is.NoErr(err)
	is.True(strings.HasPrefix(string(log), "term")) // SIGTERM came first
	procs.GoneWithin(t, 0, pids...)
}

func TestTermSignalSkipsTheStdinGrace(t *testing.T) {
	is := is.New(t)
	r := startReaper(t, reap.Grace{Close: 10 * time.Second, Term: 10 * time.Second}, `trap 'exit 7' TERM`+"\n"+tree(`while :; do sleep 1; done`))
	pids := r.treePIDs(t)
	start := time.Now()
	is.NoErr(r.cmd.Process.Signal(reap.TermSignal))
	code, took := r.exitWithin(t, 5*time.Second, start)
	t.Logf("reaper exited %d after %s", code, took)
	is.Equal(code, 7) // the server's own exit on SIGTERM
	procs.GoneWithin(t, 0, pids...)
}

func TestAProcessThatLeftTheGroupGetsSIGTERMOnceAdopted(t *testing.T) {
	is := is.New(t)
	// The escaped shell is the server's child in a session of its own:
	// the group SIGTERM misses it, and it is adopted only when the server
	// exits.
	r := startReaper(t, reap.Grace{Close: 10 * time.Second, Term: 10 * time.Second}, `
setsid sh -c 'trap "echo term > \"$D/escaped-log\"; exit 0" TERM; echo $$ > "$D/escaped"; while :; do sleep 1 & wait $!; done' &
trap 'exit 7' TERM; echo $$ > "$D/server"; while :; do sleep 1 & wait $!; done`)
	pids := []int{r.pid(t, "server"), r.pid(t, "escaped")}
	start := time.Now()
	is.NoErr(r.cmd.Process.Signal(reap.TermSignal))
	code, took := r.exitWithin(t, 5*time.Second, start)
	t.Logf("reaper exited %d after %s", code, took)
	is.Equal(code, 7)
	log, err := os.ReadFile(filepath.Join(r.dir, "escaped-log"))
	is.NoErr(err)
	is.Equal(string(log), "term\n") // SIGTERM reached it, well before the term grace's SIGKILL
	procs.GoneWithin(t, 0, pids...)
}

func TestKillSignalKillsTheTreeAtOnce(t *testing.T) {
	is := is.New(t)
	r := startReaper(t, reap.Grace{Close: 10 * time.Second, Term: 10 * time.Second}, tree(`trap '' TERM; exec sleep 300`))
	pids := r.treePIDs(t)
	start := time.Now()
	is.NoErr(r.cmd.Process.Signal(reap.KillSignal))
	code, took := r.exitWithin(t, 5*time.Second, start)
	t.Logf("reaper exited %d after %s", code, took)
	is.Equal(code, 128+int(syscall.SIGKILL))
	procs.GoneWithin(t, 0, pids...)
}

func TestAServerThatExitsTakesWhatItLeftWithIt(t *testing.T) {
	is := is.New(t)
	r := startReaper(t, reap.Grace{Close: 10 * time.Second, Term: 10 * time.Second}, tree(`read go; exit 3`))
	pids := r.treePIDs(t)
	_, err := r.stdin.Write([]byte("go\n")) // the tree is complete: exit
	is.NoErr(err)
	code, took := r.exitWithin(t, 5*time.Second, time.Now())
	t.Logf("reaper exited %d after %s", code, took)
	is.Equal(code, 3) // the server's status; its lifeline was still open
	procs.GoneWithin(t, 0, pids...)
}

func TestASpuriousParentDeathSignalIsIgnored(t *testing.T) {
	is := is.New(t)
	r := startReaper(t, reap.Grace{Close: time.Second, Term: time.Second}, `echo $$ > "$D/server"; exec cat`)
	server := r.pid(t, "server")
	is.NoErr(r.cmd.Process.Signal(reap.ParentDeathSignal)) // the parent is alive: getppid unchanged
	// The reaper keeps serving: stdin still reaches the server.
	_, err := r.stdin.Write([]byte("still here\n"))
	is.NoErr(err)
	is.True(procs.Running(server))
	select {
	case <-r.exited:
		is.Fail() // the reaper ignored a parent-death signal from a live parent
	default:
	}
	r.closeInput()
	code, _ := r.exitWithin(t, 5*time.Second, time.Now())
	is.Equal(code, 0)
}

func TestAMissingCommandExits127(t *testing.T) {
	is := is.New(t)
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], reap.Args(reap.Grace{}, filepath.Join(dir, "no-such-server"))...)
	cmd.Env = []string{"REAP_TEST_ROLE=reaper"}
	out, err := cmd.CombinedOutput()
	is.True(err != nil)
	is.Equal(cmd.ProcessState.ExitCode(), reap.ExitNotFound)
	is.True(strings.Contains(string(out), "no-such-server")) // says what failed
}

func TestNoDescendantOutlivesAParentKilledWithSIGKILL(t *testing.T) {
	is := is.New(t)
	dir := t.TempDir()
	p := exec.Command(os.Args[0])
	p.Env = []string{"REAP_TEST_ROLE=parent", "PATH=" + os.Getenv("PATH"), "REAP_TEST_SCRIPT=" + strings.ReplaceAll(tree("exec cat"), "$D", dir)}
	is.NoErr(p.Start())
	exited := make(chan struct{})
	go func() {
		_ = p.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		_ = p.Process.Kill()
		<-exited
	})
	var pids []int
	for _, name := range []string{"server", "child", "escaped", "orphan"} {
		pids = append(pids, procs.PidIn(t, filepath.Join(dir, name)))
	}
	is.NoErr(p.Process.Signal(syscall.SIGKILL))
	<-exited
	procs.GoneWithin(t, 2*time.Second, pids...) // the server and all it started, within 2 s
}

// startStdio starts script through session.Stdio under the reaper, as
// mcpflow serve does, without an MCP handshake.
func startStdio(t *testing.T, g reap.Grace, script string) (mcp.Transport, mcp.Connection, string) {
	t.Helper()
	is := is.New(t)
	is.Helper()
	dir := t.TempDir()
	conn := config.Connection{Kind: "mcp", ID: "reap.test", Transport: config.Transport{
		Kind: config.TransportStdio, Command: "sh", Args: []string{"-c", script},
		Env: map[string]string{"REAP_TEST_ROLE": "reaper", "D": dir},
	}}
	tr, err := session.Stdio{Reaper: []string{os.Args[0]}, CloseGrace: g.Close, TermGrace: g.Term}.NewTransport(conn)
	is.NoErr(err)
	c, err := tr.Connect(context.Background())
	is.NoErr(err)
	t.Cleanup(func() { _ = tr.(session.Killer).Kill() })
	return tr, c, dir
}

func TestStdioCloseRunsTheSequenceThroughTheReaper(t *testing.T) {
	is := is.New(t)
	g := reap.Grace{Close: 150 * time.Millisecond, Term: 200 * time.Millisecond}
	_, c, dir := startStdio(t, g, tree(`trap '' TERM; exec sleep 300`))
	var pids []int
	for _, name := range []string{"server", "child", "escaped", "orphan"} {
		pids = append(pids, procs.PidIn(t, filepath.Join(dir, name)))
	}
	start := time.Now()
	err := c.Close()
	took := time.Since(start)
	t.Logf("close took %s: %v", took, err)
	is.True(err != nil && strings.Contains(err.Error(), "exit status 137")) // the reaper reports the server's SIGKILL
	is.True(took >= g.Close+g.Term)                                         // both graces
	is.True(took < g.Close+g.Term+3*time.Second)                            // and not much more, even on a loaded machine
	procs.GoneWithin(t, 0, pids...)
}

func TestStdioKillThroughTheReaperIsImmediate(t *testing.T) {
	is := is.New(t)
	tr, c, dir := startStdio(t, reap.Grace{Close: 10 * time.Second, Term: 10 * time.Second}, tree(`trap '' TERM; exec sleep 300`))
	var pids []int
	for _, name := range []string{"server", "child", "escaped", "orphan"} {
		pids = append(pids, procs.PidIn(t, filepath.Join(dir, name)))
	}
	start := time.Now()
	is.NoErr(tr.(session.Killer).Kill())
	procs.GoneWithin(t, 2*time.Second, pids...)
	t.Logf("kill took %s", time.Since(start))
	_ = c.Close() // returns at once: the reaper is gone
	is.True(time.Since(start) < 2*time.Second)
}
