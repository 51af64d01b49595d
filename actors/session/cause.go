package session

import (
	"regexp"
	"strings"
)

// stderrMarker joins a failed connect's error and the tail of the server's
// stderr (see stderrError).
const stderrMarker = "; the server's stderr ended with:\n"

// Patterns of the common causes a connect fails with, as the transports,
// the reaper and the go-sdk word them.
var (
	// execNotFound: exec: "playwrite-mcp": executable file not found in $PATH
	execNotFound = regexp.MustCompile(`exec: "([^"]*)": executable file not found in \$PATH`)
	// startFailed: the reaper's (or exec's) "start CMD: …: no such file or
	// directory" and "…: permission denied".
	startFailed = regexp.MustCompile(`(?:start|fork/exec) ([^\s:]+): (?:[^\n]*: )?(no such file or directory|permission denied)`)
)

// Actionable words msg, a session's last error (already redacted), as what a
// user can act on: the command that was not found on PATH, the process
// that exited at start with the tail of its stderr, a refused connection,
// an HTTP status, a TLS failure. A message it does not recognise is
// returned as it is. The result never holds more than msg did.
func Actionable(msg string) string {
	msg = strings.TrimSpace(msg)
	if msg == "" {
		return ""
	}
	head, tail, hasTail := strings.Cut(msg, stderrMarker)
	tail = strings.TrimSpace(tail)
	if m := execNotFound.FindStringSubmatch(msg); m != nil {
		return "the command `" + m[1] + "` was not found on PATH: install it, or give the full path as the source's transport.command"
	}
	if m := startFailed.FindStringSubmatch(msg); m != nil {
		if m[2] == "permission denied" {
			return "the command `" + m[1] + "` could not be started: permission denied (make it executable: chmod +x)"
		}
		return "the command `" + m[1] + "` does not exist: check the path in the source's transport.command"
	}
	if hasTail && tail != "" {
		return "the server process exited at start (" + lastClause(head) + "); its stderr ended with: " + oneLine(tail)
	}
	lower := strings.ToLower(msg)
	switch {
	case strings.Contains(lower, "connection refused"):
		return "the server refused the connection: nothing listens at the source's URL (is the server running, and is the port right?)"
	case strings.Contains(lower, "no such host"):
		return "the source's host name does not resolve (no such host): check the URL"
	case strings.Contains(lower, "x509:") || strings.Contains(lower, "tls:") || strings.Contains(lower, "certificate"):
		return "the TLS handshake failed (" + lastClause(msg) + "): check the URL's scheme and the server's certificate"
	case strings.HasSuffix(msg, "Unauthorized") || strings.Contains(msg, " 401"):
		return "the server answered 401 Unauthorized: give the source credentials (an auth_ref: mcpflow auth save), or log in (mcpflow sources login SOURCE)"
	case strings.HasSuffix(msg, "Forbidden") || strings.Contains(msg, " 403"):
		return "the server answered 403 Forbidden: the source's credentials lack access"
	case strings.HasSuffix(msg, "Not Found") || strings.Contains(msg, " 404"):
		return "the server answered 404 Not Found: check the path of the source's URL (MCP servers often serve /mcp)"
	case hasTail || strings.HasSuffix(msg, ": EOF"):
		return "the server process exited at start, and wrote nothing on stderr (" + lastClause(head) + ")"
	}
	return msg
}

// lastClause is the innermost cause of a wrapped error's text: what
// follows its last ": ".
func lastClause(msg string) string {
	if i := strings.LastIndex(msg, ": "); i >= 0 {
		return msg[i+2:]
	}
	return msg
}

// oneLine joins lines with " | ".
func oneLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for i := range lines {
		lines[i] = strings.TrimSpace(lines[i])
	}
	return strings.Join(lines, " | ")
}

// Failing reports whether the status is of a session that does not work
// now: degraded, waiting for a login, backing off after a failure, or
// connecting again after an error newer than its last success.
func (s Status) Failing() bool {
	switch s.State {
	case StateDegraded, StateNeedsLogin, StateBackoff:
		return true
	case StateConnecting:
		return s.LastError != "" && s.LastErrorAt.After(s.LastSuccessAt)
	}
	return false
}
