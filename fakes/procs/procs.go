// Package procs holds test helpers that watch processes through /proc
// (Linux): the pid a test script wrote, whether a process still runs, and
// a bounded wait for processes to be gone. Only tests use it.
package procs

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
)

// poll is how often the waits look again.
const poll = 5 * time.Millisecond

// PidIn polls path until a script has written a pid and a newline to it,
// for at most 5 s.
func PidIn(t testing.TB, path string) int {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		if data, err := os.ReadFile(path); err == nil && strings.HasSuffix(string(data), "\n") {
			pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
			is.New(t).NoErr(err) // the file holds a pid
			return pid
		}
		if time.Now().After(deadline) {
			t.Fatalf("no pid in %s within 5s", path)
		}
		<-time.After(poll) // poll interval
	}
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
	deadline := time.Now().Add(d)
	for _, pid := range pids {
		for Running(pid) {
			if time.Now().After(deadline) {
				t.Fatalf("process %d still running %s later", pid, d)
			}
			<-time.After(poll) // poll interval
		}
	}
}
