package session_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/credentials"
	"github.com/mcpflow/mcpflow/actors/session"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/fakes"
)

var _ session.Credentials = (*credentials.Binder)(nil)

const sessionSecret = "session-s3cret-5a7e"

// bearerBinder binds every connection to a bearer record holding token.
func bearerBinder(token string) *credentials.Binder {
	return credentials.NewBinder(func(context.Context, config.Connection) (store.AuthRecord, bool, error) {
		return store.AuthRecord{ID: "cred", Scheme: "bearer", Payload: map[string]any{"token": token}}, true, nil
	})
}

func httpSource(url string) config.Connection {
	ref := "cred"
	return config.Connection{Kind: "mcp", ID: connID, AuthRef: &ref, Transport: config.Transport{
		Kind: config.TransportHTTP, URL: url,
		Headers: map[string]string{"Authorization": "Bearer configured-but-stale", "X-Team": "search"},
	}}
}

func TestHTTPSessionSendsItsCredentialsOverTheConfiguredHeaders(t *testing.T) {
	is := is.New(t)
	upstream := fakes.NewAuthServer(fakes.AuthOptions{Tokens: []string{sessionSecret}})
	t.Cleanup(upstream.Close)
	e := newEngine(t)
	pid := e.Spawn(session.New(httpSource(upstream.URL), session.HTTP{Credentials: bearerBinder(sessionSecret)}, testOptions()), "session")
	t.Cleanup(func() { stop(t, e, pid) })

	is.Equal(mustCall(t, e, pid, "counter", nil)["count"], float64(1)) // the record's token won over the configured header
	is.Equal(upstream.Rejections(), 0)
}

func TestHTTPSessionErrorsDoNotShowARejectedSecret(t *testing.T) {
	is := is.New(t)
	upstream := fakes.NewAuthServer(fakes.AuthOptions{Tokens: []string{"the-right-token"}, Echo: true})
	t.Cleanup(upstream.Close)
	h := spawnWithParentConn(t, httpSource(upstream.URL), session.HTTP{Credentials: bearerBinder(sessionSecret)})

	r := call(t, h.engine, h.pid, "counter", nil)
	is.True(r.Error.Err() != nil) // the upstream refused the token
	t.Log(r.Error.Err())
	is.True(upstream.Rejections() > 0) // with a 401 that quoted it
	is.True(!strings.Contains(r.Error.Err().Error(), sessionSecret))
	for st := h.waitState(t, session.StateConnecting); st.State != session.StateBackoff; {
		select {
		case st = <-h.statuses:
			is.True(!strings.Contains(st.LastError, sessionSecret)) // nor does the reported status
		case <-time.After(patience):
			t.Fatal("no backoff status")
		}
	}
}

func TestUnboundCredentialsFailTheConnectByName(t *testing.T) {
	is := is.New(t)
	binder := credentials.NewBinder(func(context.Context, config.Connection) (store.AuthRecord, bool, error) {
		return store.AuthRecord{ID: "cred", Scheme: "env", Payload: map[string]any{"env": map[string]any{"TOKEN": sessionSecret}}}, true, nil
	})
	e := newEngine(t)
	pid := e.Spawn(session.New(httpSource("http://127.0.0.1:1/mcp"), session.HTTP{Credentials: binder}, testOptions()), "session")
	t.Cleanup(func() { stop(t, e, pid) })
	r := call(t, e, pid, "counter", nil)
	is.True(r.Error.Err() != nil)
	is.True(strings.Contains(r.Error.Err().Error(), credentials.CodeNotSupported))
	is.True(strings.Contains(r.Error.Err().Error(), `"env"`))
	is.True(!strings.Contains(r.Error.Err().Error(), sessionSecret))
}

// spawnWithParentConn is spawnWithParent for a given connection.
func spawnWithParentConn(t *testing.T, conn config.Connection, factory session.TransportFactory) *harness {
	t.Helper()
	return spawnWithParent(t, connFactory{conn: conn, inner: factory}, testOptions())
}

// connFactory makes transports for conn whatever connection it is asked
// for (spawnWithParent's actor serves testConn).
type connFactory struct {
	conn  config.Connection
	inner session.TransportFactory
}

func (f connFactory) NewTransport(config.Connection) (mcp.Transport, error) {
	return f.inner.NewTransport(f.conn)
}

// An oauth source whose server answers 401 goes to needs_login: the call
// fails with ErrNeedsLogin naming the authorization host, the status shows
// the host, no reconnect is tried, and the next call fails at once.
func TestAnOAuthSourceWithoutALoginNeedsOne(t *testing.T) {
	is := is.New(t)
	upstream := fakes.NewOAuthServer(fakes.OAuthOptions{})
	t.Cleanup(upstream.Close)
	st := store.NewMemory()
	binder := credentials.NewBinder(credentials.FromStore(st))
	binder.Records = st
	conn := config.Connection{Kind: "mcp", ID: connID, Auth: &config.SourceAuth{Kind: config.AuthOAuth},
		Transport: config.Transport{Kind: config.TransportHTTP, URL: upstream.URL}}
	h := spawnConnWithParent(t, conn, session.HTTP{Credentials: binder}, testOptions())
	host := upstream.AS.Listener.Addr().String()

	r := call(t, h.engine, h.pid, "counter", nil)
	is.True(errors.Is(r.Error.Err(), session.ErrNeedsLogin))
	is.True(errors.Is(r.Error.Err(), session.ErrUnavailable))
	is.True(strings.Contains(r.Error.Err().Error(), "mcpflow sources login "+connID))
	h.waitState(t, session.StateConnecting)
	status := h.waitState(t, session.StateNeedsLogin)
	is.Equal(status.LoginHost, host)
	is.True(status.NextAttemptAt.IsZero()) // no reconnect: only a login helps
	is.Equal(upstream.Registrations(), 1)

	r = call(t, h.engine, h.pid, "counter", nil)
	is.True(errors.Is(r.Error.Err(), session.ErrNeedsLogin)) // at once, with no new connect
	is.Equal(upstream.Registrations(), 1)
}
