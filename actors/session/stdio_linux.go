package session

import "syscall"

// processGroupAttr puts the child in its own process group and asks the
// kernel to kill it when mcpflow dies, so no stdio server outlives us.
func processGroupAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// killGroup kills the whole process group led by pid.
func killGroup(pid int) error {
	return syscall.Kill(-pid, syscall.SIGKILL)
}
