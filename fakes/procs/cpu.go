package procs

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// clockTick is the unit of the CPU times in /proc/<pid>/stat: USER_HZ,
// 100 on every Linux platform Go supports.
const clockTick = 10 * time.Millisecond

// CPUTime is the CPU time pid has used so far, user and system, all its
// threads (the exited ones too), to the clock tick (10 ms).
func CPUTime(pid int) (time.Duration, error) {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, fmt.Errorf("cpu time of %d: %w", pid, err)
	}
	// The command name, field 2, is in parentheses and may hold spaces:
	// count the fields after its closing one. utime and stime are fields
	// 14 and 15, the 12th and 13th after it.
	end := strings.LastIndexByte(string(stat), ')')
	if end < 0 {
		return 0, fmt.Errorf("cpu time of %d: unexpected /proc stat %q", pid, stat)
	}
	fields := strings.Fields(string(stat[end+1:]))
	if len(fields) < 13 {
		return 0, fmt.Errorf("cpu time of %d: unexpected /proc stat %q", pid, stat)
	}
	var ticks int64
	for _, f := range fields[11:13] {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("cpu time of %d: %w", pid, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * clockTick, nil
}
