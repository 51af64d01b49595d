//go:build !linux

package cli

// stopWithGoRun is a no-op off Linux, which has no parent-death signal.
func stopWithGoRun() {}
