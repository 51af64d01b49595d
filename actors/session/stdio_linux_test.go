package session

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/matryer/is"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/session/reap"
	"github.com/mcpflow/mcpflow/fakes/procs"
)

func TestStdioRunsTheServerUnderTheReaperWithTheGraces(t *testing.T) {
	is := is.New(t)
	conn := config.Connection{Kind: "mcp", ID: "tool.main", Transport: config.Transport{Kind: config.TransportStdio, Command: "npx", Args: []string{"-y", "server"}}}
	opts := DefaultOptions()
	opts.StdioTermGrace = 250 * time.Millisecond
	opts.StdioReaper = []string{"/usr/local/bin/mcpflow", "reap"}
	tr, err := NewStdio(opts, nil).NewTransport(conn)
	is.NoErr(err)
	cmd := tr.(*stdioTransport).cmd
	is.Equal(cmd.Path, "/usr/local/bin/mcpflow")
	is.Equal(cmd.Args, []string{"/usr/local/bin/mcpflow", "reap", "--close-grace=1s", "--term-grace=250ms", "--lifeline-fd=3", "--", "npx", "-y", "server"})
	is.Equal(cmd.SysProcAttr.Setpgid, true)
	is.Equal(cmd.SysProcAttr.Pdeathsig, reap.ParentDeathSignal) // the reaper stops its tree when mcpflow dies

	direct, err := Stdio{}.NewTransport(conn)
	is.NoErr(err)
	is.Equal(direct.(*stdioTransport).cmd.Args, []string{"npx", "-y", "server"})
	is.Equal(direct.(*stdioTransport).cmd.SysProcAttr.Pdeathsig, syscall.SIGKILL)
}

// startRaw starts command through a Stdio without an MCP handshake.
func startRaw(t *testing.T, s Stdio, script string) (*stdioTransport, mcp.Connection) {
	t.Helper()
	is := is.New(t)
	is.Helper()
	conn := config.Connection{Kind: "mcp", ID: "raw.one", Transport: config.Transport{Kind: config.TransportStdio, Command: "sh", Args: []string{"-c", script}}}
	tr, err := s.NewTransport(conn)
	is.NoErr(err)
	c, err := tr.Connect(context.Background())
	is.NoErr(err)
	st := tr.(*stdioTransport)
	t.Cleanup(func() { _ = st.Kill() })
	return st, c
}

func TestStdioCloseKillsWhatTheServerLeftInItsGroup(t *testing.T) {
	is := is.New(t)
	dir := t.TempDir()
	st, c := startRaw(t, Stdio{CloseGrace: 10 * time.Second, TermGrace: 10 * time.Second},
		`sleep 300 & echo $! > `+dir+`/child; exec cat`)
	child := procs.PidIn(t, dir+"/child")
	start := time.Now()
	is.NoErr(c.Close()) // cat exits on end of file: status 0
	took := time.Since(start)
	t.Logf("close took %s", took)
	is.True(took < 10*time.Second) // no grace waited out: cat exits, SIGTERM ends the sleep
	procs.GoneWithin(t, time.Second, child)
	is.True(!groupAlive(st.cmd.Process.Pid, nil))
}

func TestStdioCloseKillsAServerThatIgnoresStdinAndSIGTERM(t *testing.T) {
	is := is.New(t)
	g := reap.Grace{Close: 100 * time.Millisecond, Term: 150 * time.Millisecond}
	_, c := startRaw(t, Stdio{CloseGrace: g.Close, TermGrace: g.Term}, `trap '' TERM; exec sleep 300`)
	start := time.Now()
	err := c.Close()
	took := time.Since(start)
	t.Logf("close took %s: %v", took, err)
	is.True(err != nil && strings.Contains(err.Error(), "signal: killed")) // SIGKILL ended it
	is.True(took >= g.Close+g.Term)                                        // after both graces
	is.True(took < g.Close+g.Term+killWait)
}
