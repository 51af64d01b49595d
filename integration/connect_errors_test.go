package integration

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	p "github.com/mcpflow/mcpflow/api/protocol"
	"github.com/mcpflow/mcpflow/fakes/poll"
)

// A stdio source whose command fails at start says why, in its status
// and in the log, once; its secrets never show.
func TestConnectErrorOfAStdioSourceShowsItsStderrOnce(t *testing.T) {
	t.Parallel() // its own mcpflow: see parallelTests
	is := is.New(t)
	const secret = "sk-connect-errors-0123456789"
	// The server dies at start, before or after it reads initialize: the
	// connect sees EOF or a broken pipe; either way the cause is its exit.
	src := stdioSource("broken.default", "sh", "-c", `echo "Error: Cannot find module './nope.js'" >&2; echo "token $API_TOKEN rejected" >&2; exit 1`)
	src.Transport.Env = map[string]string{"API_TOKEN": secret}
	pr := startProcess(t, writeConfig(t, t.TempDir(), src), "serve.log")
	c := dialURL(t, pr.url)

	// The status says why the connect failed; a few retries fail the same way.
	var st p.SessionStatus
	if !poll.Until(20*time.Second, func() bool {
		res, err := c.GetConnectionStatuses(testContext(t))
		is.NoErr(err)
		is.Equal(len(res.Statuses), 1)
		st = res.Statuses[0].Session
		return st.Restarts >= 3 && st.LastError != nil
	}) {
		t.Logf("status after 20s: %+v", st)
		is.Fail() // the connection keeps retrying
	}
	lastErr := *st.LastError
	// The status holds the server's exit report: its status and stderr
	// say why better than the EOF or broken pipe its client saw.
	is.True(strings.Contains(lastErr, "the server exited: exit status 1; the server's stderr ended with:")) // how it ended
	is.True(strings.Contains(lastErr, "Error: Cannot find module './nope.js'"))                             // and why
	is.True(strings.Contains(lastErr, "token [redacted] rejected"))                                         // the server's own words, less the secret
	is.True(!strings.Contains(lastErr, secret))

	data, err := os.ReadFile(pr.logs)
	is.NoErr(err)
	logs := string(data)
	var warned []string
	for _, line := range strings.Split(logs, "\n") {
		if strings.Contains(line, "Cannot find module") && !strings.Contains(line, "level=ERROR") {
			warned = append(warned, line) // the degraded error, if reached, is another event
		}
	}
	if len(warned) != 1 {
		t.Logf("log:\n%s", logs)
	}
	is.Equal(len(warned), 1) // one failure cause, logged once
	is.True(strings.Contains(warned[0], `level=WARN msg="mcp connect failed" connection=broken.default`))
	is.True(strings.Contains(warned[0], `Cannot find module './nope.js'`))
	is.True(!strings.Contains(logs, "catalog refresh failed"))      // the supervisor leaves it to the session
	is.True(!strings.Contains(logs, "warm-up: catalog not listed")) // and so does the warm-up
	is.True(!strings.Contains(logs, secret))                        // no secret in the log
}
