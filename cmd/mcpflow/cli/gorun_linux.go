package cli

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// prSetPdeathsig is PR_SET_PDEATHSIG (linux/prctl.h).
const prSetPdeathsig = 1

// stopWithGoRun makes a server started by `go run` stop (gracefully, by
// SIGTERM) when the go command does: go run passes SIGINT on but dies of
// SIGTERM itself, which would leave the server orphaned and holding its
// port and store. Under any other parent (a shell, systemd, nohup) it does
// nothing: a server must not stop because the shell that started it left.
func stopWithGoRun() {
	ppid := os.Getppid()
	comm, err := os.ReadFile("/proc/" + strconv.Itoa(ppid) + "/comm")
	if err != nil || strings.TrimSpace(string(comm)) != "go" {
		return
	}
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetPdeathsig, uintptr(syscall.SIGTERM), 0); errno != 0 {
		return
	}
	if os.Getppid() != ppid { // the go command ended before the signal was armed
		_ = syscall.Kill(os.Getpid(), syscall.SIGTERM)
	}
}
