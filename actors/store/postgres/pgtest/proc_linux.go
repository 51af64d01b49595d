package pgtest

import "syscall"

// attrs are the attributes of a server process: it runs as the account,
// in its own process group (a terminal's ^C reaches the tests, which stop
// the server), and is sent SIGQUIT, an immediate shutdown, if the test
// process dies without stopping it, so that no server outlives its tests.
func (a account) attrs() *syscall.SysProcAttr {
	attrs := &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGQUIT}
	if a.asRoot {
		attrs.Credential = &syscall.Credential{Uid: uint32(a.uid), Gid: uint32(a.gid), NoSetGroups: true}
	}
	return attrs
}
