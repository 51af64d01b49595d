package integration

import (
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
)

// serviceManager is a fake systemd: the notification socket a service
// manager gives a Type=notify service, and the notifications it received.
type serviceManager struct {
	path          string
	notifications chan notification
}

// notification is one datagram and when it arrived.
type notification struct {
	text string
	at   time.Time
}

// newServiceManager listens on a unix datagram socket and reads it into
// notifications until the test ends.
func newServiceManager(t *testing.T) *serviceManager {
	t.Helper()
	is := is.New(t)
	is.Helper()
	dir, err := os.MkdirTemp("", "sdn") // sun_path holds 108 bytes: keep it short
	is.NoErr(err)
	path := filepath.Join(dir, "notify")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	is.NoErr(err) // listen on the notification socket
	m := &serviceManager{path: path, notifications: make(chan notification, 1024)}
	read := make(chan struct{})
	go func() {
		defer close(read)
		buf := make([]byte, 4096)
		for {
			n, err := conn.Read(buf)
			if err != nil {
				return // closed at cleanup
			}
			select {
			case m.notifications <- notification{text: string(buf[:n]), at: time.Now()}:
			default:
				t.Errorf("more than %d notifications", cap(m.notifications))
				return
			}
		}
	}()
	t.Cleanup(func() {
		_ = conn.Close()
		<-read
		_ = os.RemoveAll(dir)
	})
	return m
}

// next is the next notification, within 10 s.
func (m *serviceManager) next(t *testing.T) notification {
	t.Helper()
	select {
	case n := <-m.notifications:
		return n
	case <-time.After(10 * time.Second):
		t.Fatal("no notification within 10s")
		return notification{}
	}
}

// until returns the time the first notification with the line want
// arrived, skipping those before it.
func (m *serviceManager) until(t *testing.T, want string) time.Time {
	t.Helper()
	for {
		if n := m.next(t); hasLine(n.text, want) {
			return n.at
		}
	}
}

func hasLine(notification, want string) bool {
	for line := range strings.SplitSeq(notification, "\n") {
		if line == want {
			return true
		}
	}
	return false
}

// readyz is the status code and body of GET /readyz on base, or the error
// of a request that got no answer.
func readyz(base string) (int, string, error) {
	resp, err := http.Get(base + "/readyz")
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), err
}

// TestServiceUnderSystemdNotifiesReadyWatchdogAndStopping runs the real
// binary as systemd runs a Type=notify service with WatchdogSec=200ms:
// READY=1 arrives once it serves, when /readyz already answers 200;
// WATCHDOG=1 paced at 100 ms; and SIGTERM brings STOPPING=1, after which
// /readyz is never 200, and a clean exit 0.
func TestServiceUnderSystemdNotifiesReadyWatchdogAndStopping(t *testing.T) {
	if testing.Short() {
		t.Skip("service test: starts and stops the real binary")
	}
	is := is.New(t)
	sd := newServiceManager(t)
	// Inherited by the binary that startProcess starts.
	t.Setenv("NOTIFY_SOCKET", sd.path)
	t.Setenv("WATCHDOG_USEC", "200000")
	t.Setenv("WATCHDOG_PID", "")
	cfgPath := writeConfig(t, t.TempDir(), stdioSource("slow.default", fakeMCP))
	pr := startProcess(t, cfgPath, "service.log")

	first := sd.next(t)
	is.True(strings.HasPrefix(first.text, "STATUS=starting")) // says what the start does
	ready := sd.until(t, "READY=1")
	code, body, err := readyz(pr.httpBase())
	is.NoErr(err)
	is.Equal(code, http.StatusOK) // ready by READY=1
	is.Equal(body, `{"status":"ready"}`)

	logs, err := os.ReadFile(pr.logs)
	is.NoErr(err)
	is.True(strings.Contains(string(logs), "watchdog_interval=100ms")) // it paces its pings at half the timeout (cmd/mcpflow/app checks the pace on a manual clock)
	last := ready
	var gaps []time.Duration
	for range 3 {
		ping := sd.next(t)
		is.Equal(ping.text, "WATCHDOG=1") // the watchdog is pinged, and nothing else is said
		gaps = append(gaps, ping.at.Sub(last).Round(time.Millisecond))
		last = ping.at
	}
	// A figure, not a bound: a loaded machine's scheduling delays a ping
	// by as long as it likes.
	t.Logf("WATCHDOG_USEC=200000: pings after %v", gaps)

	stopped := make(chan int, 1)
	go func() {
		code, _ := pr.terminate(t)
		stopped <- code
	}()
	sd.until(t, "STOPPING=1")
	code, body, err = readyz(pr.httpBase())
	t.Logf("/readyz after STOPPING=1: %d %s (err: %v)", code, body, err)
	is.True(code != http.StatusOK) // never ready once stopping: 503, or the listener is closed
	select {
	case code := <-stopped:
		is.Equal(code, 0) // a clean stop exits 0
	case <-time.After(3 * shutdownBudget):
		is.Fail() // the process exits after SIGTERM
	}
}

// TestReadyzAnswersLikeHealthz: /readyz, like /healthz, answers any Host
// and Origin without a token (it tells only whether the service is
// ready), and is GET only.
func TestReadyzAnswersLikeHealthz(t *testing.T) {
	is := is.New(t)
	s := startService(t, nil)
	base := "http://" + strings.TrimSuffix(strings.TrimPrefix(s.URL, "ws://"), "/ws")
	for _, path := range []string{"/healthz", "/readyz"} {
		req, err := http.NewRequest(http.MethodGet, base+path, nil)
		is.NoErr(err)
		req.Host = "evil.example"
		req.Header.Set("Origin", "http://evil.example")
		resp, err := http.DefaultClient.Do(req)
		is.NoErr(err)
		resp.Body.Close()
		is.Equal(resp.StatusCode, http.StatusOK) // answered whatever the Host and Origin
		is.Equal(resp.Header.Get("Content-Type"), "application/json")
	}
	resp, err := http.Post(base+"/readyz", "application/json", strings.NewReader("{}"))
	is.NoErr(err)
	resp.Body.Close()
	is.True(resp.StatusCode != http.StatusOK) // GET only
}
