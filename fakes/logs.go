package fakes

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"
)

// Logs is where CaptureLogs sends the default logger's records, as text.
// Safe for concurrent use.
type Logs struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// CaptureLogs sends the default logger, at debug level, to the returned
// Logs until the test ends. The default logger is global: a test that
// captures it must not run in parallel with one that logs.
func CaptureLogs(t testing.TB) *Logs {
	l := &Logs{}
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(l, &slog.HandlerOptions{Level: slog.LevelDebug})))
	t.Cleanup(func() { slog.SetDefault(prev) })
	return l
}

// Write appends p; the logger calls it.
func (l *Logs) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// Lines are the lines logged so far that contain substr.
func (l *Logs) Lines(substr string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, line := range strings.Split(l.buf.String(), "\n") {
		if strings.Contains(line, substr) {
			out = append(out, line)
		}
	}
	return out
}
