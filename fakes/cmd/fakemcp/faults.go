package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Faults a test asks of fakemcp, read from the environment at start.
type faults struct {
	// initDelay holds back the answer to initialize
	// (FAKEMCP_INIT_DELAY_MS), so that a test can kill the server while
	// its session initializes.
	initDelay time.Duration
	// mode is what FAKEMCP_FAULT_FILE said at start: exitAtStart,
	// exitOnCall, or "" (healthy: a missing or empty file, or anything
	// else). A test fixes the server by changing the file; the next
	// process reads it.
	mode string
	file string
}

// The modes of FAKEMCP_FAULT_FILE.
const (
	exitAtStart = "exit-at-start" // write to stderr and exit before serving
	exitOnCall  = "exit-on-call"  // serve, but exit on the first tools/call
)

// faultExit is the status fakemcp exits with for a fault.
const faultExit = 3

func readFaults() (faults, error) {
	var f faults
	if ms := os.Getenv("FAKEMCP_INIT_DELAY_MS"); ms != "" {
		n, err := strconv.Atoi(ms)
		if err != nil || n < 0 {
			return f, fmt.Errorf("FAKEMCP_INIT_DELAY_MS=%q: want milliseconds", ms)
		}
		f.initDelay = time.Duration(n) * time.Millisecond
	}
	if f.file = os.Getenv("FAKEMCP_FAULT_FILE"); f.file != "" {
		data, err := os.ReadFile(f.file)
		if err != nil && !os.IsNotExist(err) {
			return f, fmt.Errorf("FAKEMCP_FAULT_FILE: %w", err)
		}
		f.mode = strings.TrimSpace(string(data))
	}
	return f, nil
}

// exitNow says why on stderr, as a broken server would, and exits.
func (f faults) exitNow(what string) {
	fmt.Fprintf(os.Stderr, "fakemcp: broken on purpose (%s in %s): %s\n", f.mode, f.file, what)
	os.Exit(faultExit)
}

// apply exits at once for exitAtStart, and otherwise arms the faults
// that act while s serves.
func (f faults) apply(s *mcp.Server) {
	if f.mode == exitAtStart {
		f.exitNow("exiting at start")
	}
	if f.initDelay == 0 && f.mode != exitOnCall {
		return
	}
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			switch {
			case method == "initialize" && f.initDelay > 0:
				select {
				case <-time.After(f.initDelay):
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			case method == "tools/call" && f.mode == exitOnCall:
				f.exitNow("exiting on the first call")
			}
			return next(ctx, method, req)
		}
	})
}
