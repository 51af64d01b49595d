//go:build !linux

package pgtest

import "syscall"

// attrs are the attributes of a server process. Off Linux there is no
// parent-death signal and the server runs as the current user: a test
// process that dies without stopping it leaves it running.
func (a account) attrs() *syscall.SysProcAttr { return nil }
