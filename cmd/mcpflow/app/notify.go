package app

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"
)

// The service manager's notification protocol (sd_notify(3)), spoken
// without a systemd library: one datagram of newline-separated
// VARIABLE=value assignments per notification, sent to the unix datagram
// socket NOTIFY_SOCKET names.
const (
	notifyReady    = "READY=1"
	notifyStopping = "STOPPING=1"
	notifyWatchdog = "WATCHDOG=1"
)

// notifyTimeout bounds one notification: a unix datagram send blocks while
// the receiver's queue is full.
const notifyTimeout = time.Second

// notifier sends notifications to the service manager. A nil notifier
// (NOTIFY_SOCKET unset) sends nothing.
type notifier struct {
	addr *net.UnixAddr
}

// notifierFromEnv is the notifier getenv's NOTIFY_SOCKET names: nil when
// it is unset, an error when it is neither an absolute path nor an
// abstract socket ("@name"). The value never appears in the error.
func notifierFromEnv(getenv func(string) string) (*notifier, error) {
	name := getenv("NOTIFY_SOCKET")
	switch {
	case name == "":
		return nil, nil
	case strings.HasPrefix(name, "/"), strings.HasPrefix(name, "@") && len(name) > 1:
		// On Linux, Go maps a leading '@' to the abstract namespace.
		return &notifier{addr: &net.UnixAddr{Name: name, Net: "unixgram"}}, nil
	default:
		return nil, errors.New("NOTIFY_SOCKET is neither an absolute path nor an abstract socket (@name): not notifying")
	}
}

// send sends states (each VARIABLE=value) as one notification. Each
// notification uses a socket of its own, as sd_notify does, so a service
// manager that restarted its socket is still reached.
func (n *notifier) send(states ...string) error {
	if n == nil {
		return nil
	}
	conn, err := net.DialUnix("unixgram", nil, n.addr)
	if err != nil {
		return fmt.Errorf("notify service manager: %w", err)
	}
	defer conn.Close()
	if err := conn.SetWriteDeadline(time.Now().Add(notifyTimeout)); err != nil {
		return fmt.Errorf("notify service manager: %w", err)
	}
	if _, err := conn.Write([]byte(strings.Join(states, "\n"))); err != nil {
		return fmt.Errorf("notify service manager: %w", err)
	}
	return nil
}

// watchdogFromEnv is the interval at which the service manager expects
// WATCHDOG=1: half of WATCHDOG_USEC, as sd_watchdog_enabled(3) advises.
// It is 0 (no watchdog) when WATCHDOG_USEC is unset or invalid, or when
// WATCHDOG_PID names another process (the variables were inherited).
func watchdogFromEnv(getenv func(string) string) time.Duration {
	usec, err := strconv.ParseInt(getenv("WATCHDOG_USEC"), 10, 64)
	if err != nil || usec <= 0 {
		return 0
	}
	if pid := getenv("WATCHDOG_PID"); pid != "" && pid != strconv.Itoa(os.Getpid()) {
		return 0
	}
	return time.Duration(usec) * time.Microsecond / 2
}
