package session

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/config"
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
