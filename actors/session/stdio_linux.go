package session

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"syscall"

	"github.com/mcpflow/mcpflow/actors/session/reap"
)

// reaperSupported: Linux has the child subreaper the reaper needs.
const reaperSupported = true

// processGroupAttr puts the child in its own process group with a
// parent-death signal: SIGKILL for a server run directly, the reaper's
// ParentDeathSignal for a reaper, which then stops its server's tree.
func processGroupAttr(reaped bool) *syscall.SysProcAttr {
	if reaped {
		return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: reap.ParentDeathSignal}
	}
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// signalGroup sends sig to the process group led by pid; a group already
// gone is no error.
func signalGroup(pid int, sig syscall.Signal) error {
	if err := syscall.Kill(-pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	return nil
}

// groupAlive reports whether any process that is not a zombie is left in
// the group led by pid. Zombies do not count: orphans of the group are
// reaped by whoever adopted them, which may take a while.
func groupAlive(pid int, _ <-chan struct{}) bool {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		err := syscall.Kill(-pid, 0)
		return err == nil || errors.Is(err, syscall.EPERM)
	}
	for _, e := range entries {
		if e.Name()[0] < '0' || e.Name()[0] > '9' {
			continue
		}
		data, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // gone meanwhile
		}
		// pid (comm) state ppid pgrp ...; comm may hold spaces and parentheses.
		fields := bytes.Fields(data[bytes.LastIndexByte(data, ')')+1:])
		if len(fields) >= 3 && string(fields[0]) != "Z" && string(fields[2]) == strconv.Itoa(pid) {
			return true
		}
	}
	return false
}

// signalReaper asks a reaper to kill its server's tree at once.
func signalReaper(p *os.Process) error {
	return p.Signal(reap.KillSignal)
}
