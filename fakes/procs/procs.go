// Package procs holds test helpers that watch processes through /proc
// (Linux): the pid a test script wrote, whether a process still runs, and
// a bounded wait for processes to be gone. Only tests use it.
package procs

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/fakes/poll"
)

// PidIn polls path until a script has written a pid and a newline to it,
// for at most 5 s.
func PidIn(t testing.TB, path string) int {
	t.Helper()
	data := poll.Value(t, "a pid in "+path, 5*time.Second, func() (string, bool) {
		data, err := os.ReadFile(path)
		return string(data), err == nil && strings.HasSuffix(string(data), "\n")
	})
	pid, err := strconv.Atoi(strings.TrimSpace(data))
	is.New(t).NoErr(err) // the file holds a pid
	return pid
}

// Running reports whether pid exists and is not a zombie.
func Running(pid int) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	fields := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+1:]))
	return len(fields) > 0 && fields[0] != "Z"
}

// GoneWithin polls until none of pids runs, failing t after d.
func GoneWithin(t testing.TB, d time.Duration, pids ...int) {
	t.Helper()
	poll.For(t, fmt.Sprintf("processes %v gone", pids), d, func() bool {
		for _, pid := range pids {
			if Running(pid) {
				return false
			}
		}
		return true
	})
}
