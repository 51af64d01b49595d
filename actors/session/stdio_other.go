//go:build !linux

package session

import (
	"os"
	"syscall"
)

func processGroupAttr() *syscall.SysProcAttr { return nil }

func killGroup(pid int) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Kill()
}
