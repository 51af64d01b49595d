package engines_test

import (
	"log/slog"
	"os"
	"testing"
)

// TestMain keeps mcpflow's informational log lines (BenchmarkWarmRunAlternated
// starts it) out of the benchmarks' output, which benchstat reads: only
// warnings and errors are written, to stderr.
func TestMain(m *testing.M) {
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	os.Exit(m.Run())
}
