package procs

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Usage is what a process holds, as /proc tells it: its resident memory
// and its open file descriptors.
type Usage struct {
	RSSBytes int64 // VmRSS
	FDs      int   // entries of /proc/<pid>/fd
}

// UsageOf reads what pid holds now.
func UsageOf(pid int) (Usage, error) {
	dir := "/proc/" + strconv.Itoa(pid)
	status, err := os.ReadFile(dir + "/status")
	if err != nil {
		return Usage{}, fmt.Errorf("usage of %d: %w", pid, err)
	}
	rss, err := vmRSS(status)
	if err != nil {
		return Usage{}, fmt.Errorf("usage of %d: %w", pid, err)
	}
	fds, err := os.ReadDir(dir + "/fd")
	if err != nil {
		return Usage{}, fmt.Errorf("usage of %d: %w", pid, err)
	}
	return Usage{RSSBytes: rss, FDs: len(fds)}, nil
}

// vmRSS is the VmRSS line of a /proc/<pid>/status, in bytes.
func vmRSS(status []byte) (int64, error) {
	lines := bufio.NewScanner(bytes.NewReader(status))
	for lines.Scan() {
		value, ok := strings.CutPrefix(lines.Text(), "VmRSS:")
		if !ok {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(value), "kB")), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("VmRSS %q: %w", value, err)
		}
		return kb << 10, nil
	}
	return 0, errors.New("no VmRSS in status (a zombie has none)")
}
