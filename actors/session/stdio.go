package session

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/session/reap"
)

// Stdio starts MCP servers as subprocesses speaking newline-delimited
// JSON-RPC over stdin/stdout. Each server runs in its own process group,
// with a minimal environment, and has its stderr logged line by line.
//
// Stopping a server is: close its stdin, give it CloseGrace to exit,
// SIGTERM its group, give that TermGrace, SIGKILL the group; the group
// kill ends every path, also when the server exited by itself. With a
// Reaper (Linux), the reaper process of package reap runs that sequence,
// on the group and on every process the server orphaned, and runs it too
// when mcpflow dies, even by SIGKILL. Without one, mcpflow signals the
// group itself, and only the server (its parent-death signal) dies with
// mcpflow.
type Stdio struct {
	// CloseGrace is how long a stopping server has to exit after its
	// stdin closes before its group gets SIGTERM (0: reap.DefaultGrace).
	CloseGrace time.Duration
	// TermGrace is how long the group has after SIGTERM before SIGKILL
	// (0: reap.DefaultGrace).
	TermGrace time.Duration
	// Reaper is the command each server runs under, followed by
	// reap.Args: reap.Self() in the mcpflow binary. Empty, or off Linux,
	// servers run directly under mcpflow.
	Reaper []string
	// Credentials add environment variables, which win over the
	// transport's own; nil adds none. Their values are redacted from the
	// logged stderr.
	Credentials Credentials
	// MaxResultBytes bounds one line of a server that sets no
	// max_result_bytes (0: config.DefaultMaxResultBytes); see
	// messageReader.
	MaxResultBytes int64
}

// NewStdio is the Stdio factory opts configure, binding creds.
func NewStdio(opts Options, creds Credentials) Stdio {
	return Stdio{CloseGrace: opts.StdioCloseGrace, TermGrace: opts.StdioTermGrace, Reaper: opts.StdioReaper, Credentials: creds, MaxResultBytes: opts.MaxResultBytes}
}

// inheritedEnv names the variables of mcpflow's own environment a stdio
// server gets. Every other variable it sees is configured: the
// transport's env, then the connection's credentials. mcpflow's own
// secrets never reach a server (a tool that prints its environment
// would hand them to any workflow).
var inheritedEnv = []string{"PATH", "HOME", "LANG"}

// reaperSlack is how long mcpflow waits for a reaper beyond the reaper's
// own stop sequence before it asks it to kill at once.
const reaperSlack = 500 * time.Millisecond

// killWait bounds the wait for the process after SIGKILL (or, with a
// reaper, after asking it to kill).
const killWait = 2 * time.Second

// NewTransport builds the command of conn; it starts on Connect.
func (s Stdio) NewTransport(conn config.Connection) (mcp.Transport, error) {
	t := conn.Transport
	if t.Command == "" {
		return nil, fmt.Errorf("connection %q: stdio transport needs a command", conn.ID)
	}
	var authEnv map[string]string
	if s.Credentials != nil {
		ctx, cancel := context.WithTimeout(context.Background(), lookupTimeout)
		defer cancel()
		var err error
		if authEnv, err = s.Credentials.Env(ctx, conn); err != nil {
			return nil, err
		}
	}
	grace := reap.Grace{Close: s.CloseGrace, Term: s.TermGrace}
	if grace.Close <= 0 {
		grace.Close = reap.DefaultGrace.Close
	}
	if grace.Term <= 0 {
		grace.Term = reap.DefaultGrace.Term
	}
	reaped := reaperSupported && len(s.Reaper) > 0
	var cmd *exec.Cmd
	if reaped {
		args := append(slices.Clone(s.Reaper[1:]), reap.Args(grace, t.Command, t.Args...)...)
		cmd = exec.Command(s.Reaper[0], args...)
	} else {
		cmd = exec.Command(t.Command, t.Args...)
	}
	cmd.Dir = t.Cwd
	cmd.Env = stdioEnv(os.Environ(), t.Env, authEnv)
	cmd.SysProcAttr = processGroupAttr(reaped)
	return &stdioTransport{
		cmd:    cmd,
		reaped: reaped,
		grace:  grace,
		log:    slog.With("connection", conn.ID),
		redact: stderrRedactor(conn, authEnv),
		stderr: newTail(),
		limit:  resultLimit(conn, s.MaxResultBytes),
	}, nil
}

// stdioEnv is the environment of a stdio server: the inheritedEnv
// variables of parent, overlaid by each layer in turn, sorted.
func stdioEnv(parent []string, layers ...map[string]string) []string {
	env := map[string]string{}
	for _, kv := range parent {
		if k, v, ok := strings.Cut(kv, "="); ok && slices.Contains(inheritedEnv, k) {
			env[k] = v
		}
	}
	for _, layer := range layers {
		maps.Copy(env, layer)
	}
	out := make([]string, 0, len(env))
	for _, k := range slices.Sorted(maps.Keys(env)) {
		out = append(out, k+"="+env[k])
	}
	return out
}

// stdioTransport runs one server (directly or under a reaper) and speaks
// to it through pipes it owns, so that neither exec.Cmd.Wait nor a close
// can cut off output still buffered in them.
type stdioTransport struct {
	cmd    *exec.Cmd
	reaped bool
	grace  reap.Grace
	log    *slog.Logger
	redact func(string) string
	stderr *tail    // the last lines of its stderr, for a failed connect
	peer   peerHook // told when the process exits
	// notices gets the progress and log notifications of its stdout
	// (see noticeHooker).
	notices noticeHook
	limit   int64 // the bound on one line of its stdout (max_result_bytes)

	mu       sync.Mutex
	started  bool
	stdin    *os.File // write end of the server's stdin
	stdout   *os.File // read end of its stdout
	lifeline *os.File // with a reaper: the only write end of its lifeline
	exited   chan struct{}
	waitErr  error // cmd.Wait's, once exited is closed
	reported chan struct{}
	exitErr  error // the exit report (status, stderr), once reported is closed

	inputOnce, stopOnce, killOnce sync.Once
	stopErr, killErr              error
	// side is the connection Connect made, with its side channel for
	// MCP tasks (see sideConn); set once Connect returns.
	side *sideConn
}

// watchPeer implements peerWatcher: gone hears of the process's exit.
func (t *stdioTransport) watchPeer(gone func(err error, certain bool)) { t.peer.watchPeer(gone) }

// hookNotices implements noticeHooker.
func (t *stdioTransport) hookNotices(notice func(method string, params json.RawMessage)) {
	t.notices.hookNotices(notice)
}

// Connect starts the process and connects to it over its stdin/stdout.
// Closing the connection runs the stop sequence.
func (t *stdioTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	if err := t.start(); err != nil {
		return nil, err
	}
	// The connection is closed by closing stdin (its writer), never
	// stdout: the server may still write while it exits; stop closes
	// stdout once the server is gone, which ends a Read waiting. Each line
	// is bounded as it is read, and decoded on its own (a message that
	// spans lines, which MCP's stdio transport does not allow, ends the
	// session).
	lines := newMessageReader(io.NopCloser(t.stdout), t.limit, false, false, t.log, nil)
	t.side = newSideConn(newLineConn(lines, &t.notices, stdinWriter{t}), &taskWake{})
	return t.side, nil
}

// start creates the pipes and starts the process.
func (t *stdioTransport) start() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.started {
		return errors.New("stdio transport already connected")
	}
	t.started = true
	n := 3
	if t.reaped {
		n = 4
	}
	var ends []*os.File // read, write, read, write, ...
	for range n {
		r, w, err := os.Pipe()
		if err != nil {
			closeFiles(ends...)
			return fmt.Errorf("pipe: %w", err)
		}
		ends = append(ends, r, w)
	}
	inR, inW, outR, outW, errR, errW := ends[0], ends[1], ends[2], ends[3], ends[4], ends[5]
	t.cmd.Stdin, t.cmd.Stdout, t.cmd.Stderr = inR, outW, errW
	childEnds := []*os.File{inR, outW, errW}
	if t.reaped {
		t.cmd.ExtraFiles = []*os.File{ends[6]} // reap.LifelineFD
		childEnds = append(childEnds, ends[6])
		t.lifeline = ends[7]
	}
	err := t.cmd.Start()
	closeFiles(childEnds...)
	if err != nil {
		closeFiles(inW, outR, errR, t.lifeline)
		return err
	}
	t.stdin, t.stdout = inW, outR
	t.exited, t.reported = make(chan struct{}), make(chan struct{})
	go func() {
		t.waitErr = t.cmd.Wait()
		close(t.exited)
		cause := errors.New("the server exited")
		if t.waitErr != nil {
			cause = fmt.Errorf("the server exited: %w", t.waitErr)
		}
		t.exitErr = withStderr(cause, t)
		close(t.reported)
		t.peer.report(t.exitErr, true)
	}()
	go func() {
		logLines(errR, t.log.With("stream", "stderr"), t.redact, t.stderr)
		_ = errR.Close()
	}()
	return nil
}

// stdinWriter is the connection's writer: writes go to the server's
// stdin, and closing it stops the server.
type stdinWriter struct{ t *stdioTransport }

func (w stdinWriter) Write(p []byte) (int, error) { return w.t.stdin.Write(p) }
func (w stdinWriter) Close() error                { return w.t.stop() }

// stop runs the stop sequence once and returns how the process ended.
func (t *stdioTransport) stop() error {
	t.stopOnce.Do(func() {
		if t.reaped {
			t.stopErr = t.stopReaper()
		} else {
			pid := t.cmd.Process.Pid
			stopSequence(t.grace, t.closeInput, t.exited,
				func() bool { return groupAlive(pid, t.exited) },
				func(sig syscall.Signal) { _ = signalGroup(pid, sig) })
			t.stopErr = t.wait(killWait)
		}
		_ = t.stdout.Close()
	})
	return t.stopErr
}

// stopReaper closes stdin and the lifeline, which makes the reaper run
// the stop sequence, and waits for it to finish.
func (t *stdioTransport) stopReaper() error {
	t.closeInput()
	if err, ok := t.waitFor(t.grace.Close + t.grace.Term + reaperSlack); ok {
		return err
	}
	t.log.Warn("stdio reaper still running after its stop sequence; killing", "pid", t.cmd.Process.Pid)
	_ = t.Kill()
	return t.wait(killWait)
}

// Kill ends the server and everything it started at once.
func (t *stdioTransport) Kill() error {
	t.mu.Lock()
	started := t.started && t.exited != nil
	t.mu.Unlock()
	if !started {
		return errors.New("process not started")
	}
	t.killOnce.Do(func() {
		pid := t.cmd.Process.Pid
		t.closeInput()
		if !t.reaped {
			t.killErr = signalGroup(pid, syscall.SIGKILL)
			return
		}
		_ = signalReaper(t.cmd.Process)
		if _, ok := t.waitFor(killWait); ok {
			return
		}
		// The reaper does not answer: kill it. The server dies with it
		// (its parent-death signal); what left the server's group may not.
		t.log.Warn("stdio reaper unresponsive; killing it", "pid", pid)
		t.killErr = signalGroup(pid, syscall.SIGKILL)
	})
	return t.killErr
}

// exitReport waits up to d for the process to exit and returns how it
// ended, with the last lines of its stderr; nil if it did not end in
// time or never started.
func (t *stdioTransport) exitReport(d time.Duration) error {
	t.mu.Lock()
	reported := t.reported
	t.mu.Unlock()
	if reported == nil {
		return nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-reported:
		return t.exitErr
	case <-timer.C:
		return nil
	}
}

// closeInput closes the server's stdin and, with a reaper, the lifeline.
func (t *stdioTransport) closeInput() {
	t.inputOnce.Do(func() { closeFiles(t.stdin, t.lifeline) })
}

// waitFor waits up to d for the process to exit and returns its Wait
// error and true, or false if it is still running.
func (t *stdioTransport) waitFor(d time.Duration) (error, bool) {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-t.exited:
		return t.waitErr, true
	case <-timer.C:
		return nil, false
	}
}

// wait is waitFor with an error for a process that does not exit.
func (t *stdioTransport) wait(d time.Duration) error {
	if err, ok := t.waitFor(d); ok {
		return err
	}
	return fmt.Errorf("stdio process %d did not exit within %s of SIGKILL", t.cmd.Process.Pid, d)
}

// stopSequence closes the server's stdin and gives it g.Close to exit;
// then, if anything of its group is left, SIGTERMs the group and gives it
// g.Term to go; then SIGKILLs the group, on every path.
func stopSequence(g reap.Grace, closeInput func(), exited <-chan struct{}, groupAlive func() bool, signal func(syscall.Signal)) {
	closeInput()
	timer := time.NewTimer(g.Close)
	select {
	case <-exited:
	case <-timer.C:
	}
	timer.Stop()
	if groupAlive() {
		signal(syscall.SIGTERM)
		deadline := time.Now().Add(g.Term)
		tick := time.NewTicker(10 * time.Millisecond)
		for groupAlive() && time.Now().Before(deadline) {
			<-tick.C
		}
		tick.Stop()
	}
	signal(syscall.SIGKILL)
}

func closeFiles(files ...*os.File) {
	for _, f := range files {
		if f != nil {
			_ = f.Close()
		}
	}
}

// logLines logs each line of r at debug level until r ends, with every
// secret replaced by redact, and keeps the last ones in keep, which it
// ends with r. A bounded scanner buffer keeps a runaway child from
// growing memory.
func logLines(r io.Reader, log *slog.Logger, redact func(string) string, keep *tail) {
	defer keep.end()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 64*1024)
	for sc.Scan() {
		line := redact(sc.Text())
		log.Debug(line)
		keep.add(line)
	}
	_, _ = io.Copy(io.Discard, r)
}

// redactor replaces the values of secret, longest first, with
// "[redacted]".
func redactor(secret map[string]string) *strings.Replacer {
	vals := make([]string, 0, len(secret))
	for _, v := range secret {
		if v != "" {
			vals = append(vals, v)
		}
	}
	sort.Slice(vals, func(i, j int) bool { return len(vals[i]) > len(vals[j]) })
	pairs := make([]string, 0, 2*len(vals))
	for _, v := range vals {
		pairs = append(pairs, v, "[redacted]")
	}
	return strings.NewReplacer(pairs...)
}
