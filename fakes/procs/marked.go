package procs

import (
	"bytes"
	"os"
	"strconv"
)

// Marked returns the pids of the running processes (zombies left out)
// whose environment holds the entry marker ("NAME=VALUE"), in ascending
// order: a test gives the processes it has started, through whatever
// wrappers, a variable no other process has, and finds every one of them,
// re-parented or not, however deep below.
func Marked(marker string) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	want := []byte(marker)
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil {
			continue // gone meanwhile, or not ours
		}
		for _, kv := range bytes.Split(env, []byte{0}) {
			if bytes.Equal(kv, want) {
				if Running(pid) {
					pids = append(pids, pid)
				}
				break
			}
		}
	}
	return pids
}
