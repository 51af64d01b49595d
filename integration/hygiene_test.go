package integration

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/api/client"
	p "github.com/mcpflow/mcpflow/api/protocol"
	"github.com/mcpflow/mcpflow/fakes/poll"
)

// hygieneConfig writes a config with sources and a store under dir.
func hygieneConfig(t *testing.T, dir string, sources ...config.Connection) string {
	t.Helper()
	is := is.New(t)
	is.Helper()
	data, err := json.Marshal(config.File{Version: 1, Server: config.Server{Store: config.Store{Root: filepath.Join(dir, "store")}, Sources: sources}})
	is.NoErr(err)
	path := filepath.Join(dir, "mcpflow.json")
	is.NoErr(os.WriteFile(path, data, 0o600))
	return path
}

// echoThrough calls connID's echo tool through capabilities.call.
func echoThrough(t *testing.T, c *client.Client, connID string) {
	t.Helper()
	is := is.New(t)
	is.Helper()
	ctx := testContext(t)
	_, err := c.RefreshConnectionCatalog(ctx, connID)
	is.NoErr(err)
	var res p.CapabilityCallResult
	is.NoErr(c.Call(ctx, p.MethodCapabilitiesCall, p.CallCapabilityParams{QualifiedName: connID + ".echo", Payload: p.Object{"message": "hi"}}, &res))
	is.Equal(res.Outcome, "ok") // the stdio source answers
	is.Equal(res.Output["message"], "hi")
}

// descendantsOf lists every live process below pid, from /proc.
func descendantsOf(pid int) []int {
	entries, _ := os.ReadDir("/proc")
	children := map[int][]int{}
	for _, e := range entries {
		id, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid, state, ok := procStat(id); ok && state != "Z" {
			children[ppid] = append(children[ppid], id)
		}
	}
	var out []int
	for next := []int{pid}; len(next) > 0; {
		id := next[0]
		next = append(next[1:], children[id]...)
		out = append(out, children[id]...)
	}
	sort.Ints(out)
	return out
}

// pidFrom polls path until the script has written a pid to it.
func pidFrom(t *testing.T, path string) int {
	t.Helper()
	data := poll.Value(t, "a pid in "+path, 10*time.Second, func() ([]byte, bool) {
		data, err := os.ReadFile(path)
		return data, err == nil && bytes.HasSuffix(data, []byte("\n"))
	})
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	is.New(t).NoErr(err)
	return pid
}

// TestHygieneNoDescendantOutlivesMcpflowKilledWithSIGKILL starts a stdio
// source through a wrapper (`sh -c 'CHILD & exec SERVER'`, as npx or uvx
// would), with one grandchild in the server's process group and one that
// left it (setsid), makes a call, SIGKILLs mcpflow, and finds no process
// it had started alive 2 s later.
func TestHygieneNoDescendantOutlivesMcpflowKilledWithSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("hygiene test: starts and kills the real binary")
	}
	is := is.New(t)
	dir := t.TempDir()
	src := stdioSource("wrapped.default", "sh", "-c",
		`sleep 300 & echo $! > "$PIDS/grandchild"; setsid sleep 300 & echo $! > "$PIDS/escaped"; echo $$ > "$PIDS/server"; exec "$FAKEMCP"`)
	src.Transport.Env = map[string]string{"PIDS": dir, "FAKEMCP": fakeMCP}
	if raceDetector { // the reaper and fakemcp see only their source's environment
		src.Transport.Env["GORACE"] = os.Getenv("GORACE")
	}
	pr := startProcess(t, hygieneConfig(t, dir, src), "hygiene.log")
	c := dialURL(t, pr.url)
	echoThrough(t, c, "wrapped.default")

	server, grandchild, escaped := pidFrom(t, filepath.Join(dir, "server")), pidFrom(t, filepath.Join(dir, "grandchild")), pidFrom(t, filepath.Join(dir, "escaped"))
	tree := descendantsOf(pr.cmd.Process.Pid)
	t.Logf("mcpflow %d's descendants: %v (server %d, grandchild %d, escaped %d)", pr.cmd.Process.Pid, tree, server, grandchild, escaped)
	for _, pid := range []int{server, grandchild, escaped} {
		is.True(slices.Contains(tree, pid)) // each runs below mcpflow
	}
	is.True(len(tree) >= 4) // and so does the reaper

	pr.kill(t)
	killed := time.Now()
	if !poll.Until(2*time.Second, func() bool { return !slices.ContainsFunc(tree, alive) }) {
		for _, pid := range tree {
			if alive(pid) {
				data, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
				t.Logf("process %d (%q) still alive 2s after mcpflow's SIGKILL", pid, bytes.ReplaceAll(data, []byte{0}, []byte{' '}))
			}
		}
		logs, _ := os.ReadFile(pr.logs)
		t.Logf("mcpflow's log:\n%s", logs)
		is.Fail() // no descendant of mcpflow survives it by 2 s
	}
	t.Logf("all %d descendants gone %s after the SIGKILL", len(tree), time.Since(killed).Round(time.Millisecond))
}

// TestHygieneStdioServersSeeOnlyAMinimalEnvironment runs fakemcp as a
// stdio source of a mcpflow whose own environment holds a secret, and
// reads the server's environment: PATH, HOME and LANG from mcpflow's,
// plus what the source configures, and nothing else.
func TestHygieneStdioServersSeeOnlyAMinimalEnvironment(t *testing.T) {
	if testing.Short() {
		t.Skip("hygiene test: starts the real binary")
	}
	is := is.New(t)
	t.Setenv("MCPFLOW_HYGIENE_SECRET", "s3cret-of-mcpflow") // mcpflow's environment, inherited from the test
	t.Setenv("LANG", "C.UTF-8")
	dir := t.TempDir()
	src := stdioSource("env.default", fakeMCP)
	src.Transport.Env = map[string]string{"HYGIENE_CONFIGURED": "from-the-source"}
	pr := startProcess(t, hygieneConfig(t, dir, src), "env.log")
	c := dialURL(t, pr.url)
	echoThrough(t, c, "env.default")

	server := runningBelow(pr, fakeMCP)
	is.True(server != 0) // fakemcp runs below mcpflow
	got := environOf(t, server)
	want := []string{"HYGIENE_CONFIGURED=from-the-source"}
	for _, k := range []string{"PATH", "HOME", "LANG"} {
		if v, ok := os.LookupEnv(k); ok {
			want = append(want, k+"="+v)
		}
	}
	sort.Strings(want)
	t.Logf("server %d's environment: %q", server, got)
	is.Equal(got, want) // only the minimal set and the configured variable
}

// runningBelow is the pid of a process below pr whose executable is exe
// (0: none).
func runningBelow(pr *process, exe string) int {
	for _, pid := range descendantsOf(pr.cmd.Process.Pid) {
		if path, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/exe"); err == nil && path == exe {
			return pid
		}
	}
	return 0
}

// environOf is the environment of process pid, sorted.
func environOf(t *testing.T, pid int) []string {
	t.Helper()
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	is.New(t).NoErr(err)
	env := strings.Split(strings.TrimSuffix(string(data), "\x00"), "\x00")
	sort.Strings(env)
	return env
}
