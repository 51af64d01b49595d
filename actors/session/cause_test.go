package session_test

import (
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/session"
)

// TestCauseWordsTheCommonFailuresForAUser checks that the common causes
// of a failed connect read as what to do, not as the transport's words.
func TestCauseWordsTheCommonFailuresForAUser(t *testing.T) {
	is := is.New(t)
	for _, c := range []struct{ msg, want string }{
		{"connect: calling \"initialize\": EOF; the server's stderr ended with:\nmcpflow reap: start playwrite-mcp: exec: \"playwrite-mcp\": executable file not found in $PATH",
			"the command `playwrite-mcp` was not found on PATH"},
		{"connect: calling \"initialize\": EOF; the server's stderr ended with:\nmcpflow reap: start /opt/x/server: fork/exec /opt/x/server: no such file or directory",
			"the command `/opt/x/server` does not exist"},
		{"connect: calling \"initialize\": EOF; the server's stderr ended with:\nmcpflow reap: start ./srv.sh: fork/exec ./srv.sh: permission denied",
			"the command `./srv.sh` could not be started: permission denied"},
		{"connect: calling \"initialize\": EOF; the server's stderr ended with:\nError: Cannot find module 'x'\n    at foo",
			"the server process exited at start (EOF); its stderr ended with: Error: Cannot find module 'x' | at foo"},
		{"connect: the server exited: exit status 1; the server's stderr ended with:\nError: Cannot find module 'x'",
			"the server process exited at start (exit status 1); its stderr ended with: Error: Cannot find module 'x'"},
		{`connect: calling "initialize": sending "initialize": Post "http://127.0.0.1:9/mcp": dial tcp 127.0.0.1:9: connect: connection refused`,
			"the server refused the connection"},
		{`connect: calling "initialize": sending "initialize": Unauthorized`, "401 Unauthorized"},
		{`connect: calling "initialize": sending "initialize": Not Found`, "404 Not Found"},
		{`connect: Post "https://x/mcp": tls: failed to verify certificate: x509: certificate signed by unknown authority`, "the TLS handshake failed"},
		{"something else entirely", "something else entirely"},
	} {
		got := session.Actionable(c.msg)
		if !strings.Contains(got, c.want) {
			t.Logf("Actionable(%q) = %q, want it to say %q", c.msg, got, c.want)
		}
		is.True(strings.Contains(got, c.want)) // the cause a user can act on
	}
	is.Equal(session.Actionable(""), "")
}
