package integration

import (
	"net"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/fakes/poll"
)

// settleWait bounds the polls for state that settles on its own (a
// catalog, a status, a count): the 10 s the suite's eventually and
// eraWait helpers gave it.
const settleWait = 10 * time.Second

// awaitAccepting polls until the server of what accepts TCP connections
// on addr, failing t after within, or as soon as state says the server
// has exited. state reports whether it has and what it printed (logs,
// its exit), which the failure shows.
func awaitAccepting(t testing.TB, what, addr string, within time.Duration, state func() (exited bool, report string)) {
	t.Helper()
	is := is.New(t)
	is.Helper()
	var lastErr error
	if !poll.Until(within, func() bool {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			_ = conn.Close()
			return true
		}
		lastErr = err
		if exited, report := state(); exited {
			t.Logf("%s exited before accepting on %s: %s", what, addr, report)
			is.Fail() // the server accepts rather than exiting
		}
		return false
	}) {
		_, report := state()
		t.Logf("%s did not accept on %s within %s: %v\n%s", what, addr, within, lastErr, report)
		is.Fail() // the server accepts within the deadline
	}
}

// exitedWhen is an awaitAccepting state for a server whose exit closes
// exited; report is what it printed.
func exitedWhen(exited <-chan struct{}, report func() string) func() (bool, string) {
	return func() (bool, string) {
		select {
		case <-exited:
			return true, report()
		default:
			return false, report()
		}
	}
}
