package app

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
)

// listenNotify is a service manager's notification socket named name (a
// path, or "@name" for an abstract socket), closed at cleanup.
func listenNotify(t *testing.T, name string) *net.UnixConn {
	t.Helper()
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: name, Net: "unixgram"})
	is.New(t).NoErr(err) // listen on the notification socket
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

// notifyPath is a path for a notification socket, short enough for
// sun_path (108 bytes), removed at cleanup.
func notifyPath(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "nfy")
	is.New(t).NoErr(err)
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return filepath.Join(dir, "notify.sock")
}

// receive is the next notification on conn, within 5 s.
func receive(t *testing.T, conn *net.UnixConn) string {
	t.Helper()
	is := is.New(t)
	is.Helper()
	is.NoErr(conn.SetReadDeadline(time.Now().Add(5 * time.Second)))
	buf := make([]byte, 4096)
	n, err := conn.Read(buf)
	is.NoErr(err) // a notification arrives within 5 s
	return string(buf[:n])
}

// env is a getenv over vars.
func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

// TestNotifyUnsetIsANoOp: without NOTIFY_SOCKET there is no notifier, and
// sending through it does nothing; a value that is neither a path nor an
// abstract name is refused without being echoed.
func TestNotifyUnsetIsANoOp(t *testing.T) {
	is := is.New(t)
	n, err := notifierFromEnv(env(nil))
	is.NoErr(err)
	is.True(n == nil)             // no notifier
	is.NoErr(n.send(notifyReady)) // a nil notifier sends nothing
	is.Equal(watchdogFromEnv(env(map[string]string{"WATCHDOG_USEC": "200000"})), 100*time.Millisecond)
	for _, bad := range []string{"relative/notify.sock", "vsock:2:1234", "@"} {
		n, err = notifierFromEnv(env(map[string]string{"NOTIFY_SOCKET": bad}))
		is.True(n == nil && err != nil) // refused
		if len(bad) > 1 {
			is.True(!strings.Contains(err.Error(), bad)) // without echoing the value
		}
	}
}

// TestNotifySendsToAPathSocket: one notification is one datagram of
// newline-separated assignments.
func TestNotifySendsToAPathSocket(t *testing.T) {
	is := is.New(t)
	path := notifyPath(t)
	conn := listenNotify(t, path)
	n, err := notifierFromEnv(env(map[string]string{"NOTIFY_SOCKET": path}))
	is.NoErr(err)
	is.NoErr(n.send(notifyReady, "STATUS=serving"))
	is.Equal(receive(t, conn), "READY=1\nSTATUS=serving")
	is.NoErr(n.send(notifyWatchdog))
	is.Equal(receive(t, conn), "WATCHDOG=1")
}

// TestNotifySendsToAnAbstractSocket: "@name" is a socket in Linux's
// abstract namespace.
func TestNotifySendsToAnAbstractSocket(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("abstract unix sockets are Linux's")
	}
	is := is.New(t)
	name := fmt.Sprintf("@mcpflow-notify-test-%d-%d", os.Getpid(), time.Now().UnixNano())
	conn := listenNotify(t, name)
	n, err := notifierFromEnv(env(map[string]string{"NOTIFY_SOCKET": name}))
	is.NoErr(err)
	is.NoErr(n.send(notifyStopping))
	is.Equal(receive(t, conn), "STOPPING=1")
}

// TestNotifySendFailsWithoutAListener: a socket nobody listens on is an
// error, not a hang.
func TestNotifySendFailsWithoutAListener(t *testing.T) {
	is := is.New(t)
	n, err := notifierFromEnv(env(map[string]string{"NOTIFY_SOCKET": notifyPath(t)}))
	is.NoErr(err)
	is.True(n.send(notifyReady) != nil) // nobody listens
}

// TestWatchdogFromEnv: the interval is half of WATCHDOG_USEC, and none
// when it is unset, invalid or meant for another process.
func TestWatchdogFromEnv(t *testing.T) {
	self := strconv.Itoa(os.Getpid())
	for _, c := range []struct {
		usec, pid string
		want      time.Duration
	}{
		{"", "", 0},
		{"soon", "", 0},
		{"-5", "", 0},
		{"30000000", "", 15 * time.Second},
		{"200000", self, 100 * time.Millisecond},
		{"200000", "0", 0}, // another process
	} {
		t.Run(c.usec+"/"+c.pid, func(t *testing.T) {
			got := watchdogFromEnv(env(map[string]string{"WATCHDOG_USEC": c.usec, "WATCHDOG_PID": c.pid}))
			is.New(t).Equal(got, c.want)
		})
	}
}
