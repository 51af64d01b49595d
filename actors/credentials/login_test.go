package credentials_test

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
	"golang.org/x/oauth2"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/credentials"
	"github.com/mcpflow/mcpflow/fakes"
)

// A rotated refresh token of an oauth_refresh_token record is saved to
// the record: a binder started afresh over the store (a restarted server)
// refreshes with it, the one before it refused by then; and the next
// session of the same binder keeps its token, refreshing no more.
func TestARotatedRefreshTokenIsSavedToTheRecord(t *testing.T) {
	is := is.New(t)
	s := fakes.NewAuthServer(fakes.AuthOptions{ClientID: "app", ClientSecret: clientSecret, RefreshToken: refreshSecret, ExpiresIn: 3600, Rotate: true})
	t.Cleanup(s.Close)
	b, st := binderOver(t, oauthRecord(s, refreshSecret))
	b.Records = st
	conn := httpConn("api.main", s.URL, ptr("idp"))
	rt, err := b.HTTP(t.Context(), conn, http.DefaultTransport)
	is.NoErr(err)
	status, _ := post(t, rt, s.URL)
	is.True(status != http.StatusUnauthorized)
	is.Equal(s.Refreshes(), 1)
	rec, err := st.GetAuth(t.Context(), "idp")
	is.NoErr(err)
	rotated := s.Minted()[1]
	is.Equal(rec.Payload["refresh_token"], rotated) // saved

	rt, err = b.HTTP(t.Context(), conn, http.DefaultTransport) // the next session
	is.NoErr(err)
	post(t, rt, s.URL)
	is.Equal(s.Refreshes(), 1) // the saved record is the one its token source serves

	restarted := credentials.NewBinder(credentials.FromStore(st))
	restarted.Records = st
	rt, err = restarted.HTTP(t.Context(), conn, http.DefaultTransport)
	is.NoErr(err)
	status, _ = post(t, rt, s.URL)
	is.True(status != http.StatusUnauthorized)
	is.Equal(s.Refreshes(), 2)
	is.Equal(s.LastGrant().Get("refresh_token"), rotated) // the rotated one, not the first
}

// oauthSource is a source with auth kind oauth reaching s.
func oauthSource(s *fakes.OAuthServer) config.Connection {
	c := httpConn("remote.main", s.URL, nil)
	c.Auth = &config.SourceAuth{Kind: config.AuthOAuth}
	return c
}

// authorize follows a login's authorization URL as a browser would and
// returns the code the redirect brings, without following the redirect.
func authorize(t *testing.T, authURL string) url.Values {
	t.Helper()
	is := is.New(t)
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Get(authURL)
	is.NoErr(err)
	is.NoErr(resp.Body.Close())
	is.Equal(resp.StatusCode, http.StatusFound)
	back, err := url.Parse(resp.Header.Get("Location"))
	is.NoErr(err)
	return back.Query()
}

// An oauth source follows the MCP authorization flow: its first request
// meets a 401, which discovers the authorization server and registers a
// client (a LoginError naming the host); a login with PKCE stores tokens;
// the access token is refreshed before it expires; a refresh refused for
// good ends the login, dropping the tokens from the record.
func TestAnOAuthSourceDiscoversLogsInRefreshesAndEnds(t *testing.T) {
	is := is.New(t)
	s := fakes.NewOAuthServer(fakes.OAuthOptions{Scopes: []string{"mcp:tools"}})
	t.Cleanup(s.Close)
	b, st := binderOver(t)
	b.Records = st
	clk := &clock{now: time.Now()}
	b.Now = clk.Now
	conn := oauthSource(s)
	host := s.AS.Listener.Addr().String()

	rt, err := b.HTTP(t.Context(), conn, http.DefaultTransport)
	is.NoErr(err)
	_, err = get(t, rt, s.URL)
	le, ok := errors.AsType[*credentials.LoginError](err)
	is.True(ok)
	is.Equal(le.Host, host)
	is.True(errors.Is(err, credentials.ErrNeedsLogin))
	is.True(!le.DiscoveryFailed)
	is.Equal(s.Registrations(), 1)
	_, err = b.HTTP(t.Context(), conn, http.DefaultTransport) // the client is known now: a login is what is missing
	is.True(errors.Is(err, credentials.ErrNeedsLogin))

	// A redirect that is not a loopback one is refused.
	verifier := oauth2.GenerateVerifier()
	_, err = b.BeginLogin(t.Context(), conn, "http://example.com:8080/callback", oauth2.S256ChallengeFromVerifier(verifier), "st")
	is.True(errors.Is(err, credentials.ErrLogin))
	redirect := "http://127.0.0.1:45678/callback"
	start, err := b.BeginLogin(t.Context(), conn, redirect, oauth2.S256ChallengeFromVerifier(verifier), "st")
	is.NoErr(err)
	is.Equal(start.Host, host)
	q := authorize(t, start.URL)
	is.Equal(q.Get("state"), "st")
	is.Equal(q.Get("iss"), s.Issuer)
	is.True(errors.Is(b.CompleteLogin(t.Context(), conn, q.Get("code"), oauth2.GenerateVerifier(), redirect), credentials.ErrLogin)) // another verifier
	q = authorize(t, start.URL)
	is.NoErr(b.CompleteLogin(t.Context(), conn, q.Get("code"), verifier, redirect))
	is.Equal(s.Logins(), 1)

	rt, err = b.HTTP(t.Context(), conn, http.DefaultTransport)
	is.NoErr(err)
	status, _ := post(t, rt, s.URL)
	is.Equal(status, http.StatusOK)
	is.Equal(s.Refreshes(), 0) // the login's access token

	clk.advance(59*time.Minute + 30*time.Second) // within a minute of its expiry
	status, _ = post(t, rt, s.URL)
	is.Equal(status, http.StatusOK)
	is.Equal(s.Refreshes(), 1) // refreshed before it expired
	rec, err := st.GetAuth(t.Context(), conn.ID)
	is.NoErr(err)
	live := s.LiveRefreshTokens()
	is.Equal(rec.Payload["refresh_token"], live[0]) // the rotated one, saved

	s.RevokeRefreshTokens()
	clk.advance(time.Hour)
	_, err = get(t, rt, s.URL)
	le, ok = errors.AsType[*credentials.LoginError](err)
	is.True(ok)
	is.True(strings.Contains(le.Error(), "invalid_grant"))
	is.True(strings.Contains(le.Error(), "mcpflow sources login remote.main"))
	rec, err = st.GetAuth(t.Context(), conn.ID)
	is.NoErr(err)
	is.Equal(rec.Payload["refresh_token"], nil) // the dead tokens are dropped
	is.Equal(rec.Payload["access_token"], nil)
	_, err = b.HTTP(t.Context(), conn, http.DefaultTransport)
	is.True(errors.Is(err, credentials.ErrNeedsLogin)) // the next session needs a login too
	for _, tok := range s.Minted() {
		is.True(!strings.Contains(err.Error(), tok))
	}
}

// The access token of an oauth source goes to its resource's origin only:
// a redirect to another origin carries none.
func TestAnOAuthTokenGoesToTheResourceOriginOnly(t *testing.T) {
	is := is.New(t)
	s := fakes.NewOAuthServer(fakes.OAuthOptions{})
	t.Cleanup(s.Close)
	other, last := headerServer(t)
	b, st := binderOver(t)
	b.Records = st
	conn := oauthSource(s)
	rt, err := b.HTTP(t.Context(), conn, http.DefaultTransport)
	is.NoErr(err)
	_, err = get(t, rt, s.URL) // discovery
	is.True(errors.Is(err, credentials.ErrNeedsLogin))
	verifier, redirect := oauth2.GenerateVerifier(), "http://127.0.0.1:45679/callback"
	start, err := b.BeginLogin(t.Context(), conn, redirect, oauth2.S256ChallengeFromVerifier(verifier), "st")
	is.NoErr(err)
	is.NoErr(b.CompleteLogin(t.Context(), conn, authorize(t, start.URL).Get("code"), verifier, redirect))
	rt, err = b.HTTP(t.Context(), conn, http.DefaultTransport)
	is.NoErr(err)

	s.RedirectTo(other.URL + "/mcp")
	client := &http.Client{Transport: rt}
	resp, err := client.Get(s.URL)
	is.NoErr(err)
	is.NoErr(resp.Body.Close())
	is.Equal(resp.StatusCode, http.StatusNoContent)   // the other origin answered
	is.Equal((*last.Load()).Get("Authorization"), "") // without the token
}
