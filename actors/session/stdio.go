package session

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflow/mcpflow/actors/config"
)

// Stdio starts MCP servers as subprocesses speaking over stdin/stdout. Each
// subprocess runs in its own process group, dies with mcpflow (on Linux),
// and has its stderr logged line by line.
type Stdio struct {
	// TerminateDuration is how long a close waits after closing stdin
	// before it sends SIGTERM.
	TerminateDuration time.Duration
	// Credentials add environment variables, which win over the
	// transport's own; nil adds none. Their values are redacted from the
	// logged stderr.
	Credentials Credentials
}

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
	cmd := exec.Command(t.Command, t.Args...)
	cmd.Dir = t.Cwd
	cmd.Env = mergeEnv(mergeEnv(os.Environ(), t.Env), authEnv)
	cmd.SysProcAttr = processGroupAttr()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, fmt.Errorf("connection %q: stderr pipe: %w", conn.ID, err)
	}
	go logLines(stderr, slog.With("connection", conn.ID, "stream", "stderr"), redactor(authEnv))
	return &stdioTransport{
		CommandTransport: mcp.CommandTransport{Command: cmd, TerminateDuration: s.TerminateDuration},
		cmd:              cmd,
	}, nil
}

// stdioTransport is a CommandTransport that can kill its process group.
type stdioTransport struct {
	mcp.CommandTransport
	cmd      *exec.Cmd
	killOnce sync.Once
}

// Connect starts the subprocess.
func (t *stdioTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	return t.CommandTransport.Connect(ctx)
}

// Kill ends the subprocess and everything it started.
func (t *stdioTransport) Kill() error {
	var err error
	t.killOnce.Do(func() {
		if t.cmd.Process == nil {
			err = errors.New("process not started")
			return
		}
		err = killGroup(t.cmd.Process.Pid)
	})
	return err
}

// mergeEnv overlays extra on base, sorted for a stable environment.
func mergeEnv(base []string, extra map[string]string) []string {
	if len(extra) == 0 {
		return base
	}
	keys := make([]string, 0, len(extra))
	for k := range extra {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := append([]string(nil), base...)
	for _, k := range keys {
		out = append(out, k+"="+extra[k])
	}
	return out
}

// logLines logs each line of r at debug level until r ends, with every
// secret replaced by redact. A bounded scanner buffer keeps a runaway
// child from growing memory.
func logLines(r io.Reader, log *slog.Logger, redact *strings.Replacer) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 64*1024)
	for sc.Scan() {
		log.Debug(redact.Replace(sc.Text()))
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
