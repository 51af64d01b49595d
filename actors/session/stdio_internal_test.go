package session

import (
	"context"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/session/reap"
)

// envCredentials adds fixed variables.
type envCredentials map[string]string

func (e envCredentials) HTTP(context.Context, config.Connection, http.RoundTripper) (http.RoundTripper, error) {
	return nil, nil
}

func (e envCredentials) Env(context.Context, config.Connection) (map[string]string, error) {
	return e, nil
}

func TestStdioCredentialsWinOverTheTransportEnv(t *testing.T) {
	is := is.New(t)
	conn := config.Connection{Kind: "mcp", ID: "tool.main", Transport: config.Transport{
		Kind: config.TransportStdio, Command: "true", Env: map[string]string{"API_KEY": "from-config", "LOG_LEVEL": "debug"},
	}}
	tr, err := Stdio{Credentials: envCredentials{"API_KEY": "from-auth"}}.NewTransport(conn)
	is.NoErr(err)
	env := tr.(*stdioTransport).cmd.Environ()
	var apiKey, logLevel string
	for _, kv := range env { // the last assignment wins
		if v, ok := strings.CutPrefix(kv, "API_KEY="); ok {
			apiKey = v
		}
		if v, ok := strings.CutPrefix(kv, "LOG_LEVEL="); ok {
			logLevel = v
		}
	}
	is.Equal(apiKey, "from-auth")
	is.Equal(logLevel, "debug")
}

func TestStdioStderrIsLoggedWithoutTheCredentials(t *testing.T) {
	is := is.New(t)
	r := redactor(map[string]string{"A": "s3cret", "B": "s3cret-longer"})
	is.Equal(r.Replace("token=s3cret-longer and s3cret"), "token=[redacted] and [redacted]")
	is.Equal(redactor(nil).Replace("plain"), "plain")
}

func TestStdioServersGetOnlyPathHomeLangAndWhatIsConfigured(t *testing.T) {
	is := is.New(t)
	t.Setenv("PATH", "/usr/bin:/bin")
	t.Setenv("HOME", "/home/mcpflow")
	t.Setenv("LANG", "C.UTF-8")
	t.Setenv("MCPFLOW_DB_PASSWORD", "hunter2")   // mcpflow's own secret
	t.Setenv("AWS_SECRET_ACCESS_KEY", "abc/def") // and the cloud's
	conn := config.Connection{Kind: "mcp", ID: "tool.main", Transport: config.Transport{
		Kind: config.TransportStdio, Command: "true", Env: map[string]string{"LOG_LEVEL": "debug", "HOME": "/srv/tool"},
	}}
	tr, err := Stdio{Credentials: envCredentials{"API_KEY": "from-auth"}}.NewTransport(conn)
	is.NoErr(err)
	is.Equal(tr.(*stdioTransport).cmd.Env, []string{
		"API_KEY=from-auth",  // the auth record
		"HOME=/srv/tool",     // configured wins over inherited
		"LANG=C.UTF-8",       // inherited
		"LOG_LEVEL=debug",    // configured
		"PATH=/usr/bin:/bin", // inherited
	})
}

func TestStdioEnvSkipsInheritedVariablesMcpflowLacks(t *testing.T) {
	is := is.New(t)
	is.Equal(stdioEnv([]string{"PATH=/bin", "SECRET=x", "LANGUAGE=fr", "=C:=C:\\"}), []string{"PATH=/bin"})
	is.Equal(stdioEnv(nil, map[string]string{"A": "1"}, map[string]string{"A": "2"}), []string{"A=2"}) // later layers win
}

// sequenceEvent is one step the stop sequence took, and when.
type sequenceEvent struct {
	what string
	at   time.Duration
}

// runSequence runs stopSequence against a fake server: exitOnClose says
// whether it exits when its stdin closes, exitOnTerm whether SIGTERM ends
// its whole group.
func runSequence(g reap.Grace, exitOnClose, exitOnTerm bool) []sequenceEvent {
	start := time.Now()
	var events []sequenceEvent
	exited := make(chan struct{})
	alive := true
	end := func() {
		if alive {
			alive = false
			close(exited)
		}
	}
	stopSequence(g,
		func() {
			events = append(events, sequenceEvent{"close stdin", time.Since(start)})
			if exitOnClose {
				end()
			}
		},
		exited,
		func() bool { return alive },
		func(sig syscall.Signal) {
			events = append(events, sequenceEvent{sig.String(), time.Since(start)})
			if sig == syscall.SIGKILL || exitOnTerm {
				end()
			}
		})
	return events
}

func steps(events []sequenceEvent) []string {
	var out []string
	for _, e := range events {
		out = append(out, e.what)
	}
	return out
}

func TestStopSequenceKillsTheGroupEvenWhenTheServerExitsOnStdinClose(t *testing.T) {
	is := is.New(t)
	g := reap.Grace{Close: time.Second, Term: time.Second}
	events := runSequence(g, true, false)
	is.Equal(steps(events), []string{"close stdin", "killed"}) // nothing left to SIGTERM; the group kill still runs
	is.True(events[1].at < g.Close)                            // no grace waited
}

func TestStopSequenceSendsSIGTERMAfterTheCloseGrace(t *testing.T) {
	is := is.New(t)
	g := reap.Grace{Close: 60 * time.Millisecond, Term: time.Second}
	events := runSequence(g, false, true)
	is.Equal(steps(events), []string{"close stdin", "terminated", "killed"})
	is.True(events[1].at >= g.Close)       // SIGTERM only after the close grace
	is.True(events[2].at < g.Close+g.Term) // SIGKILL at once once the group is gone
}

func TestStopSequenceSendsSIGKILLAfterTheTermGrace(t *testing.T) {
	is := is.New(t)
	g := reap.Grace{Close: 40 * time.Millisecond, Term: 60 * time.Millisecond}
	events := runSequence(g, false, false)
	is.Equal(steps(events), []string{"close stdin", "terminated", "killed"})
	is.True(events[1].at >= g.Close)
	is.True(events[2].at >= g.Close+g.Term) // SIGKILL only after the term grace
}
