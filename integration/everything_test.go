package integration

// npm @modelcontextprotocol/server-everything (the TypeScript reference
// server, installed by .ci/run) behind the real mcpflow binary, over each
// upstream transport mcpflow speaks: stdio, streamable HTTP and the legacy
// HTTP+SSE transport.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/config"
	p "github.com/mcpflow/mcpflow/api/protocol"
	"github.com/mcpflow/mcpflow/fakes/poll"
)

// TestServerEverythingOverEveryTransport refreshes server-everything's
// catalog through mcpflow, deploys a workflow over its get-sum tool, runs
// it twice, and checks both runs and the refresh shared one upstream
// session.
func TestServerEverythingOverEveryTransport(t *testing.T) {
	node, script := everythingTS(t)
	preload, err := filepath.Abs(filepath.Join("testdata", "loopback-only.cjs"))
	is.New(t).NoErr(err)

	for _, tc := range []struct {
		name      string // the subtest
		mode      string // server-everything's argument
		endpoint  string // the MCP path on the server, for the HTTP kinds
		transport string // the source's transport kind
	}{
		{name: "stdio", mode: "stdio", transport: config.TransportStdio},
		{name: "http", mode: "streamableHttp", endpoint: "/mcp", transport: config.TransportHTTP},
		{name: "sse", mode: "sse", endpoint: "/sse", transport: config.TransportSSE},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			conn := "everything" + tc.name + ".default"
			var src config.Connection
			if tc.transport == config.TransportStdio {
				src = stdioSource(conn, node, script, tc.mode)
			} else {
				addr := startEverythingTSServer(t, node, preload, script, tc.mode)
				src = config.Connection{Kind: "mcp", ID: conn, Transport: config.Transport{Kind: tc.transport, URL: "http://" + addr + tc.endpoint}}
			}
			dir := t.TempDir()
			cfg := config.File{Version: 1, Server: config.Server{Store: config.Store{Root: filepath.Join(dir, "store")}, Sources: []config.Connection{src}}}
			data, err := json.Marshal(cfg)
			is.NoErr(err)
			cfgPath := filepath.Join(dir, "mcpflow.json")
			is.NoErr(os.WriteFile(cfgPath, data, 0o600))
			pr := startProcess(t, cfgPath, "mcpflow.log")
			// Over stdio the node process is mcpflow's child: the cleanup
			// makes sure the ones noted here are gone.
			var children []int
			t.Cleanup(func() { stopEverythingMCPFlow(t, pr, children) })
			c := dialURL(t, pr.url)
			ctx := testContext(t)

			began := time.Now()
			refreshed, err := c.RefreshConnectionCatalog(ctx, conn)
			if err != nil {
				logs, _ := os.ReadFile(pr.logs)
				t.Logf("refresh over %s failed: %v\nmcpflow log:\n%s", tc.name, err, logs)
			}
			is.NoErr(err) // refresh the catalog
			refreshTook := time.Since(began)
			is.True(refreshed.NodeCount >= 13) // server-everything registers 13 or more tools

			if tc.transport == config.TransportStdio {
				children = everythingChildPIDs(t, pr.cmd.Process.Pid)
				is.Equal(len(children), 1) // mcpflow runs one server process
			}

			sum, err := c.InspectCapability(ctx, conn+".get-sum")
			is.NoErr(err) // the server lists get-sum
			is.Equal(sum.SourceID, conn)
			props, _ := sum.InputSchema["properties"].(map[string]any)
			is.True(props["a"] != nil && props["b"] != nil) // get-sum takes a and b

			deployment := buildToolDeployment(t, c, conn, "get-sum", "sum_"+tc.name)
			var took []time.Duration
			for _, in := range [][2]float64{{2, 3}, {40.5, 1.5}} {
				began := time.Now()
				started, err := c.RunDeployment(ctx, p.StartRunParams{DeploymentID: deployment, WorkflowInput: p.Object{"a": in[0], "b": in[1]}})
				is.NoErr(err)
				is.True(started.RunID != nil)
				run := settled(t, c, *started.RunID)
				took = append(took, time.Since(began))
				if run.Status != "completed" {
					logs, _ := os.ReadFile(pr.logs)
					t.Logf("run over %s: status %q, error %v, diagnostics %+v\nmcpflow log:\n%s", tc.name, run.Status, deref(run.Error), run.Diagnostics, logs)
				}
				is.Equal(run.Status, "completed") // the run completes
				is.Equal(*run.Outcome, "ok")
				want := fmt.Sprintf("The sum of %s and %s is %s.", jsNumber(in[0]), jsNumber(in[1]), jsNumber(in[0]+in[1]))
				is.Equal(run.Output, p.Object{"content": []any{map[string]any{"type": "text", "text": want}}}) // get-sum's text content
			}

			st := onlyStatus(t, c)
			is.Equal(st.ConnectionID, conn)
			is.Equal(st.Session.State, "open")
			is.Equal(st.Session.SessionsOpened, 1) // one session served the refresh and both runs
			is.Equal(st.Session.LastError, (*string)(nil))
			if tc.transport == config.TransportStdio {
				is.Equal(everythingChildPIDs(t, pr.cmd.Process.Pid), children) // the same node process served both runs
			}
			t.Logf("%s: refresh %v (%d tools, %d resources, %d prompts), runs %v", tc.name,
				refreshTook.Round(time.Millisecond), refreshed.NodeCount, refreshed.ResourceCount, refreshed.PromptCount, took)
		})
	}
}

// jsNumber formats a number as JavaScript's String(n) does for the
// values used here.
func jsNumber(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// startEverythingTSServer starts server-everything in mode (sse or
// streamableHttp) on a free loopback port, held there by the preload, in
// its own process group, which the cleanup kills. It returns the address
// once the server accepts connections on it, and only on 127.0.0.1.
func startEverythingTSServer(t *testing.T, node, preload, script, mode string) string {
	t.Helper()
	is := is.New(t)
	is.Helper()
	addr := freeAddr(t)
	_, port, err := net.SplitHostPort(addr)
	is.NoErr(err)

	logPath := filepath.Join(t.TempDir(), "everything-"+mode+".log")
	out, err := os.Create(logPath)
	is.NoErr(err)
	defer out.Close()
	cmd := exec.Command(node, "--require", preload, script, mode)
	cmd.Env = append(os.Environ(), "PORT="+port)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	is.NoErr(cmd.Start()) // start server-everything
	pgid := cmd.Process.Pid
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			t.Logf("server-everything (pid %d) did not exit after SIGKILL", pgid)
			is.Fail() // server-everything exits after SIGKILL
		}
	})

	logs := func() string { data, _ := os.ReadFile(logPath); return string(data) }
	began := time.Now()
	awaitAccepting(t, "server-everything "+mode, addr, 15*time.Second, exitedWhen(exited, logs))
	bound := everythingListeners(t, port)
	t.Logf("server-everything %s (pid %d) accepting on %s after %v; listening sockets %v", mode, pgid, addr, time.Since(began).Round(time.Millisecond), bound)
	if bound != nil {
		is.Equal(bound, []string{"127.0.0.1:" + port}) // the preload keeps the server on loopback
	}
	return addr
}

// everythingListeners returns the local addresses of the TCP sockets
// listening on port, read from /proc/net/tcp and tcp6; nil when those
// cannot be read.
func everythingListeners(t *testing.T, port string) []string {
	t.Helper()
	n, err := strconv.Atoi(port)
	is.New(t).NoErr(err)
	hexPort := fmt.Sprintf("%04X", n)
	var addrs []string
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		f, err := os.Open(table)
		if err != nil {
			return nil
		}
		sc := bufio.NewScanner(f)
		sc.Scan() // the header
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) < 4 || fields[3] != "0A" { // 0A: LISTEN
				continue
			}
			host, hp, ok := strings.Cut(fields[1], ":")
			if !ok || hp != hexPort {
				continue
			}
			addrs = append(addrs, everythingProcAddr(host)+":"+port)
		}
		f.Close()
	}
	return addrs
}

// everythingProcAddr decodes a /proc/net/tcp address: IPv4 as one
// little-endian word, IPv6 as four.
func everythingProcAddr(h string) string {
	b := make(net.IP, 0, len(h)/2)
	for i := 0; i+8 <= len(h); i += 8 {
		w, err := strconv.ParseUint(h[i:i+8], 16, 32)
		if err != nil {
			return h
		}
		b = append(b, byte(w), byte(w>>8), byte(w>>16), byte(w>>24))
	}
	return b.String()
}

// everythingChildPIDs returns the ids of the processes whose parent is
// pid, read from /proc/*/stat, in ascending order.
func everythingChildPIDs(t *testing.T, pid int) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	is.New(t).NoErr(err) // list /proc
	var children []int
	for _, e := range entries {
		id, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue // gone meanwhile
		}
		// pid (comm) state ppid …; comm may hold spaces and parentheses.
		rest := string(data[strings.LastIndexByte(string(data), ')')+1:])
		fields := strings.Fields(rest)
		if len(fields) >= 2 && fields[1] == strconv.Itoa(pid) {
			children = append(children, id)
		}
	}
	return children
}

// everythingAlive says whether process pid exists and is not a zombie.
func everythingAlive(pid int) bool {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	fields := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+1:]))
	return len(fields) > 0 && fields[0] != "Z"
}

// stopEverythingMCPFlow shuts mcpflow down with SIGTERM, so it closes its
// upstream session, then makes sure the processes it had started
// (children) are gone, killing by pid any that outlive it for 10 seconds.
func stopEverythingMCPFlow(t *testing.T, pr *process, children []int) {
	t.Helper()
	is := is.NewRelaxed(t)
	began := time.Now()
	is.NoErr(pr.cmd.Process.Signal(syscall.SIGTERM)) // SIGTERM mcpflow
	select {
	case <-pr.exited:
		if code := pr.cmd.ProcessState.ExitCode(); code != 0 {
			logs, _ := os.ReadFile(pr.logs)
			t.Logf("mcpflow exited %d after SIGTERM\n%s", code, logs)
			is.Fail() // mcpflow exits cleanly on SIGTERM
		}
	case <-time.After(30 * time.Second):
		t.Log("mcpflow still running 30s after SIGTERM; the next cleanup kills it")
		is.Fail() // mcpflow exits after SIGTERM
	}
	took := time.Since(began)
	if !poll.Until(10*time.Second, func() bool { return !slices.ContainsFunc(children, everythingAlive) }) {
		for _, pid := range children {
			if everythingAlive(pid) {
				t.Logf("server process %d still running after mcpflow exited; killing it", pid)
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		is.Fail() // mcpflow's server process ends with mcpflow
	}
	t.Logf("mcpflow stopped on SIGTERM in %v", took.Round(time.Millisecond))
}
