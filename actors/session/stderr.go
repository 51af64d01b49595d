package session

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflow/mcpflow/actors/config"
)

// Bounds of the stderr tail a failed connect reports: the last
// stderrTailLines non-blank lines, each cut to stderrLineBytes, at most
// stderrTailBytes in all (older lines go first).
const (
	stderrTailLines = 10
	stderrTailBytes = 2048
	stderrLineBytes = 512
)

// stderrWait bounds the wait, after a failed connect ended the server,
// for the rest of its stderr to be read.
const stderrWait = time.Second

// tail keeps the last lines a stdio server wrote to stderr, secrets
// already redacted. A run of stack frames ("    at …", as Node prints
// them) keeps its first frame and a count of the rest, so that the error
// above it stays in view. Safe for concurrent use: the stderr reader
// adds, the connect goroutine reads.
type tail struct {
	mu     sync.Mutex
	lines  []string
	frames int           // stack frames in a row, up to the last line
	done   chan struct{} // closed once stderr has ended
}

func newTail() *tail { return &tail{done: make(chan struct{})} }

// add keeps line, dropping the oldest lines beyond the bounds.
func (t *tail) add(line string) {
	line = strings.TrimRight(line, " \t\r")
	if strings.TrimSpace(line) == "" {
		return
	}
	if len(line) > stderrLineBytes {
		cut := stderrLineBytes
		for cut > 0 && !utf8.RuneStart(line[cut]) {
			cut--
		}
		line = line[:cut] + "…"
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if !isFrame(line) {
		t.frames = 0
	} else if t.frames++; t.frames > 1 {
		line = fmt.Sprintf("    at … (%d more)", t.frames-1)
		if t.frames > 2 {
			t.lines = t.lines[:len(t.lines)-1] // the count so far
		}
	}
	t.lines = append(t.lines, line)
	size := 0
	for _, l := range t.lines {
		size += len(l) + 1
	}
	for len(t.lines) > stderrTailLines || size > stderrTailBytes {
		size -= len(t.lines[0]) + 1
		t.lines = t.lines[1:]
	}
}

// isFrame reports whether line is a JavaScript stack frame.
func isFrame(line string) bool {
	trimmed := strings.TrimLeft(line, " \t")
	return len(trimmed) < len(line) && strings.HasPrefix(trimmed, "at ")
}

// end marks stderr as ended.
func (t *tail) end() { close(t.done) }

// text waits up to wait for stderr to end, then returns the lines kept,
// one per line.
func (t *tail) text(wait time.Duration) string {
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case <-t.done:
	case <-timer.C:
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.Join(t.lines, "\n")
}

// stderrRedactor removes from a stdio server's stderr its credentials'
// values (authEnv, whatever their length) and what Redact removes for
// conn: its configured env and header values, URL queries and userinfo.
func stderrRedactor(conn config.Connection, authEnv map[string]string) func(string) string {
	r := redactor(authEnv)
	return func(line string) string { return Redact(conn, r.Replace(line)) }
}

// stderrTailer is a transport whose peer's stderr is kept (a stdio
// server's).
type stderrTailer interface {
	stderrTail(wait time.Duration) string
}

// stderrError is a failed connect's error with the last lines of the
// server's stderr.
type stderrError struct {
	err    error
	stderr string
}

func (e *stderrError) Error() string {
	return e.err.Error() + "; the server's stderr ended with:\n" + e.stderr
}

func (e *stderrError) Unwrap() error { return e.err }

// stderrTail waits up to wait for the server's stderr to end and returns
// its last lines; "" when the server never started.
func (t *stdioTransport) stderrTail(wait time.Duration) string {
	t.mu.Lock()
	started := t.exited != nil
	t.mu.Unlock()
	if !started {
		return ""
	}
	return t.stderr.text(wait)
}

// exitReporter is a transport whose peer is a process it waits for (a
// stdio server).
type exitReporter interface {
	exitReport(wait time.Duration) error
}

// whyStartFailed is the error of a failed connect on t, already ended. If
// the client saw the server's output end (EOF, a closed pipe), the server
// ended by itself: its exit report (status and stderr) says why, and is
// the cause whether or not the actor hears of the exit first. Otherwise
// (a timeout, a refusal) the error stands, with the server's last stderr
// lines (withStderr).
func whyStartFailed(err error, t mcp.Transport) error {
	if r, ok := t.(exitReporter); ok && streamEnded(err) {
		if exit := r.exitReport(stderrWait + killWait); exit != nil {
			return exit
		}
	}
	return withStderr(err, t)
}

// streamEnded reports whether err says the peer's stream ended.
func streamEnded(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrClosedPipe) || errors.Is(err, syscall.EPIPE) ||
		strings.HasSuffix(err.Error(), ": EOF")
}

// withStderr adds to the error of a failed connect the last lines the
// server wrote to stderr, once it has ended (within stderrWait): for a
// server that exits at start, they say why ("Cannot find module …")
// where the connect itself only saw EOF.
func withStderr(err error, t mcp.Transport) error {
	st, ok := t.(stderrTailer)
	if !ok {
		return err
	}
	if text := st.stderrTail(stderrWait); text != "" {
		return &stderrError{err: err, stderr: text}
	}
	return err
}

// reportConnectFailure logs a failed connect, at warn the first time a
// connection fails for a cause (the server's stderr when there is some,
// else the error): the same cause again, attempt after attempt, is logged
// at debug (the connection's status, and its degraded error if it comes
// to that, say it goes on). It counts the failure.
func (a *Actor) reportConnectFailure(err error) {
	a.opts.Metrics.ConnectFailed(a.conn.ID)
	msg := Redact(a.conn, err.Error())
	cause := msg
	if e, ok := errors.AsType[*stderrError](err); ok {
		cause = e.stderr // the same exit may be an EOF or a broken pipe
	}
	level := slog.LevelWarn
	if cause == a.reportedCause {
		level = slog.LevelDebug
	}
	a.reportedCause = cause
	slog.Log(context.Background(), level, "mcp connect failed", "connection", a.conn.ID, "attempt", a.attempt, "degraded", a.degraded, "err", msg)
}
