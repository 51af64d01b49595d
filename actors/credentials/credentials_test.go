package credentials_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/credentials"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/fakes"
)

// Secret values the tests save; none may appear in an error or log line.
const (
	bearerSecret  = "bearer-s3cret-7f1c"
	headerSecret  = "header-s3cret-91ab"
	envSecret     = "env-s3cret-44d0"
	refreshSecret = "refresh-s3cret-0e2b"
	clientSecret  = "client-s3cret-c3d9"
)

var allSecrets = []string{bearerSecret, headerSecret, envSecret, refreshSecret, clientSecret}

// logs captures the default logger at debug level for one test.
func logs(t *testing.T) *syncBuffer {
	t.Helper()
	buf := &syncBuffer{}
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug})))
	t.Cleanup(func() { slog.SetDefault(prev) })
	return buf
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// noSecret fails if text holds any secret of the tests (or extra).
func noSecret(t *testing.T, what, text string, extra ...string) {
	t.Helper()
	for _, s := range append(allSecrets, extra...) {
		if s != "" && strings.Contains(text, s) {
			t.Errorf("%s shows a secret value: %s", what, text)
		}
	}
}

func ptr(s string) *string { return &s }

func httpConn(id, url string, authRef *string) config.Connection {
	return config.Connection{Kind: "mcp", ID: id, AuthRef: authRef, Transport: config.Transport{Kind: config.TransportHTTP, URL: url}}
}

func stdioConn(id string, authRef *string) config.Connection {
	return config.Connection{Kind: "mcp", ID: id, AuthRef: authRef, Transport: config.Transport{Kind: config.TransportStdio, Command: "server"}}
}

// binderOver saves recs in a memory store and binds from it.
func binderOver(t *testing.T, recs ...store.AuthRecord) (*credentials.Binder, *store.Memory) {
	t.Helper()
	st := store.NewMemory()
	for _, r := range recs {
		is.New(t).NoErr(st.SaveAuth(context.Background(), r))
	}
	return credentials.NewBinder(credentials.FromStore(st)), st
}

// echoServer answers each request with the headers it got, as JSON-ish
// lines, and counts requests.
func headerServer(t *testing.T) (*httptest.Server, *atomic.Pointer[http.Header]) {
	var last atomic.Pointer[http.Header]
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := r.Header.Clone()
		last.Store(&h)
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(s.Close)
	return s, &last
}

func get(t *testing.T, rt http.RoundTripper, url string) (*http.Response, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	is.New(t).NoErr(err)
	return rt.RoundTrip(req)
}

func TestBearerIsSentAsAnAuthorizationHeader(t *testing.T) {
	is := is.New(t)
	srv, last := headerServer(t)
	b, _ := binderOver(t, store.AuthRecord{ID: "api.main", Scheme: "bearer", Payload: map[string]any{"token": bearerSecret}})
	rt, err := b.HTTP(t.Context(), httpConn("api.main", srv.URL, nil), http.DefaultTransport) // resolved by connection id
	is.NoErr(err)
	resp, err := get(t, rt, srv.URL+"/mcp")
	is.NoErr(err)
	resp.Body.Close()
	is.Equal((*last.Load()).Get("Authorization"), "Bearer "+bearerSecret)

	// access_token is the typed record's key for the same thing.
	b, _ = binderOver(t, store.AuthRecord{ID: "cred", Scheme: "bearer", Payload: map[string]any{"access_token": bearerSecret}})
	rt, err = b.HTTP(t.Context(), httpConn("api.main", srv.URL, ptr("cred")), http.DefaultTransport)
	is.NoErr(err)
	resp, err = get(t, rt, srv.URL)
	is.NoErr(err)
	resp.Body.Close()
	is.Equal((*last.Load()).Get("Authorization"), "Bearer "+bearerSecret)
}

func TestHeadersAreSentOnlyToTheConnectionsOrigin(t *testing.T) {
	is := is.New(t)
	srv, last := headerServer(t)
	other, otherLast := headerServer(t)
	b, _ := binderOver(t, store.AuthRecord{ID: "cred", Scheme: "headers", Payload: map[string]any{"headers": map[string]any{"X-Api-Key": headerSecret, "X-Team": "search"}}})
	rt, err := b.HTTP(t.Context(), httpConn("api.main", srv.URL, ptr("cred")), http.DefaultTransport)
	is.NoErr(err)
	resp, err := get(t, rt, srv.URL)
	is.NoErr(err)
	resp.Body.Close()
	is.Equal((*last.Load()).Get("X-Api-Key"), headerSecret)
	is.Equal((*last.Load()).Get("X-Team"), "search")

	resp, err = get(t, rt, other.URL) // as a redirect would
	is.NoErr(err)
	resp.Body.Close()
	is.Equal((*otherLast.Load()).Get("X-Api-Key"), "") // another origin gets no credentials
}

func TestAnSSESourceTakesTheSchemesOfAnHTTPOne(t *testing.T) {
	is := is.New(t)
	srv, last := headerServer(t)
	b, _ := binderOver(t, store.AuthRecord{ID: "api.main", Scheme: "bearer", Payload: map[string]any{"token": bearerSecret}})
	conn := httpConn("api.main", srv.URL+"/sse", nil)
	conn.Transport.Kind = config.TransportSSE
	is.NoErr(b.Check(t.Context(), conn)) // the legacy HTTP transport takes a bearer record
	rt, err := b.HTTP(t.Context(), conn, http.DefaultTransport)
	is.NoErr(err)
	resp, err := get(t, rt, srv.URL+"/sse")
	is.NoErr(err)
	resp.Body.Close()
	is.Equal((*last.Load()).Get("Authorization"), "Bearer "+bearerSecret)
	for _, scheme := range []string{"bearer", "headers", "oauth_refresh_token", "oauth"} {
		is.True(credentials.SchemeSupported(config.TransportSSE, scheme))  // as over http
		is.True(credentials.SchemeSupported(config.TransportHTTP, scheme)) // oauth included
		is.True(!credentials.SchemeSupported(config.TransportStdio, scheme))
	}
	is.True(credentials.SchemeSupported(config.TransportStdio, "env"))
}

func TestEnvIsBoundForStdioOnly(t *testing.T) {
	is := is.New(t)
	b, _ := binderOver(t, store.AuthRecord{ID: "tool.main", Scheme: "env", Payload: map[string]any{"env": map[string]any{"API_KEY": envSecret}}})
	env, err := b.Env(t.Context(), stdioConn("tool.main", nil))
	is.NoErr(err)
	is.Equal(env, map[string]string{"API_KEY": envSecret})

	_, err = b.HTTP(t.Context(), httpConn("tool.main", "http://127.0.0.1:1/mcp", nil), http.DefaultTransport)
	is.True(errors.Is(err, credentials.ErrNotSupported))  // an http transport takes no env
	is.True(strings.Contains(err.Error(), `"tool.main"`)) // the message names the record...
	is.True(strings.Contains(err.Error(), `"env"`))       // ...and its scheme
	noSecret(t, "the error", err.Error())
}

func TestUnsupportedSchemesAreRefusedByName(t *testing.T) {
	is := is.New(t)
	b, _ := binderOver(t,
		store.AuthRecord{ID: "bearer", Scheme: "bearer", Payload: map[string]any{"token": bearerSecret}},
		store.AuthRecord{ID: "custom", Scheme: "sigv4", Payload: map[string]any{"secret_key": clientSecret}},
	)
	for _, c := range []struct {
		conn   config.Connection
		scheme string
	}{
		{stdioConn("tool.main", ptr("bearer")), "bearer"},
		{stdioConn("tool.main", ptr("custom")), "sigv4"},
		{httpConn("api.main", "http://127.0.0.1:1/mcp", ptr("custom")), "sigv4"},
	} {
		var err error
		if c.conn.Transport.Kind == config.TransportStdio {
			_, err = b.Env(t.Context(), c.conn)
		} else {
			_, err = b.HTTP(t.Context(), c.conn, http.DefaultTransport)
		}
		is.True(errors.Is(err, credentials.ErrNotSupported))
		is.True(strings.Contains(err.Error(), fmt.Sprintf("%q", c.scheme))) // names the scheme
		is.True(strings.Contains(err.Error(), credentials.CodeNotSupported))
		noSecret(t, "the error", err.Error())
		is.True(errors.Is(b.Check(t.Context(), c.conn), credentials.ErrNotSupported)) // Check says the same
	}
}

func TestAnExplicitAuthRefMustExist(t *testing.T) {
	is := is.New(t)
	b, _ := binderOver(t)
	_, err := b.HTTP(t.Context(), httpConn("api.main", "http://127.0.0.1:1/mcp", ptr("missing")), http.DefaultTransport)
	is.True(errors.Is(err, credentials.ErrNotFound))
	is.True(strings.Contains(err.Error(), `"missing"`))

	// Without auth_ref, a connection without a record of its id has none.
	rt, err := b.HTTP(t.Context(), httpConn("api.main", "http://127.0.0.1:1/mcp", nil), http.DefaultTransport)
	is.NoErr(err)
	is.Equal(rt, http.DefaultTransport)
	env, err := b.Env(t.Context(), stdioConn("tool.main", nil))
	is.NoErr(err)
	is.Equal(len(env), 0)

	// metadata.auth_ref of legacy configs is explicit too.
	legacy := httpConn("api.main", "http://127.0.0.1:1/mcp", nil)
	legacy.Metadata = map[string]any{"auth_ref": "missing"}
	is.True(errors.Is(b.Check(t.Context(), legacy), credentials.ErrNotFound))
}

func TestInvalidPayloadsAreNamedByKeyNeverByValue(t *testing.T) {
	is := is.New(t)
	for _, rec := range []store.AuthRecord{
		{ID: "a", Scheme: "bearer", Payload: map[string]any{"tok": bearerSecret}},
		{ID: "a", Scheme: "bearer", Payload: map[string]any{"token": bearerSecret + "\r\nX: y"}},
		{ID: "a", Scheme: "headers", Payload: map[string]any{"headers": map[string]any{"X-Key": 42, "Y": headerSecret}}},
		{ID: "a", Scheme: "headers", Payload: map[string]any{"headers": map[string]any{"Bad Name": headerSecret}}},
		{ID: "a", Scheme: "headers", Payload: map[string]any{"X-Key": headerSecret}},
		{ID: "a", Scheme: "env", Payload: map[string]any{"env": map[string]any{"A=B": envSecret}}},
		{ID: "a", Scheme: "env", Payload: map[string]any{"env": envSecret}},
		{ID: "a", Scheme: "oauth_refresh_token", Payload: map[string]any{"client_id": "app", "token_url": "https://idp.test/token"}},
		{ID: "a", Scheme: "oauth_refresh_token", Payload: map[string]any{"client_id": "app", "refresh_token": refreshSecret, "token_url": "ftp://" + clientSecret}},
		{ID: "a", Scheme: "oauth_refresh_token", Payload: map[string]any{"client_id": "app", "refresh_token": refreshSecret, "token_url": "https://idp.test/token", "client_secret": 7}},
		{ID: "a", Scheme: "oauth_refresh_token", Payload: map[string]any{"client_id": "app", "refresh_token": refreshSecret, "token_url": "https://idp.test/token", "scopes": []any{"a", 1}}},
	} {
		err := credentials.Validate(rec)
		is.True(errors.Is(err, credentials.ErrInvalid))
		noSecret(t, "the error", err.Error())
	}
	is.NoErr(credentials.Validate(store.AuthRecord{ID: "a", Scheme: "anything", Payload: map[string]any{"x": 1}})) // opaque
	is.NoErr(credentials.Validate(store.AuthRecord{ID: "a", Scheme: "oauth_refresh_token", Payload: map[string]any{
		"client_id": "app", "refresh_token": refreshSecret, "token_url": "https://idp.test/token", "scopes": []any{"a", "b"}}}))
}

func TestACredentialFormatsWithoutItsValues(t *testing.T) {
	is := is.New(t)
	c, err := credentials.Parse(store.AuthRecord{ID: "a", Scheme: "headers", Payload: map[string]any{"headers": map[string]any{"X": headerSecret}}})
	is.NoErr(err)
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x"} {
		noSecret(t, verb, fmt.Sprintf(verb, c))
	}
}

// clock is a fake clock tests move by hand.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func oauthRecord(s *fakes.AuthServer, refresh string) store.AuthRecord {
	return store.AuthRecord{ID: "idp", Scheme: "oauth_refresh_token", Payload: map[string]any{
		"client_id": "app", "client_secret": clientSecret, "refresh_token": refresh,
		"token_url": s.TokenURL, "scopes": []any{"read", "write"},
	}}
}

// oauthSetup is an AuthServer with a token endpoint, a binder over a fake
// clock and a round tripper for a connection to the server.
func oauthSetup(t *testing.T, opts fakes.AuthOptions) (*fakes.AuthServer, *clock, *credentials.Binder, http.RoundTripper) {
	t.Helper()
	is := is.New(t)
	opts.ClientID, opts.ClientSecret, opts.RefreshToken = "app", clientSecret, refreshSecret
	s := fakes.NewAuthServer(opts)
	t.Cleanup(s.Close)
	clk := &clock{now: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}
	b, _ := binderOver(t, oauthRecord(s, refreshSecret))
	b.Now = clk.Now
	rt, err := b.HTTP(t.Context(), httpConn("api.main", s.URL, ptr("idp")), http.DefaultTransport)
	is.NoErr(err)
	return s, clk, b, rt
}

// post sends a JSON-RPC ping to the MCP endpoint and returns the status.
func post(t *testing.T, rt http.RoundTripper, url string) (int, string) {
	t.Helper()
	is := is.New(t)
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	is.NoErr(err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := rt.RoundTrip(req)
	is.NoErr(err)
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

func TestOAuthTokenIsRefreshedBeforeItExpiresNotAtEveryCall(t *testing.T) {
	is := is.New(t)
	s, clk, b, rt := oauthSetup(t, fakes.AuthOptions{ExpiresIn: 3600})
	status, _ := post(t, rt, s.URL)
	is.True(status != http.StatusUnauthorized)
	is.Equal(s.Refreshes(), 1) // the first request fetches a token
	grant := s.LastGrant()
	is.Equal(grant.Get("grant_type"), "refresh_token")
	is.Equal(grant.Get("client_id"), "app")
	is.Equal(grant.Get("client_secret"), clientSecret)
	is.Equal(grant.Get("refresh_token"), refreshSecret)
	is.Equal(grant.Get("scope"), "read write") // scopes, space-joined

	for range 5 {
		post(t, rt, s.URL)
	}
	clk.advance(3500 * time.Second)
	post(t, rt, s.URL)
	is.Equal(s.Refreshes(), 1) // still valid for more than a minute: no refresh

	// A new session of the same connection (the session actor asks for a
	// transport again) keeps the token: no refresh at session open.
	rt2, err := b.HTTP(t.Context(), httpConn("api.main", s.URL, ptr("idp")), http.DefaultTransport)
	is.NoErr(err)
	post(t, rt2, s.URL)
	is.Equal(s.Refreshes(), 1)

	clk.advance(50 * time.Second) // less than a minute left
	status, _ = post(t, rt2, s.URL)
	is.True(status != http.StatusUnauthorized)
	is.Equal(s.Refreshes(), 2) // refreshed before it expired
	post(t, rt, s.URL)
	is.Equal(s.Refreshes(), 2)
	is.Equal(s.Rejections(), 0) // no request went out with an expired token
}

func TestOAuthRefreshesOnceAfterA401AndRetries(t *testing.T) {
	is := is.New(t)
	log := logs(t)
	s, _, _, rt := oauthSetup(t, fakes.AuthOptions{Echo: true}) // no expires_in: used until a 401
	post(t, rt, s.URL)
	is.Equal(s.Refreshes(), 1)

	s.Revoke() // the upstream drops the token early
	status, _ := post(t, rt, s.URL)
	is.True(status != http.StatusUnauthorized) // the retry with a fresh token succeeded
	is.Equal(s.Refreshes(), 2)                 // one refresh after the 401
	is.Equal(s.Rejections(), 1)
	noSecret(t, "the logs", log.String(), s.Minted()...)
}

func TestOAuthNeverLoopsOnARejectedToken(t *testing.T) {
	is := is.New(t)
	log := logs(t)
	s := fakes.NewAuthServer(fakes.AuthOptions{ClientID: "app", ClientSecret: clientSecret, RefreshToken: refreshSecret, Echo: true})
	t.Cleanup(s.Close)
	// The upstream refuses every token, fresh ones too.
	revoking := &revokingTransport{base: http.DefaultTransport, revoke: s.Revoke}
	b, _ := binderOver(t, oauthRecord(s, refreshSecret))
	rt, err := b.HTTP(t.Context(), httpConn("api.main", s.URL, ptr("idp")), revoking)
	is.NoErr(err)
	status, body := post(t, rt, s.URL)
	is.Equal(status, http.StatusUnauthorized)
	is.Equal(s.Refreshes(), 2)               // the first token, then one refresh after the 401
	is.Equal(revoking.sent.Load(), int64(2)) // the request and one retry
	noSecret(t, "the 401 body", body, s.Minted()...)
	is.True(strings.Contains(body, credentials.Redacted)) // the echoed token is redacted

	status, _ = post(t, rt, s.URL)
	is.Equal(status, http.StatusUnauthorized)
	is.Equal(s.Refreshes(), 2)               // the refreshed token was rejected too: no refresh again
	is.Equal(revoking.sent.Load(), int64(3)) // and no retry
	noSecret(t, "the logs", log.String(), s.Minted()...)
}

// revokingTransport revokes every token just before it sends a request,
// so the upstream refuses whatever it is sent.
type revokingTransport struct {
	base   http.RoundTripper
	revoke func()
	sent   atomic.Int64
}

func (r *revokingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	r.revoke()
	r.sent.Add(1)
	return r.base.RoundTrip(req)
}

func TestOAuthRetryReplaysTheRequestBody(t *testing.T) {
	is := is.New(t)
	var bodies []string
	var mu sync.Mutex
	s := fakes.NewAuthServer(fakes.AuthOptions{ClientID: "app", ClientSecret: clientSecret, RefreshToken: refreshSecret})
	t.Cleanup(s.Close)
	recording := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if r.Body != nil {
			data, _ := io.ReadAll(r.Body)
			mu.Lock()
			bodies = append(bodies, string(data))
			mu.Unlock()
			r.Body = io.NopCloser(bytes.NewReader(data))
		}
		return http.DefaultTransport.RoundTrip(r)
	})
	b, _ := binderOver(t, oauthRecord(s, refreshSecret))
	rt, err := b.HTTP(t.Context(), httpConn("api.main", s.URL, ptr("idp")), recording)
	is.NoErr(err)
	post(t, rt, s.URL)
	s.Revoke()
	status, _ := post(t, rt, s.URL)
	is.True(status != http.StatusUnauthorized)
	is.Equal(len(bodies), 3)       // the first ping, the refused one and its retry
	is.Equal(bodies[2], bodies[1]) // the retry sent the same body
	is.True(strings.Contains(bodies[2], `"ping"`))
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestConcurrentRequestsShareOneRefresh(t *testing.T) {
	is := is.New(t)
	s, _, _, rt := oauthSetup(t, fakes.AuthOptions{ExpiresIn: 3600})
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() { post(t, rt, s.URL) })
	}
	wg.Wait()
	is.Equal(s.Refreshes(), 1)
}

func TestAChangedRecordTakesEffectOnTheNextSession(t *testing.T) {
	is := is.New(t)
	s := fakes.NewAuthServer(fakes.AuthOptions{ClientID: "app", ClientSecret: clientSecret, RefreshToken: refreshSecret, ExpiresIn: 3600})
	t.Cleanup(s.Close)
	b, mem := binderOver(t, oauthRecord(s, refreshSecret))
	conn := httpConn("api.main", s.URL, ptr("idp"))
	rt, err := b.HTTP(t.Context(), conn, http.DefaultTransport)
	is.NoErr(err)
	post(t, rt, s.URL)
	is.Equal(s.Refreshes(), 1)

	// The record now holds a refresh token the endpoint refuses: the next
	// session uses it (and fails), with no secret in the error.
	rotated := "rotated-" + refreshSecret
	is.NoErr(mem.SaveAuth(t.Context(), oauthRecord(s, rotated)))
	rt, err = b.HTTP(t.Context(), conn, http.DefaultTransport)
	is.NoErr(err)
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, s.URL, nil)
	is.NoErr(err)
	_, err = rt.RoundTrip(req)
	is.True(err != nil) // the changed record is used: its refresh token is refused
	is.True(strings.Contains(err.Error(), "invalid_grant"))
	is.True(strings.Contains(err.Error(), `"idp"`))
	noSecret(t, "the error", err.Error(), rotated)

	// Deleted, the record no longer binds: the explicit auth_ref fails.
	_, err = mem.DeleteAuth(t.Context(), "idp")
	is.NoErr(err)
	_, err = b.HTTP(t.Context(), conn, http.DefaultTransport)
	is.True(errors.Is(err, credentials.ErrNotFound))
}

func TestTokenEndpointErrorsShowNoSecret(t *testing.T) {
	is := is.New(t)
	log := logs(t)
	s := fakes.NewAuthServer(fakes.AuthOptions{ClientID: "app", ClientSecret: "other", RefreshToken: "other", Echo: true})
	t.Cleanup(s.Close)
	b, _ := binderOver(t, oauthRecord(s, refreshSecret))
	rt, err := b.HTTP(t.Context(), httpConn("api.main", s.URL, ptr("idp")), http.DefaultTransport)
	is.NoErr(err)
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, s.URL, nil)
	is.NoErr(err)
	_, err = rt.RoundTrip(req)
	is.True(err != nil)
	is.True(strings.Contains(err.Error(), "400"))
	noSecret(t, "the error", err.Error())
	noSecret(t, "the logs", log.String())

	// An unreachable endpoint, too.
	s.Close()
	b, _ = binderOver(t, oauthRecord(s, refreshSecret))
	rt, err = b.HTTP(t.Context(), httpConn("api.main", s.URL, ptr("idp")), http.DefaultTransport)
	is.NoErr(err)
	_, err = rt.RoundTrip(req.Clone(t.Context()))
	is.True(err != nil)
	noSecret(t, "the error", err.Error())
}

func TestStaticCredentialsAreRedactedFromErrorBodies(t *testing.T) {
	is := is.New(t)
	s := fakes.NewAuthServer(fakes.AuthOptions{Tokens: []string{"the-right-one"}, Echo: true})
	t.Cleanup(s.Close)
	b, _ := binderOver(t, store.AuthRecord{ID: "cred", Scheme: "bearer", Payload: map[string]any{"token": bearerSecret}})
	rt, err := b.HTTP(t.Context(), httpConn("api.main", s.URL, ptr("cred")), http.DefaultTransport)
	is.NoErr(err)
	status, body := post(t, rt, s.URL)
	is.Equal(status, http.StatusUnauthorized)
	noSecret(t, "the 401 body", body)
	is.True(strings.Contains(body, credentials.Redacted))
}
