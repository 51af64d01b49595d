package session

import (
	"bufio"
	"bytes"
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
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/session/reap"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	fastjson "github.com/segmentio/encoding/json"
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

// lineConn is the mcp.Connection of a session over newline-delimited
// JSON-RPC (a stdio server's pipes), which the session reads itself:
// go-sdk's own (IOTransport) would read the lines mcpflow's
// messageReader already bounded and cut into a decoder of its own, decode
// each message twice (as a batch first), and hand it over from a
// goroutine of its own. Here go-sdk's reading goroutine reads the next
// line and decodes it once, where it is (decodeMessage); each progress
// or log notification goes to the notice hook before go-sdk gets it
// (noticeread.go). Writes encode each message and write it, with its
// newline, in one write.
//
// As go-sdk's, it takes a batch (a JSON array of messages, which MCP
// before 2025-06-18 allowed) one message at a time; it answers each
// request of one on its own line. As go-sdk's, it takes a message spread
// over several lines (which MCP's stdio transport does not allow), up to
// the bound in all.
type lineConn struct {
	lines   *messageReader
	notices *noticeHook
	queue   []jsonrpc.Message // the rest of a batch; Read is never concurrent
	// spread is a message begun on an earlier line and not whole yet;
	// nest follows its nesting.
	spread []byte
	nest   nesting

	writeMu sync.Mutex
	w       io.WriteCloser
	out     []byte // a write's buffer, kept between writes up to keptBuffer

	closed    atomic.Bool
	closeOnce sync.Once
	closeErr  error
}

// newLineConn reads the messages of lines, handing the notifications to
// notices, and writes to w, which closing the connection closes.
func newLineConn(lines *messageReader, notices *noticeHook, w io.WriteCloser) *lineConn {
	return &lineConn{lines: lines, notices: notices, w: w}
}

// Read returns the next message, or the error that ended the stream
// (io.EOF once the connection is closed).
func (c *lineConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(c.queue) > 0 {
		m := c.queue[0]
		c.queue = c.queue[1:]
		return m, nil
	}
	for {
		line, err := c.lines.message()
		if err != nil {
			if c.closed.Load() {
				return nil, io.EOF
			}
			return nil, err
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 && len(c.spread) == 0 {
			continue // between messages, as a JSON decoder skips it
		}
		msg, err := c.whole(line)
		if err != nil {
			return nil, err
		}
		if msg == nil {
			continue // the message goes on on the next line
		}
		if msg[0] == '[' {
			return c.batch(msg)
		}
		m, err := decodeNested(msg) // whole checked its nesting
		if err != nil {
			return nil, err
		}
		c.notices.hand(m)
		return m, nil
	}
}

// whole returns the message line ends, nil while it goes on.
func (c *lineConn) whole(line []byte) ([]byte, error) {
	if len(c.spread) == 0 {
		c.nest = nesting{}
	}
	if err := c.nest.feed(line); err != nil {
		return nil, fmt.Errorf("unmarshaling jsonrpc message: %w", err)
	}
	if len(c.spread) == 0 && !c.nest.open() {
		return line, nil // the usual case: a message on one line
	}
	if int64(len(c.spread)+len(line)) > c.lines.limit {
		return nil, fmt.Errorf("a message over several lines of more than %d bytes (max_result_bytes)", c.lines.limit)
	}
	c.spread = append(append(c.spread, line...), '\n')
	if c.nest.open() {
		return nil, nil
	}
	msg := c.spread
	c.spread = c.spread[:0]
	if cap(c.spread) > keptBuffer {
		c.spread = nil
	}
	return msg, nil
}

// batch returns the first message of a batch, and queues the others.
func (c *lineConn) batch(line []byte) (jsonrpc.Message, error) {
	var raws []json.RawMessage
	if err := json.Unmarshal(line, &raws); err != nil {
		return nil, fmt.Errorf("unmarshaling jsonrpc batch: %w", err)
	}
	if len(raws) == 0 {
		return nil, errors.New("empty batch")
	}
	msgs := make([]jsonrpc.Message, 0, len(raws))
	for _, raw := range raws {
		m, err := decodeMessage(raw)
		if err != nil {
			return nil, err
		}
		c.notices.hand(m)
		msgs = append(msgs, m)
	}
	c.queue = msgs[1:]
	return msgs[0], nil
}

// Write writes msg and its newline at once.
func (c *lineConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return fmt.Errorf("marshaling message: %w", err)
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	c.out = append(append(c.out[:0], data...), '\n')
	_, err = c.w.Write(c.out)
	if cap(c.out) > keptBuffer {
		c.out = nil
	}
	return err
}

// Close closes the writer, once; a Read waiting ends when the reader
// does (the stdio transport closes both).
func (c *lineConn) Close() error {
	c.closeOnce.Do(func() {
		c.closed.Store(true)
		c.closeErr = c.w.Close()
	})
	return c.closeErr
}

// SessionID is "": a stream has no session id.
func (c *lineConn) SessionID() string { return "" }

// decodeMessage decodes one JSON-RPC message as jsonrpc.DecodeMessage
// does, with the same decoder (segmentio's, its fields matched case
// sensitively, its nesting bounded), but parsing data where it is:
// go-sdk's reads data again through a decoder of its own, whose buffer
// (32 KiB at least, twice for a request, whose method is decoded on its
// own) was most of the bytes a call allocated. Its Params, Result and
// error Data are copies: data may be reused once it returns.
func decodeMessage(data []byte) (jsonrpc.Message, error) {
	if err := checkDepth(data); err != nil {
		return nil, fmt.Errorf("unmarshaling jsonrpc message: %w", err)
	}
	return decodeNested(data)
}

// decodeNested is decodeMessage for data whose nesting is known to be
// within maxDepth.
func decodeNested(data []byte) (jsonrpc.Message, error) {
	var msg struct {
		VersionTag string          `json:"jsonrpc"`
		ID         any             `json:"id,omitempty"`
		Method     json.RawMessage `json:"method"` // present (even "") or not
		Params     json.RawMessage `json:"params,omitempty"`
		Result     json.RawMessage `json:"result,omitempty"`
		Error      *jsonrpc.Error  `json:"error,omitempty"`
	}
	if err := parse(data, &msg); err != nil {
		return nil, fmt.Errorf("unmarshaling jsonrpc message: %w", err)
	}
	if msg.VersionTag != "2.0" {
		return nil, fmt.Errorf("invalid message version tag %q; expected %q", msg.VersionTag, "2.0")
	}
	id, err := jsonrpc.MakeID(msg.ID)
	if err != nil {
		return nil, err
	}
	if len(msg.Method) > 0 {
		var method string
		if err := parse(msg.Method, &method); err != nil {
			return nil, fmt.Errorf("unmarshaling jsonrpc message: %w", err)
		}
		return &jsonrpc.Request{Method: method, ID: id, Params: msg.Params}, nil
	}
	if !id.IsValid() {
		return nil, errInvalidMessage
	}
	resp := &jsonrpc.Response{ID: id, Result: msg.Result}
	if msg.Error != nil {
		resp.Error = msg.Error // not a nil *jsonrpc.Error in an error
	}
	return resp, nil
}

// errInvalidMessage is a message that is neither a request nor an
// answer to one (go-sdk's jsonrpc2.ErrInvalidRequest, which it does not
// export).
var errInvalidMessage = &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "invalid request"}

// parse decodes data, one JSON value and nothing after it, into v.
func parse(data []byte, v any) error {
	rest, err := fastjson.Parse(data, v, fastjson.DontMatchCaseInsensitiveStructFields)
	if err == nil && len(rest) > 0 {
		err = fmt.Errorf("invalid character %q after top-level value", rest[0])
	}
	return err
}

// maxDepth bounds the nesting of a message, as go-sdk's decoder does.
const maxDepth = 1000

var errTooDeep = fmt.Errorf("json: exceeded maximum nesting depth of %d", maxDepth)

// checkDepth reports errTooDeep when objects and arrays nest in data
// deeper than maxDepth (go-sdk's check, before a parser that recurses).
func checkDepth(data []byte) error {
	var n nesting
	return n.feed(data)
}

// nesting follows how deep a JSON text fed to it in parts is, in objects
// and arrays, outside its strings.
type nesting struct {
	depth             int
	inString, escaped bool
}

// feed takes the next part, failing with errTooDeep past maxDepth.
func (n *nesting) feed(data []byte) error {
	for _, b := range data {
		switch {
		case n.inString && n.escaped:
			n.escaped = false
		case n.inString:
			n.escaped, n.inString = b == '\\', b != '"'
		case b == '"':
			n.inString = true
		case b == '{' || b == '[':
			if n.depth++; n.depth > maxDepth {
				return errTooDeep
			}
		case b == '}' || b == ']':
			n.depth = max(n.depth-1, 0)
		}
	}
	return nil
}

// open reports whether what was fed is not a whole value yet.
func (n *nesting) open() bool { return n.depth > 0 || n.inString }
