package session

import (
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/matryer/is"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflow/mcpflow/actors/config"
)

func TestTheCauseOfAnEndedSessionSaysWhyWithoutSecrets(t *testing.T) {
	is := is.New(t)
	a := &Actor{conn: config.Connection{ID: "p.a", Transport: config.Transport{Env: map[string]string{"TOKEN": "s3cret-value"}}}}

	exit := exec.Command("sh", "-c", "exit 3").Run()
	var ee *exec.ExitError
	is.True(errors.As(exit, &ee)) // a real exit status
	reported := &stderrError{err: fmt.Errorf("the server exited: %w", exit), stderr: "Error: bad token s3cret-value\n    at main"}
	c := a.causeOf(fmt.Errorf("session ended: %w", reported), nil)
	is.Equal(c.Kind, CauseExited)
	is.Equal(c.ExitStatus, "exit status 3")
	is.Equal(c.Stderr, "Error: bad token [redacted]\n    at main")
	is.Equal(c.Error, "the server exited: exit status 3") // the tail is not repeated

	c = a.causeOf(fmt.Errorf("%w: 3 pings in a row got no answer within 5s", errKeepaliveFailed), nil)
	is.Equal(c.Kind, CausePingFailed)
	is.Equal(c.Error, "keepalive failed: 3 pings in a row got no answer within 5s")

	c = a.causeOf(fmt.Errorf("calling tools/call: %w", mcp.ErrSessionMissing), nil)
	is.Equal(c.Kind, CauseUnknownSession)

	c = a.causeOf(errors.New("read https://up.example/mcp?key=s3cret-value: connection reset "+strings.Repeat("x", 2000)), nil)
	is.Equal(c.Kind, CauseTransport)
	is.True(!strings.Contains(c.Error, "s3cret"))   // redacted
	is.True(len(c.Error) <= maxCauseBytes+len("…")) // bounded
}
