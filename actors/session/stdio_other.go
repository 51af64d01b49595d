//go:build !linux

package session

import (
	"os"
	"syscall"
)

// reaperSupported: the reaper needs Linux's child subreaper.
const reaperSupported = false

func processGroupAttr(bool) *syscall.SysProcAttr { return nil }

// signalGroup signals the process itself: there is no group here.
func signalGroup(pid int, sig syscall.Signal) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	if sig == syscall.SIGKILL {
		return p.Kill()
	}
	return p.Signal(sig)
}

// groupAlive reports whether the process itself still runs.
func groupAlive(_ int, exited <-chan struct{}) bool {
	select {
	case <-exited:
		return false
	default:
		return true
	}
}

func signalReaper(p *os.Process) error { return p.Kill() }
