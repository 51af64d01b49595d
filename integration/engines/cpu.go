package engines

import (
	"fmt"
	"syscall"
	"time"
)

// ProcessCPU is the CPU time (user and system) the process has used so
// far, on all its threads: the benchmark's goroutines, the store's writer,
// Pebble's background work and cgo's calls alike.
func ProcessCPU() (time.Duration, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, fmt.Errorf("read the process's CPU time: %w", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}
